/**
 * The RPC core (not exported), in four packages: the client side
 * ({@link dev.rdmarpc.rpc.core.client}: request-id matching, timeouts and backpressure, one
 * {@link dev.rdmarpc.rpc.core.client.ClientCore} per connection, whose {@code start} and {@code send}
 * every call method of the API ends in), the server side ({@link dev.rdmarpc.rpc.core.server}:
 * dispatch to the handlers, {@link dev.rdmarpc.rpc.core.server.ServerCore}), and here what both use:
 * counters and JFR events, the stream flow control, the deadline a handler's calls inherit, and the
 * one way requests and responses are written, a connection's {@link dev.rdmarpc.rpc.core.FrameWriter}:
 * claim, header, payload, attachment, commit or abort. It speaks to transports only through the
 * {@link dev.rdmarpc.rpc.transport} SPI, and nothing here depends on the client or server package.
 *
 * <p>The fourth, {@link dev.rdmarpc.rpc.core.provider}, implements the API package's
 * {@link dev.rdmarpc.rpc.RpcProvider}, which the API's builders find as a
 * {@link java.util.ServiceLoader} service: every channel's call-start path (deadlines, picking a
 * connection, trying another, interceptors) and a pool's connections are the client package's. Core
 * uses the API package freely (what a call is made of: {@code Metadata}, {@code Status},
 * {@code Method}, {@code RpcException}, the handler and listener interfaces, {@code RpcChannel});
 * the API package names nothing here, so the two form no package cycle.
 */
package dev.rdmarpc.rpc.core;
