/**
 * The RPC API: define {@link dev.rdmarpc.rpc.Method}s with {@link dev.rdmarpc.rpc.codec.Codec}s,
 * serve them with an {@link dev.rdmarpc.rpc.RpcServer}, call them through an
 * {@link dev.rdmarpc.rpc.RpcChannel}: an {@link dev.rdmarpc.rpc.RpcClient} (one connection) or the
 * {@link dev.rdmarpc.rpc.RpcClientPool#channel channel} an {@link dev.rdmarpc.rpc.RpcClientPool}
 * gives for one endpoint (its connections to it, reconnecting). Both have the same call methods:
 * blocking, asynchronous, and the zero-allocation {@code send}. Failures are
 * {@link dev.rdmarpc.rpc.RpcException}s with a {@link dev.rdmarpc.rpc.Status}.
 * {@snippet :
 * RpcServer server = RpcServer.builder().tcp(cfg -> cfg.loop(l -> l.ioThreads(2))).register(ECHO, (ctx, s) -> s).start();
 * RpcChannel channel = RpcClient.builder().address(server.address()).defaultTimeout(Duration.ofSeconds(5)).connect();
 * String r = channel.call(ECHO, "hello");
 * }
 *
 * <p>A server method runs one of four ways: inline on the I/O thread ({@code register}), on a
 * virtual thread ({@code registerBlocking}), answered when its {@link java.util.concurrent.CompletableFuture}
 * completes ({@code registerAsync}, an {@link dev.rdmarpc.rpc.AsyncHandler}), or raw over the
 * received bytes ({@code registerRaw}, a {@link dev.rdmarpc.rpc.RawHandler}, which may
 * {@link dev.rdmarpc.rpc.RawCall#defer() defer} its answer to another thread without allocating).
 * Call control: a call's future's {@code cancel} reaches the server
 * ({@link dev.rdmarpc.rpc.CallContext#isCancelled()}, {@link dev.rdmarpc.rpc.CallContext#onCancel}),
 * and every call's timeout travels with it ({@link dev.rdmarpc.rpc.CallContext#remainingNanos()}),
 * inherited by the calls a handler makes.
 *
 * <p>The builders share their settings: {@link dev.rdmarpc.rpc.RpcBuilder} the maximum frame length
 * and the transport, {@link dev.rdmarpc.rpc.ClientBuilder} those of a connection to a server (for a
 * client and a pool alike). A builder chooses its transport one way: {@code tcp(cfg -> ...)}
 * configures the {@link dev.rdmarpc.rpc.transport.tcp.TcpTransport} it creates (the default),
 * {@code rdma(...)} creates an RDMA transport, {@code transport(shared)} uses any
 * {@link dev.rdmarpc.rpc.transport.Transport} the caller owns. System properties
 * ({@code rdmarpc.tcp.*}, {@code rdmarpc.rdma.*}, the RDMA transport's groups as
 * {@code rdmarpc.rdma.<group>.<setting>}) are defaults that a builder's settings override.
 *
 * <p>This package is the API and depends on no implementation package: the client, pool and server
 * run on the implementation this module provides through {@link dev.rdmarpc.rpc.RpcProvider} (found
 * with {@link java.util.ServiceLoader}), which applications neither call nor implement.
 */
package dev.rdmarpc.rpc;
