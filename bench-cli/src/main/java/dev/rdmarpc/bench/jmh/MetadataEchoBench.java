package dev.rdmarpc.bench.jmh;

import dev.rdmarpc.rpc.CallContext;
import dev.rdmarpc.rpc.Metadata;
import dev.rdmarpc.rpc.MetadataView;
import dev.rdmarpc.rpc.Method;
import dev.rdmarpc.rpc.RawCall;
import dev.rdmarpc.rpc.ResponseListener;
import dev.rdmarpc.rpc.ResponseView;
import dev.rdmarpc.rpc.RpcClient;
import dev.rdmarpc.rpc.RpcException;
import dev.rdmarpc.rpc.RpcServer;
import dev.rdmarpc.rpc.ServerInterceptor;
import dev.rdmarpc.rpc.Status;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * {@link EchoBench}'s zero-allocation echo with metadata both ways (issue 19, point 3): the client
 * sends a prepared {@link Metadata} (a trace id and a binary token) with each raw call, a server
 * interceptor checks the token in place ({@link RawCall#requestMetadataView()}), the raw handler
 * reads the trace id's length in place and answers with a prepared response metadata, and the
 * client's listener reads that in place ({@link ResponseView#metadata()}). {@code -prof gc} counts
 * every thread's allocation: expected 0 B/op, as for the raw echo without metadata.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public class MetadataEchoBench {
    static final Method<MemorySegment, MemorySegment> ECHO = Method.raw("metadataEcho");
    private static final byte[] TOKEN = {1, 2, 3, 4, 5, 6, 7, 8};
    private static final Metadata REQUEST = Metadata.of("trace-id", "4bf92f3577b34da6").with("token-bin", TOKEN);
    private static final Metadata RESPONSE = Metadata.of("served-by", "bench");

    @Param({"128"})
    public int size;

    private RpcServer server;
    private RpcClient client;
    private Arena arena;
    private MemorySegment payload;
    private final Listener listener = new Listener();

    /** Counts responses and reads their metadata in place. */
    static final class Listener implements ResponseListener {
        volatile long completed;
        volatile RpcException error;
        long servedByBytes;

        @Override
        public void onResponse(long tag, ResponseView response) {
            servedByBytes += response.metadata().valueLength("served-by");
            completed++; // single writer: the client's I/O thread
        }

        @Override
        public void onError(long tag, RpcException e) {
            error = e;
            completed++;
        }
    }

    /** Lets a call in only with the right token, compared in place. */
    static final class TokenCheck implements ServerInterceptor {
        @Override
        public void beforeCall(CallContext call) {
            if (!(call instanceof RawCall raw) || !raw.requestMetadataView().valueEquals("token-bin", TOKEN)) {
                throw new RpcException(Status.UNAUTHENTICATED, "bad token");
            }
        }
    }

    @Setup(Level.Trial)
    public void setup() {
        server = RpcServer.builder().bind(new InetSocketAddress("127.0.0.1", 0)).tcp(cfg -> cfg.loop(l -> l.ioThreads(1)))
                .intercept(new TokenCheck())
                .registerRaw(ECHO, c -> {
                    MetadataView md = c.requestMetadataView();
                    if (md.valueLength("trace-id") != 16) {
                        c.respondError(Status.PROTOCOL_ERROR, "no trace id");
                        return;
                    }
                    c.responseMetadata(RESPONSE);
                    c.respond(c.buffer(), c.payloadOffset(), c.payloadLength());
                })
                .start();
        client = RpcClient.connect(server.address());
        arena = Arena.ofShared();
        payload = arena.allocate(size).fill((byte) 1);
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        client.close();
        server.close();
        arena.close();
    }

    private long calls(int n) {
        long target = listener.completed + n;
        for (int i = 0; i < n; i++) {
            while (!client.send(ECHO, payload, REQUEST, MemorySegment.NULL, 0, listener, i)) {
                Thread.onSpinWait();
            }
        }
        while (listener.completed < target) {
            Thread.onSpinWait();
        }
        if (listener.error != null) {
            throw listener.error;
        }
        return target;
    }

    /** One round trip with metadata both ways at a time. */
    @Benchmark
    public long rawMetadataRoundTrip() {
        return calls(1);
    }

    /** 16 calls in flight, then wait for all: time per call. */
    @Benchmark
    @OperationsPerInvocation(EchoBench.PIPELINE)
    public long rawMetadataPipelined() {
        return calls(EchoBench.PIPELINE);
    }
}
