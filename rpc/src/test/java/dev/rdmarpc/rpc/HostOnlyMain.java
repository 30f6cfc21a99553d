package dev.rdmarpc.rpc;

import dev.rdmarpc.rpc.codec.Codecs;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Run in a fresh JVM by {@code dev.rdmarpc.rpc.gpu.NoCudaTest}: a loopback RPC over TCP with host
 * attachments (request, response, and a provided response buffer), then reports whether libcuda is
 * mapped. Prints "host attachments ok" and "libcuda mapped: false|true"; exits 1 on a wrong answer.
 */
public final class HostOnlyMain {
    private HostOnlyMain() {
    }

    public static void main(String[] args) throws Exception {
        Method<String, String> echo = Method.of("echo", Codecs.STRING, Codecs.STRING);
        try (Arena arena = Arena.ofShared();
             RpcServer server = RpcServer.builder().bind(new InetSocketAddress("127.0.0.1", 0)).tcp(cfg -> cfg.loop(l -> l.ioThreads(1)))
                     .register(echo, (ctx, req) -> {
                         ctx.responseAttachment(ctx.requestAttachment());
                         return req + ctx.requestAttachment().deviceId();
                     }).start();
             RpcClient client = RpcClient.connect(server.address())) {
            MemorySegment req = arena.allocate(100_000);
            for (long i = 0; i < req.byteSize(); i++) {
                req.set(java.lang.foreign.ValueLayout.JAVA_BYTE, i, (byte) i);
            }
            MemorySegment into = arena.allocate(100_000);
            Reply<String> r = client.exchange(echo, "x", CallOptions.DEFAULT.withAttachment(Attachment.of(req))
                    .withResponseAttachment(Attachment.of(into)));
            if (!r.value().equals("x-1") || into.mismatch(req) != -1 || r.attachment().deviceId() != -1) {
                System.out.println("wrong answer: " + r);
                System.exit(1);
            }
        }
        System.out.println("host attachments ok");
        boolean mapped = Files.readString(Path.of("/proc/self/maps")).contains("libcuda");
        System.out.println("libcuda mapped: " + mapped);
    }
}
