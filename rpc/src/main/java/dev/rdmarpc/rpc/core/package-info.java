/**
 * The RPC core (not exported): request-id matching, timeouts and backpressure on the client side
 * ({@link dev.rdmarpc.rpc.core.ClientCore}, one per connection, whose {@code start} and
 * {@code send} every call method of the API ends in), dispatch on the server side
 * ({@link dev.rdmarpc.rpc.core.ServerCore}), counters and JFR events. Requests and responses are
 * written the same way, by a connection's {@code FrameWriter}: claim, header, payload, attachment,
 * commit or abort. It speaks to transports only through the {@link dev.rdmarpc.rpc.transport} SPI.
 */
package dev.rdmarpc.rpc.core;
