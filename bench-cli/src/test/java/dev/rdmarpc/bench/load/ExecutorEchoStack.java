package dev.rdmarpc.bench.load;

import java.net.InetSocketAddress;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A test stack without a network: each connection answers on its own single thread (standing in for an
 * I/O thread) after an optional delay, and can be told to fail every n-th call or to answer with the
 * wrong length; its first connection can be made slower than the rest. Counts what it was asked to do, so
 * tests can check the driver.
 */
final class ExecutorEchoStack implements EchoStack {
    final AtomicLong calls = new AtomicLong();
    final AtomicInteger maxOutstanding = new AtomicInteger();
    final AtomicInteger outstanding = new AtomicInteger();
    final AtomicInteger connections = new AtomicInteger();
    final AtomicInteger closedConnections = new AtomicInteger();
    final AtomicInteger callers = new AtomicInteger();
    final AtomicInteger closedCallers = new AtomicInteger();
    volatile long delayMicros;
    /** CPU time each answer burns on the answering thread (its own CPU clock, so preemption does not shorten it). */
    volatile long cpuMicros;
    /** When positive, the delay of the first connection made instead of {@link #delayMicros}. */
    volatile long firstConnectionDelayMicros;
    volatile int failEvery;
    volatile boolean wrongLength;

    @Override
    public String name() {
        return "test-stack";
    }

    @Override
    public String describe(StackOptions options) {
        return "in-process executor";
    }

    @Override
    public EchoServer startServer(InetSocketAddress bindAddress, StackOptions options) {
        throw new UnsupportedOperationException("not needed by these tests");
    }

    @Override
    public EchoConnection connect(InetSocketAddress serverAddress, StackOptions options) {
        boolean first = connections.incrementAndGet() == 1;
        ExecutorService io = Executors.newSingleThreadExecutor();
        return new EchoConnection() {
            @Override
            public EchoCaller newCaller(int requestBytes, int responseBytes) {
                callers.incrementAndGet();
                return new EchoCaller() {
                    @Override
                    public void call(CallListener listener) {
                        long n = calls.incrementAndGet();
                        int now = outstanding.incrementAndGet();
                        maxOutstanding.accumulateAndGet(now, Math::max);
                        io.execute(() -> {
                            long d = first && firstConnectionDelayMicros > 0 ? firstConnectionDelayMicros : delayMicros;
                            if (d > 0) {
                                long end = System.nanoTime() + d * 1000;
                                while (System.nanoTime() < end) {
                                    Thread.onSpinWait();
                                }
                            }
                            if (cpuMicros > 0) {
                                java.lang.management.ThreadMXBean t = java.lang.management.ManagementFactory.getThreadMXBean();
                                long until = t.getCurrentThreadCpuTime() + cpuMicros * 1000;
                                while (t.getCurrentThreadCpuTime() < until) {
                                    Thread.onSpinWait();
                                }
                            }
                            outstanding.decrementAndGet();
                            int f = failEvery;
                            if (f > 0 && n % f == 0) {
                                listener.onFailure(new IllegalStateException("injected failure " + n));
                            } else if (wrongLength) {
                                listener.onFailure(new IllegalStateException("answered 3 bytes, expected " + responseBytes));
                            } else {
                                listener.onResponse();
                            }
                        });
                    }

                    @Override
                    public void close() {
                        closedCallers.incrementAndGet();
                    }
                };
            }

            @Override
            public void close() {
                closedConnections.incrementAndGet();
                io.shutdown();
                try {
                    io.awaitTermination(5, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        };
    }
}
