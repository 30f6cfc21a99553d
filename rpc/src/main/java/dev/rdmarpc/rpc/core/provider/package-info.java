/**
 * The RPC core's {@link dev.rdmarpc.rpc.RpcProvider}: how the API package's builders reach the client
 * ({@link dev.rdmarpc.rpc.core.client}) and server ({@link dev.rdmarpc.rpc.core.server}) sides
 * without depending on them.
 */
package dev.rdmarpc.rpc.core.provider;
