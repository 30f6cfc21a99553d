package dev.rdmarpc.bench.jmh;

import dev.rdmarpc.rpc.DeferredCall;
import dev.rdmarpc.rpc.Method;
import dev.rdmarpc.rpc.RawCall;
import dev.rdmarpc.rpc.RpcClient;
import dev.rdmarpc.rpc.RpcServer;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
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
 * {@link EchoBench}'s zero-allocation echo, answered by the server from another thread: the raw
 * handler copies the request into a slot of its own and takes the call over ({@link RawCall#defer()});
 * a second thread answers it through the {@link DeferredCall}. {@code -prof gc} counts every
 * thread's allocation: expected 0 B/op, as for the inline raw echo.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public class DeferredEchoBench {
    static final Method<MemorySegment, MemorySegment> DEFERRED_ECHO = Method.raw("deferredEcho");

    @Param({"128"})
    public int size;

    private RpcServer server;
    private RpcClient client;
    private Arena arena;
    private MemorySegment payload;
    private Answerer answerer;
    private final EchoBench.Waiter waiter = new EchoBench.Waiter();

    /**
     * The answering thread: a single-producer, single-consumer ring (the server's I/O thread in,
     * this thread out) of deferred calls and copies of their requests. It spins a little when idle,
     * then parks until the handler unparks it. Nothing allocates.
     */
    static final class Answerer implements Runnable {
        private static final int SLOTS = 64;
        private final DeferredCall[] calls = new DeferredCall[SLOTS];
        private final MemorySegment[] requests = new MemorySegment[SLOTS];
        private final int[] lengths = new int[SLOTS];
        private volatile long produced;
        private volatile long consumed;
        private volatile boolean running = true;
        private final Thread thread;

        Answerer(Arena arena, int size) {
            for (int i = 0; i < SLOTS; i++) {
                requests[i] = arena.allocate(size);
            }
            thread = Thread.ofPlatform().daemon().name("deferred-answerer").start(this); // last: the fields are set
        }

        /** The raw handler, on the server's I/O thread. */
        void take(RawCall call) {
            long p = produced;
            while (p - consumed >= SLOTS) {
                Thread.onSpinWait(); // never with one call in flight
            }
            int i = (int) (p & (SLOTS - 1));
            MemorySegment.copy(call.buffer(), call.payloadOffset(), requests[i], 0, call.payloadLength());
            lengths[i] = call.payloadLength();
            calls[i] = call.defer();
            produced = p + 1;
            LockSupport.unpark(thread);
        }

        @Override
        public void run() {
            int idle = 0;
            while (running) {
                long c = consumed;
                if (c == produced) {
                    if (++idle < 100) {
                        Thread.onSpinWait();
                    } else {
                        LockSupport.park(this);
                    }
                    continue;
                }
                idle = 0;
                int i = (int) (c & (SLOTS - 1));
                DeferredCall d = calls[i];
                calls[i] = null;
                d.respond(requests[i], 0, lengths[i]);
                consumed = c + 1;
            }
        }

        void stop() throws InterruptedException {
            running = false;
            LockSupport.unpark(thread);
            thread.join(1000);
        }
    }

    @Setup(Level.Trial)
    public void setup() {
        arena = Arena.ofShared();
        answerer = new Answerer(arena, size);
        server = RpcServer.builder().bind(new InetSocketAddress("127.0.0.1", 0)).tcp(cfg -> cfg.loop(l -> l.ioThreads(1)))
                .registerRaw(DEFERRED_ECHO, answerer::take)
                .start();
        client = RpcClient.connect(server.address());
        payload = arena.allocate(size).fill((byte) 1);
    }

    @TearDown(Level.Trial)
    public void tearDown() throws InterruptedException {
        client.close();
        server.close();
        answerer.stop();
        arena.close();
    }

    /** One round trip at a time. */
    @Benchmark
    public long rawDeferredRoundTrip() {
        return EchoBench.calls(client, DEFERRED_ECHO, payload, waiter, 1);
    }

    /** 16 calls in flight, then wait for all: time per call. */
    @Benchmark
    @OperationsPerInvocation(EchoBench.PIPELINE)
    public long rawDeferredPipelined() {
        return EchoBench.calls(client, DEFERRED_ECHO, payload, waiter, EchoBench.PIPELINE);
    }
}
