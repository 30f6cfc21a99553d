/**
 * The RPC core (not exported), in three packages: the client side
 * ({@link dev.rdmarpc.rpc.core.client}: request-id matching, timeouts and backpressure, one
 * {@link dev.rdmarpc.rpc.core.client.ClientCore} per connection, whose {@code start} and {@code send}
 * every call method of the API ends in), the server side ({@link dev.rdmarpc.rpc.core.server}:
 * dispatch to the handlers, {@link dev.rdmarpc.rpc.core.server.ServerCore}), and here what both use:
 * counters and JFR events, the stream flow control, the deadline a handler's calls inherit, and the
 * one way requests and responses are written, a connection's {@link dev.rdmarpc.rpc.core.FrameWriter}:
 * claim, header, payload, attachment, commit or abort. It speaks to transports only through the
 * {@link dev.rdmarpc.rpc.transport} SPI, and nothing here depends on the client or server package.
 *
 * <p>Of the API package it uses what a call is made of ({@code Metadata}, {@code Status},
 * {@code Method}, {@code RpcException}, the handler and listener interfaces), never the entry points
 * that build and drive it ({@code RpcClient}, {@code RpcClientPool}, {@code RpcServer}, their builders
 * and their call-start path): the two packages name each other, their classes form no cycle.
 */
package dev.rdmarpc.rpc.core;
