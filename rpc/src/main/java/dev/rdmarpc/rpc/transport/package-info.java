/**
 * The transport SPI: what the RPC core needs from a byte mover. A {@link dev.rdmarpc.rpc.transport.Transport}
 * listens and connects; each {@link dev.rdmarpc.rpc.transport.Connection} delivers whole, validated
 * frames to a {@link dev.rdmarpc.rpc.transport.FrameHandler} on its I/O thread and takes outgoing
 * frames through claim/commit (encode in place, then publish; Aeron's {@code tryClaim}).
 *
 * <p>Layering: transports ({@code ...transport.tcp}, later {@code ...transport.rdma}) depend on this
 * package, {@code ...buffer} and {@code ...protocol}; the core never depends on a transport.
 */
package dev.rdmarpc.rpc.transport;
