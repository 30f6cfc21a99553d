package dev.rdmarpc.bench.load;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The server-streaming driver against fake streams: what it counts, what it leaves out, when it errs. */
@Timeout(60)
class StreamLoopTest {
    private static final InetSocketAddress NOWHERE = new InetSocketAddress("127.0.0.1", 9);
    private static final StackOptions OPTIONS = new StackOptions(1, 1 << 20, null, -1);

    private static MatrixPlan plan(List<Integer> sizes, List<Integer> streams, int connections, Duration warmup,
            Duration measure) {
        return new MatrixPlan(sizes, streams, -1, 1, connections, warmup, measure, 64L << 20, Duration.ZERO, 1, List.of(),
                Workload.stream);
    }

    private static List<CellResult> run(FakeStreamStack stack, MatrixPlan plan) throws Exception {
        return MatrixRunner.run(List.of(new MatrixRunner.Target(stack, NOWHERE, OPTIONS)), plan,
                MatrixRunner.CellListener.NONE).get(0);
    }

    @Test
    void countsMessagesAndPayloadOfEveryStreamAndCancelsThemAtTheEnd() throws Exception {
        FakeStreamStack stack = new FakeStreamStack(Behaviour.STEADY);
        List<CellResult> results = run(stack, plan(List.of(128, 32768), List.of(1, 7), 3, Duration.ofMillis(100),
                Duration.ofMillis(300)));
        assertEquals(4, results.size());
        assertEquals(List.of(128, 128, 32768, 32768), results.stream().map(CellResult::requestBytes).toList());
        assertEquals(List.of(1, 7, 1, 7), results.stream().map(CellResult::concurrency).toList());
        for (CellResult r : results) {
            assertEquals(0, r.errors(), String.valueOf(r.firstError()));
            assertTrue(r.calls() > 10, "messages " + r.calls());
            assertEquals(r.calls() / r.seconds(), r.qps(), 1e-6, "msgs/s = messages / measured seconds");
            assertEquals(r.qps() * r.requestBytes() * 8 / 1e9, r.gbps(), 1e-12, "Gb/s of payload");
            assertTrue(r.seconds() >= 0.29 && r.seconds() < 3, "seconds " + r.seconds());
            assertTrue(r.p50Us() > 0 && r.p50Us() <= r.p99Us() && r.p99Us() <= r.maxUs(), "gap percentiles " + r);
            assertEquals(r.concurrency(), r.inFlight());
        }
        assertEquals(List.of(1, 3, 1, 3), results.stream().map(CellResult::connections).toList(),
                "streams spread over min(connections, streams) connections");
        assertEquals(3, stack.connections.get(), "connections opened once per run");
        assertEquals(List.of(1 + 3 + 1 + 3, 2 + 2, 2 + 2), List.of(stack.perConnection[0].get(),
                stack.perConnection[1].get(), stack.perConnection[2].get()), "round-robin: 7 streams as 3, 2, 2");
        assertEquals(16, stack.opened.get());
        assertEquals(16, stack.cancelled.get(), "every stream cancelled at the end of its cell");
        assertEquals(16, stack.ended.get(), "and ended before the next cell");
        assertEquals(3, stack.closedConnections.get());
    }

    @Test
    void theWarmUpsMessagesAreNotMeasured() throws Exception {
        // Each stream sends 1000 messages at once, then nothing until cancelled: all of them in the warm-up.
        FakeStreamStack stack = new FakeStreamStack(Behaviour.BURST_THEN_SILENT);
        CellResult r = run(stack, plan(List.of(64), List.of(4), 2, Duration.ofMillis(300), Duration.ofMillis(200))).get(0);
        assertEquals(0, r.errors(), String.valueOf(r.firstError()));
        assertEquals(4000, stack.delivered.get());
        assertEquals(0, r.calls(), "the burst fell in the warm-up");
        assertEquals(0.0, r.qps());
        assertTrue(Double.isNaN(r.p50Us()), "no gap measured");
    }

    @Test
    void aMessageOfTheWrongSizeFailsItsStreamOnce() throws Exception {
        FakeStreamStack stack = new FakeStreamStack(Behaviour.WRONG_SIZE);
        CellResult r = run(stack, plan(List.of(100), List.of(3), 3, Duration.ofMillis(50), Duration.ofMillis(150))).get(0);
        assertEquals(3, r.errors(), "one error per stream, however many messages it sends after");
        assertEquals("a stream message of 101 bytes, expected 100", r.firstError());
        assertEquals(0, r.calls(), "a failed stream's messages are not counted");
    }

    @Test
    void aStreamTheServerEndsBeforeTheCellIsOverIsAnError() throws Exception {
        FakeStreamStack stack = new FakeStreamStack(Behaviour.SERVER_ENDS);
        CellResult r = run(stack, plan(List.of(100), List.of(2), 1, Duration.ofMillis(50), Duration.ofMillis(150))).get(0);
        assertEquals(2, r.errors());
        assertEquals("the server ended a stream before the cell was over", r.firstError());
    }

