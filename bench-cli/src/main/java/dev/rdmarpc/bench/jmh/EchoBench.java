package dev.rdmarpc.bench.jmh;

import dev.rdmarpc.bench.tls.ThrowawayCertificates;
import dev.rdmarpc.rpc.Method;
import dev.rdmarpc.rpc.ResponseListener;
import dev.rdmarpc.rpc.ResponseView;
import dev.rdmarpc.rpc.RpcClient;
import dev.rdmarpc.rpc.RpcException;
import dev.rdmarpc.rpc.RpcServer;
import dev.rdmarpc.rpc.codec.Codecs;
import dev.rdmarpc.rpc.transport.tls.TlsConfig;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.List;
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
 * An in-process TCP echo over loopback (one server I/O thread, one client I/O thread): the whole
 * round trip of the zero-allocation path ({@code RpcClient.send} + a preallocated listener, a
 * {@code RawHandler} echoing in place), one call at a time and 16 pipelined. {@code -prof gc} counts
 * every thread's allocation, the I/O threads included; expected: 0 B/op for the raw path. The typed
 * {@code String} call is there for contrast (futures and strings allocate).
 *
 * <p>{@code -p tls=true} runs the same calls over TLS 1.3 (the JDK's {@code SSLEngine}, a throwaway CA and
 * server certificate made with keytool at setup), so {@code -prof gc} shows what TLS allocates per call.
 *
 * <p>Loopback round trips on a small, shared machine measure the machine as much as the library;
 * compare with the bench CLI's figures, not with other hosts.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public class EchoBench {
    static final Method<MemorySegment, MemorySegment> RAW_ECHO = Method.raw("echo");
    static final Method<String, String> STRING_ECHO = Method.of("stringEcho", Codecs.STRING, Codecs.STRING);
    static final int PIPELINE = 16;

    @Param({"128"})
    public int size;

    /** Whether the connection is TLS 1.3 (default false: plain TCP, the zero-allocation figure). */
    @Param({"false"})
    public boolean tls;

    private RpcServer server;
    private RpcClient client;
    private Arena arena;
    private MemorySegment payload;
    private String text;
    private ThrowawayCertificates certificates;
    private final Waiter waiter = new Waiter();

    /** Counts responses; the benchmark thread spins on the count (no lock, no allocation). */
    static final class Waiter implements ResponseListener {
        volatile long completed;
        volatile RpcException error;

        @Override
        public void onResponse(long tag, ResponseView response) {
            completed++; // single writer: the client's I/O thread
        }

        @Override
        public void onError(long tag, RpcException e) {
            error = e;
            completed++;
        }

        void await(long target) {
            while (completed < target) {
                Thread.onSpinWait();
            }
            if (error != null) {
                throw error;
            }
        }
    }

    @Setup(Level.Trial)
    public void setup() {
        TlsConfig serverTls = null;
        TlsConfig clientTls = null;
        if (tls) {
            certificates = ThrowawayCertificates.create(List.of(InetAddress.getLoopbackAddress()));
            serverTls = TlsConfig.forServer(certificates.serverCertificateChain(), certificates.serverPrivateKey());
            clientTls = TlsConfig.forClient().trust(certificates.caCertificate());
        }
        TlsConfig serving = serverTls;
        TlsConfig calling = clientTls;
        server = RpcServer.builder().bind(new InetSocketAddress("127.0.0.1", 0)).tcp(cfg -> cfg.loop(l -> l.ioThreads(1)).tls(serving))
                .registerRaw(RAW_ECHO, c -> c.respond(c.buffer(), c.payloadOffset(), c.payloadLength()))
                .register(STRING_ECHO, (ctx, s) -> s)
                .start();
        client = tls ? RpcClient.builder().address(server.address()).tcp(cfg -> cfg.tls(calling)).connect()
                : RpcClient.connect(server.address());
        arena = Arena.ofShared();
        payload = arena.allocate(size).fill((byte) 1);
        text = "t".repeat(size);
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        client.close();
        server.close();
        arena.close();
        if (certificates != null) {
            certificates.close();
        }
    }

    /** One zero-allocation round trip at a time. */
    @Benchmark
    public long rawRoundTrip() {
        return calls(client, RAW_ECHO, payload, waiter, 1);
    }

    /** 16 zero-allocation calls in flight, then wait for all: time per call. */
    @Benchmark
    @OperationsPerInvocation(PIPELINE)
    public long rawPipelined() {
        return calls(client, RAW_ECHO, payload, waiter, PIPELINE);
    }

    /** Sends {@code n} calls (retrying while back-pressured), then waits for their responses. */
    static long calls(RpcClient client, Method<MemorySegment, MemorySegment> method, MemorySegment payload, Waiter waiter,
                      int n) {
        long target = waiter.completed + n;
        for (int i = 0; i < n; i++) {
            while (!client.send(method, payload, waiter, i)) {
                Thread.onSpinWait();
            }
        }
        waiter.await(target);
        return target;
    }

    /** For contrast: a typed, blocking String call (future, strings). */
    @Benchmark
    public String typedStringCall() {
        return client.call(STRING_ECHO, text);
    }
}
