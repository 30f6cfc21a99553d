/**
 * The TCP transport: NIO selector event loops (no Netty), non-blocking {@code SocketChannel}s with
 * {@code TCP_NODELAY}, reads into pooled native chunks through cached {@code ByteBuffer} views, many
 * frames decoded per read, writes coalesced and flushed once per event-loop iteration.
 *
 * <p>The shape: {@code TcpTransport} (settings, listeners, loops) runs each connection on a
 * {@code TcpLoop}, the selector poller of the shared {@code transport.loop.IoLoop}; its
 * {@code TcpListener} accepts. The connection itself, receiving, sending, timers and TLS are
 * {@code transport.stream}'s, shared with the RDMA transport's hello connections; here a socket is a
 * {@code NioSocket}, a channel under the loop's selector.
 */
package dev.rdmarpc.rpc.transport.tcp;