    @Test
    void aStackWithoutStreamsSaysSo() {
        FakeStreamStack stack = new FakeStreamStack(Behaviour.NO_STREAMS);
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> run(stack, plan(List.of(100), List.of(2), 1, Duration.ofMillis(50), Duration.ofMillis(50))));
        assertEquals("fake has no streaming workload", e.getMessage());
    }

    @Test
    void aStreamPlanIsNeverCappedAndHasNoEchoSettings() {
        MatrixPlan p = plan(List.of(8 << 20), List.of(256), 4, Duration.ofMillis(1), Duration.ofMillis(1));
        CellSpec c = p.cells().get(0);
        assertTrue(c.stream());
        assertEquals(256, c.callers(), "a stream's window bounds its bytes, not --max-in-flight");
        assertTrue(p.initialWarmupCell().stream());
        assertThrows(IllegalArgumentException.class, () -> new MatrixPlan(List.of(128), List.of(1), 64, 1, 1,
                Duration.ZERO, Duration.ofMillis(1), 1, Duration.ZERO, 1, List.of(), Workload.stream));
        assertThrows(IllegalArgumentException.class, () -> new MatrixPlan(List.of(128), List.of(1), -1, 2, 1,
                Duration.ZERO, Duration.ofMillis(1), 1, Duration.ZERO, 1, List.of(), Workload.stream));
        assertThrows(IllegalArgumentException.class, () -> new MatrixPlan(List.of(128), List.of(1), -1, 1, 1,
                Duration.ZERO, Duration.ofMillis(1), 1, Duration.ZERO, 1, List.of(1000L), Workload.stream));
    }

    enum Behaviour { STEADY, BURST_THEN_SILENT, WRONG_SIZE, SERVER_ENDS, NO_STREAMS }

    /** Streams on platform threads of their own, sending as told. */
    static final class FakeStreamStack implements EchoStack {
        final Behaviour behaviour;
        final AtomicInteger connections = new AtomicInteger();
        final AtomicInteger closedConnections = new AtomicInteger();
        final AtomicInteger opened = new AtomicInteger();
        final AtomicInteger cancelled = new AtomicInteger();
        final AtomicInteger ended = new AtomicInteger();
        final AtomicInteger delivered = new AtomicInteger();
        final AtomicInteger[] perConnection = {new AtomicInteger(), new AtomicInteger(), new AtomicInteger()};

        FakeStreamStack(Behaviour behaviour) {
            this.behaviour = behaviour;
        }

        @Override
        public String name() {
            return "fake";
        }

        @Override
        public String describe(StackOptions options) {
            return "fake streams";
        }

        @Override
        public EchoServer startServer(InetSocketAddress bindAddress, StackOptions options) {
            throw new UnsupportedOperationException();
        }

        @Override
        public EchoConnection connect(InetSocketAddress serverAddress, StackOptions options) {
            int index = connections.getAndIncrement();
            return new EchoConnection() {
                @Override
                public EchoCaller newCaller(int requestBytes, int responseBytes) {
                    throw new UnsupportedOperationException();
                }

                @Override
                public StreamCall openStream(int messageBytes, StreamListener listener) {
                    if (behaviour == Behaviour.NO_STREAMS) {
                        return EchoConnection.super.openStream(messageBytes, listener);
                    }
                    opened.incrementAndGet();
                    perConnection[index].incrementAndGet();
                    FakeStream s = new FakeStream(messageBytes, listener);
                    Thread.ofPlatform().daemon().name("fake-stream").start(s);
                    return s;
                }

                @Override
                public void close() {
                    closedConnections.incrementAndGet();
                }
            };
        }

        final class FakeStream implements Runnable, StreamCall {
            final int size;
            final StreamListener listener;
            volatile boolean stop;

            FakeStream(int size, StreamListener listener) {
                this.size = size;
                this.listener = listener;
            }

            @Override
            public void run() {
                int sent = 0;
                while (!stop) {
                    switch (behaviour) {
                        case STEADY, WRONG_SIZE -> {
                            listener.onMessage(behaviour == Behaviour.WRONG_SIZE && sent == 0 ? size + 1 : size);
                            LockSupport.parkNanos(20_000);
                        }
                        case BURST_THEN_SILENT -> {
                            if (sent < 1000) {
                                listener.onMessage(size);
                            } else {
                                LockSupport.parkNanos(1_000_000);
                            }
                        }
                        case SERVER_ENDS -> {
                            if (sent == 10) {
                                ended.incrementAndGet();
                                listener.onEnd(null);
                                return;
                            }
                            listener.onMessage(size);
                        }
                        default -> throw new AssertionError(behaviour);
                    }
                    if (sent++ < 1000) {
                        delivered.incrementAndGet();
                    }
                }
                ended.incrementAndGet();
                listener.onEnd(new IllegalStateException("cancelled"));
            }

            @Override
            public void cancel() {
                if (!stop) {
                    stop = true;
                    cancelled.incrementAndGet();
                }
            }
        }
    }
}
