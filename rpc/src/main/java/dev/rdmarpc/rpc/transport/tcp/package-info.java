/**
 * The TCP transport: NIO selector event loops (no Netty), non-blocking {@code SocketChannel}s with
 * {@code TCP_NODELAY}, reads into pooled native chunks through cached {@code ByteBuffer} views, many
 * frames decoded per read, writes coalesced and flushed once per event-loop iteration.
 */
package dev.rdmarpc.rpc.transport.tcp;
