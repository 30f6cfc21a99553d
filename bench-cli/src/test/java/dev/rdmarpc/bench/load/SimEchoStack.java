package dev.rdmarpc.bench.load;

import java.net.InetSocketAddress;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A fake stack on a {@link SimClock}: every call is answered {@code latencyNanos} after it is sent, except
 * that the server stalls once: calls that arrive during {@code [stallStart, stallStart + stallNanos)} are
 * answered {@code latencyNanos} after the stall ends.
 */
final class SimEchoStack implements EchoStack {
    private final SimClock clock;
    private final long latencyNanos;
    private final long stallStart;
    private final long stallNanos;
    final AtomicInteger callers = new AtomicInteger();
    final AtomicInteger closedCallers = new AtomicInteger();
    int outstanding;
    int maxOutstanding;

    SimEchoStack(SimClock clock, long latencyNanos, long stallStart, long stallNanos) {
        this.clock = clock;
        this.latencyNanos = latencyNanos;
        this.stallStart = stallStart;
        this.stallNanos = stallNanos;
    }

    @Override
    public String name() {
        return "sim";
    }

    @Override
    public String describe(StackOptions options) {
        return "simulated";
    }

    @Override
    public EchoServer startServer(InetSocketAddress bindAddress, StackOptions options) {
        throw new UnsupportedOperationException();
    }

    @Override
    public EchoConnection connect(InetSocketAddress serverAddress, StackOptions options) {
        return new EchoConnection() {
            @Override
            public EchoCaller newCaller(int requestBytes, int responseBytes) {
                callers.incrementAndGet();
                return new EchoCaller() {
                    private boolean busy;

                    @Override
                    public void call(CallListener listener) {
                        if (busy) {
                            throw new AssertionError("a second call while one is outstanding");
                        }
                        busy = true;
                        maxOutstanding = Math.max(maxOutstanding, ++outstanding);
                        long arrival = clock.nanoTime();
                        long answer = arrival >= stallStart && arrival < stallStart + stallNanos
                                ? stallStart + stallNanos + latencyNanos : arrival + latencyNanos;
                        clock.schedule(answer, () -> {
                            busy = false;
                            outstanding--;
                            listener.onResponse();
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
            }
        };
    }
}
