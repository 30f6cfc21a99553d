/**
 * The transport SPI: what the RPC core needs from a byte mover. A {@link dev.rdmarpc.rpc.transport.Transport}
 * listens and connects; each {@link dev.rdmarpc.rpc.transport.Connection} delivers whole, validated
 * frames to a {@link dev.rdmarpc.rpc.transport.FrameHandler} on its I/O thread and takes outgoing
 * frames through claim/commit (encode in place, then publish; Aeron's {@code tryClaim}).
 *
 * <p>What both transports share is here too: how their I/O threads wait and tick
 * ({@link dev.rdmarpc.rpc.transport.LoopSettings}, with its {@link dev.rdmarpc.rpc.transport.IdleStrategy}),
 * declared once, held by each transport's configuration.
 *
 * <p>Layering: transports ({@code ...transport.tcp}, {@code ...transport.rdma}) depend on this
 * package, {@code ...buffer} and {@code ...protocol}; the core never depends on a transport.
 */
package dev.rdmarpc.rpc.transport;
