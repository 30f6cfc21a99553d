/**
 * The TCP transport: NIO selector event loops (no Netty), non-blocking {@code SocketChannel}s with
 * {@code TCP_NODELAY}, reads into pooled native chunks through cached {@code ByteBuffer} views, many
 * frames decoded per read, writes coalesced and flushed once per event-loop iteration.
 *
 * <p>The shape: {@code TcpTransport} (settings, listeners, loops) runs each connection on a
 * {@code TcpLoop}, the selector poller of the shared {@code transport.loop.IoLoop}. A
 * {@code TcpConnection} is the state of one socket (open, closing with a {@code LastWord}, closed),
 * its ticks ({@code ReceiveTimers}: frame-read and idle timeouts, pings) and read pausing; it
 * delegates receiving to a {@code TcpReceiver} (one pooled chunk, frames handed out in place, larger
 * ones completed in the shared {@code transport.frame.FrameReassembler}) and sending to a
 * {@code TcpSendRing} (claim/commit under a send lock, one gathering write per flush, in-place
 * payloads, one partially ready frame: {@code PartialFrame}) over its {@code SendEntries}.
 * {@code ConnectionCounts} bounds an accepted connection's address (connections and large-frame bytes) by the {@code transport.ConnectionLimits}.
 * The connection's send methods of the {@code Connection} contract are the ring's
 * ({@code RingConnection}); its pings and pongs are {@code Liveness}'s. Its socket I/O goes through a
 * {@code Wire}: {@code PlainWire}, the socket itself, or {@code TlsWire}, TLS over it with the JDK's
 * {@code SSLEngine} ({@code transport.tls.TlsConfig}), which also keeps the handshake's deadline and its outcome.
 */
package dev.rdmarpc.rpc.transport.tcp;
