/**
 * The RPC core (not exported): request-id matching, timeouts and backpressure on the client side
 * ({@link dev.rdmarpc.rpc.core.ClientCore}), dispatch on the server side
 * ({@link dev.rdmarpc.rpc.core.ServerCore}), counters and JFR events. It speaks to transports only
 * through the {@link dev.rdmarpc.rpc.transport} SPI.
 */
package dev.rdmarpc.rpc.core;
