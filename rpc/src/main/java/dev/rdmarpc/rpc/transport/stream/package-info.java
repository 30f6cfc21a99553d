/**
 * TCP connections, for both transports: the framed connection over a non-blocking socket that the
 * TCP transport runs on its selector loops and the RDMA transport runs for its hellos (and the plain
 * TCP clients of its port) on its own {@code poll(2)} loops. Internal: not exported.
 *
 * <p>The shape: a {@code TcpConnection} is the state of one socket (open, closing with a
 * {@code LastWord}, closed), its ticks ({@code ReceiveTimers}: frame-read and idle timeouts, pings)
 * and read pausing; it delegates receiving to a {@code TcpReceiver} (one pooled chunk, frames handed
 * out in place, larger ones completed in the shared {@code transport.frame.FrameReassembler}) and
 * sending to a {@code TcpSendRing} (claim/commit under a send lock, one gathering write per flush,
 * in-place payloads, one partially ready frame: {@code PartialFrame}) over its {@code SendEntries}.
 * The connection's send methods of the {@code Connection} contract are the ring's
 * ({@code RingConnection}); its pings and pongs are {@code Liveness}'s. Its socket I/O goes through a
 * {@code Wire}: {@code PlainWire}, the socket itself, or {@code TlsWire}, TLS over it with the JDK's
 * {@code SSLEngine} ({@code transport.tls.TlsConfig}), which also keeps the handshake's deadline and
 * its outcome.
 *
 * <p>What differs by transport sits behind two seams: the {@code StreamSocket} (a NIO channel under a
 * selector in the TCP transport; a {@code PolledStreamSocket} in a {@code transport.loop.SocketPoller}
 * on the RDMA loop) and the {@code SocketGroup}, the connections of one I/O thread with what they
 * need of it (tasks, flushes, ticks, pool, {@code SocketSettings}). A listener counts what it accepts
 * in the transport's {@code ConnectionCounts} against the {@code transport.ConnectionLimits} and sets
 * it up through {@code Acceptance}; {@code PolledListener} is the RDMA loop's listener.
 */
package dev.rdmarpc.rpc.transport.stream;
