package dev.rdmarpc.rpc.transport.rdma;

import dev.rdmarpc.rpc.Method;
import dev.rdmarpc.rpc.RpcServer;
import dev.rdmarpc.rpc.codec.Codecs;
import java.net.InetSocketAddress;

/**
 * An RDMA echo server in a process of its own, for the test that kills its peer: prints
 * {@code PORT <n>} once listening, then serves until killed. {@code hang} never answers in time;
 * {@code big} prints {@code BIG} and answers with 48 MiB (a rendezvous frame the client reads from this
 * process's memory, long enough to read that the test kills this process during it).
 * Uses nothing of JUnit (it runs outside the test framework).
 */
public final class ChildServer {
    static final Method<byte[], byte[]> ECHO = Method.of("echoBytes", Codecs.BYTES, Codecs.BYTES);
    static final Method<byte[], byte[]> HANG = Method.of("hang", Codecs.BYTES, Codecs.BYTES);
    static final Method<byte[], byte[]> BIG = Method.of("big", Codecs.BYTES, Codecs.BYTES);
    /** The length of {@code big}'s answer. */
    static final int BIG_BYTES = 48 << 20;

    private ChildServer() {
    }

    public static void main(String[] args) throws Exception {
        RpcServer server = RpcServer.builder().bind(new InetSocketAddress(args[0], 0))
                .rdma(new RdmaConfig().bufferPool(p -> p.slabSize(4L << 20).maxPooledBytes(64L << 20).maxLargeBytes(128L << 20))
                        .timeouts(t -> t.handshake(java.time.Duration.ofMinutes(2)))
                        .send(s -> s.rendezvousThreshold(RdmaConfig.SUGGESTED_RENDEZVOUS_THRESHOLD)))
                .maxFrameLength(64 << 20)
                .registerBlocking(ECHO, (ctx, req) -> req)
                .registerBlocking(BIG, (ctx, req) -> {
                    System.out.println("BIG");
                    System.out.flush();
                    return new byte[BIG_BYTES];
                })
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
