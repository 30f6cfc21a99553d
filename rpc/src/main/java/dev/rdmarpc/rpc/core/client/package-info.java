/**
 * The client side of a connection: {@link dev.rdmarpc.rpc.core.client.ClientCore} starts calls and
 * streams, the {@code CallTable} holds the outstanding ones (ids, slots,
 * deadlines), the {@code SendRoom} orders the callers waiting for room in
 * the send queue, {@code ClientStreams} opens and writes streams, and the
 * {@code ClientConnection} dispatches what the transport delivers (frames,
 * ticks, the close) on the connection's I/O thread.
 */
package dev.rdmarpc.rpc.core.client;
