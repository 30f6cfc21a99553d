/**
 * Service interfaces: describe a service as a Java interface annotated
 * {@link dev.rdmarpc.rpc.service.RpcService}, one RPC method per abstract method, named
 * {@code serviceName + "/" + methodName} on the wire.
 */
package dev.rdmarpc.rpc.service;
