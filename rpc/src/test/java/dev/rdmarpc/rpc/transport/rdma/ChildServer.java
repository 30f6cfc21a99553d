package dev.rdmarpc.rpc.transport.rdma;

import dev.rdmarpc.rpc.Method;
import dev.rdmarpc.rpc.RpcServer;
import dev.rdmarpc.rpc.codec.Codecs;
import java.net.InetSocketAddress;

/**
 * An RDMA echo server in a process of its own, for the test that kills its peer: prints
 * {@code PORT <n>} once listening, then serves until killed. {@code hang} never answers in time.
 * Uses nothing of JUnit (it runs outside the test framework).
 */
public final class ChildServer {
    static final Method<byte[], byte[]> ECHO = Method.of("echoBytes", Codecs.BYTES, Codecs.BYTES);
    static final Method<byte[], byte[]> HANG = Method.of("hang", Codecs.BYTES, Codecs.BYTES);

    private ChildServer() {
    }

    public static void main(String[] args) throws Exception {
        RpcServer server = RpcServer.builder().bind(new InetSocketAddress(args[0], 0))
                .rdma(new RdmaConfig().bufferPool(p -> p.slabSize(4L << 20).maxPooledBytes(64L << 20).maxLargeBytes(64L << 20))
                        .timeouts(t -> t.handshake(java.time.Duration.ofMinutes(2))))
                .registerBlocking(ECHO, (ctx, req) -> req)
                .registerBlocking(HANG, (ctx, req) -> {
                    System.out.println("HANG");
                    System.out.flush();
                    Thread.sleep(600_000);
                    return req;
                })
                .start();
        System.out.println("PORT " + server.address().getPort());
        System.out.flush();
        Thread.sleep(Long.MAX_VALUE);
    }
}
