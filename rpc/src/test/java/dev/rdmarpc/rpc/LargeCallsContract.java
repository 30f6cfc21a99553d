package dev.rdmarpc.rpc;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.rdmarpc.rpc.codec.Codecs;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Many threads making blocking calls of large messages on one connection, or through a pool: every
 * call succeeds, or fails with OVERLOADED after waiting for room in the send queue; none times out
 * for want of progress; then a small call on the same connection answers at once. It failed before
 * the fix: both sides stopped reading while their own writes backed up, and the connection stayed
 * locked for good (every call TIMEOUT). The race showed in 1 to 3 runs of 3, so each case repeats.
 *
 * <p>Subclassed per transport (TCP on the host, RDMA in the Soft-RoCE VM).
 */
public abstract class LargeCallsContract {
    /** Echoes the request's bytes, on the server's I/O thread. */
    public static final Method<byte[], byte[]> ECHO_BYTES = Method.of("echoBytes", Codecs.BYTES, Codecs.BYTES);
    /** Echoes a string, on the I/O thread. */
    public static final Method<String, String> ECHO = Method.of("echo", Codecs.STRING, Codecs.STRING);

    /** @return a server builder bound where the transport needs it, with {@link #ECHO_BYTES} and {@link #ECHO} */
    protected abstract RpcServer startServer();

    /** @return a client of this transport connected to {@code server} */
    protected abstract RpcClient connect(RpcServer server);

    /** @return a pool of this transport */
    protected abstract RpcClientPool pool();

    /** @return the timeout of each large call: generous, since a timeout is what the test looks for */
    protected abstract Duration callTimeout();

    /** @return the longest the small call after a burst may take */
    protected Duration smallCallTimeout() {
        return Duration.ofSeconds(2);
    }

    protected static RpcServer.Builder echoServer(RpcServer.Builder b) {
        return b.register(ECHO_BYTES, (ctx, req) -> req).register(ECHO, (ctx, s) -> s);
    }

    /** One case: {@code threads} threads, each making {@code callsPerThread} blocking calls of {@code size} bytes. */
    protected void burst(Caller caller, int size, int threads, int callsPerThread) throws Exception {
        Map<String, AtomicInteger> outcomes = new ConcurrentHashMap<>();
        AtomicReference<Throwable> wrong = new AtomicReference<>();
        long timeoutNanos = callTimeout().toNanos();
        List<Thread> workers = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            int id = t;
            workers.add(Thread.ofPlatform().name("caller-" + t).start(() -> {
                for (int i = 0; i < callsPerThread; i++) {
                    byte[] request = new byte[size];
                    request[0] = (byte) id;
                    request[size / 2] = (byte) i;
                    request[size - 1] = (byte) (id ^ 0x5a);
                    long start = System.nanoTime();
                    try {
                        byte[] response = caller.call(request, callTimeout());
                        if (response.length != size || response[0] != request[0] || response[size / 2] != request[size / 2]
                                || response[size - 1] != request[size - 1]) {
                            wrong.compareAndSet(null, new AssertionError("wrong echo of " + size + " bytes"));
                        }
                        outcomes.computeIfAbsent("OK", k -> new AtomicInteger()).incrementAndGet();
                    } catch (RpcException e) {
                        outcomes.computeIfAbsent(e.status().name(), k -> new AtomicInteger()).incrementAndGet();
                        long took = System.nanoTime() - start;
                        if (e.status() != Status.OVERLOADED) {
                            wrong.compareAndSet(null, new AssertionError("a call failed with " + e.status()
                                    + " after " + TimeUnit.NANOSECONDS.toMillis(took) + " ms", e));
                        } else if (took > timeoutNanos + TimeUnit.SECONDS.toNanos(2)) {
                            wrong.compareAndSet(null, new AssertionError("OVERLOADED only after "
                                    + TimeUnit.NANOSECONDS.toMillis(took) + " ms", e));
                        }
                    } catch (Throwable e) {
                        wrong.compareAndSet(null, e);
                    }
                }
            }));
        }
        long joinDeadline = System.nanoTime() + timeoutNanos * callsPerThread + TimeUnit.SECONDS.toNanos(30);
        for (Thread w : workers) {
            w.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(joinDeadline - System.nanoTime())));
            if (w.isAlive()) {
                fail(w.getName() + " still waiting: the connection is stuck (" + new TreeMap<>(outcomes) + ")");
            }
        }
        String summary = size + " B x " + threads + " threads x " + callsPerThread + ": " + new TreeMap<>(outcomes);
        if (wrong.get() != null) {
            throw new AssertionError(summary, wrong.get());
        }
        assertTrue(outcomes.containsKey("OK"), "no call succeeded: " + summary);
        long start = System.nanoTime();
        assertEquals("after", caller.small("after", smallCallTimeout()), summary);
        long took = System.nanoTime() - start;
        assertTrue(took < smallCallTimeout().toNanos(), "small call took " + took / 1000 + " us after " + summary);
        System.out.println(getClass().getSimpleName() + ": " + summary + ", small call after it " + took / 1000 + " us");
    }

    /** The way calls are made: one client, or a pool. */
    protected interface Caller {
        byte[] call(byte[] request, Duration timeout);

        String small(String s, Duration timeout);

        static Caller of(RpcClient client) {
            return new Caller() {
                @Override
                public byte[] call(byte[] request, Duration timeout) {
                    return client.call(ECHO_BYTES, request, timeout);
                }

                @Override
                public String small(String s, Duration timeout) {
                    return client.call(ECHO, s, timeout);
                }
            };
        }

        static Caller of(RpcClientPool pool, InetSocketAddress endpoint) {
            return new Caller() {
                @Override
                public byte[] call(byte[] request, Duration timeout) {
                    return pool.channel(endpoint).call(ECHO_BYTES, request, CallOptions.DEFAULT.withTimeout(timeout));
                }

                @Override
                public String small(String s, Duration timeout) {
                    return pool.channel(endpoint).call(ECHO, s, CallOptions.DEFAULT.withTimeout(timeout));
                }
            };
        }
    }

    /** Runs {@code cases} ({size, threads, callsPerThread}) {@code repeats} times each, on one client and through one pool. */
    protected void runCases(int[][] cases, int repeats) throws Exception {
        try (RpcServer server = startServer()) {
            try (RpcClient client = connect(server)) {
                for (int r = 0; r < repeats; r++) {
                    for (int[] c : cases) {
                        burst(Caller.of(client), c[0], c[1], c[2]);
                    }
                }
                assertTrue(client.isOpen(), "the client's connection closed");
            }
            try (RpcClientPool pool = pool()) {
                for (int r = 0; r < repeats; r++) {
                    for (int[] c : cases) {
                        burst(Caller.of(pool, server.address()), c[0], c[1], c[2]);
                    }
                }
            }
        }
    }
}
