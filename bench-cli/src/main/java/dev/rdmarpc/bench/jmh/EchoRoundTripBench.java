package dev.rdmarpc.bench.jmh;

import dev.rdmarpc.rpc.Method;
import dev.rdmarpc.rpc.ResponseListener;
import dev.rdmarpc.rpc.ResponseView;
import dev.rdmarpc.rpc.RpcClient;
import dev.rdmarpc.rpc.RpcException;
import dev.rdmarpc.rpc.RpcServer;
import dev.rdmarpc.rpc.codec.Codecs;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * One echo round trip over TCP loopback inside this JVM (server and client each with one I/O thread):
 * 128 bytes through the zero-allocation path ({@link RpcClient#send} with a preallocated listener, a
 * raw handler on the server) and through the typed blocking path ({@code byte[]} codec,
 * {@link RpcClient#call}). JMH's {@code -prof gc} counts the allocation of every thread, so its
 * {@code gc.alloc.rate.norm} is the whole round trip's, client and server together.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public class EchoRoundTripBench {
    private static final Method<MemorySegment, MemorySegment> ECHO = Method.raw("jmh.echo");
    private static final Method<byte[], byte[]> ECHO_BYTES = Method.of("jmh.echoBytes", Codecs.BYTES, Codecs.BYTES);

    private RpcServer server;
    private RpcClient client;
    private Arena arena;
    private MemorySegment payload;
    private byte[] bytes;
    private final Waiter waiter = new Waiter();

    /** The preallocated listener: the benchmark thread waits on its flag. */
    static final class Waiter implements ResponseListener {
        volatile boolean done;
        volatile int length;
        volatile RpcException error;

        @Override
        public void onResponse(long tag, ResponseView response) {
            length = response.payloadLength();
            done = true;
        }

        @Override
        public void onError(long tag, RpcException e) {
            error = e;
            done = true;
        }
    }

    @Setup(Level.Trial)
    public void setUp() {
        server = RpcServer.builder()
                .bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0))
                .ioThreads(1)
                .registerRaw(ECHO, call -> call.respond(call.buffer(), call.payloadOffset(), call.payloadLength()))
                .register(ECHO_BYTES, (ctx, request) -> request)
                .start();
        client = RpcClient.builder().address(server.address()).ioThreads(1).connect();
        arena = Arena.ofShared();
        payload = arena.allocate(128);
        bytes = new byte[128];
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        client.close();
        server.shutdown(Duration.ofSeconds(5));
        arena.close();
    }

    /** Zero-allocation path: send, then wait (spinning politely) for the preallocated listener. */
    @Benchmark
    public int sendRaw128() {
        Waiter w = waiter;
        w.done = false;
        if (!client.send(ECHO, payload, w, 0L)) {
            throw new IllegalStateException("back-pressured with one call outstanding");
        }
        while (!w.done) {
            Thread.yield();
        }
        if (w.error != null) {
            throw w.error;
        }
        return w.length;
    }

    /** Typed path: byte[] in, byte[] out, the caller's thread blocked until the response. */
    @Benchmark
    public byte[] callBytes128() {
        return client.call(ECHO_BYTES, bytes);
    }
}
