package dev.rdmarpc.rpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.rdmarpc.rpc.protocol.FrameDescriptor;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.Arrays;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** {@link LargeCallsContract} over TCP loopback, default settings as a new user has them. */
@Timeout(300)
class LargeCallsTcpTest extends LargeCallsContract {
    @Override
    protected RpcServer startServer() {
        return echoServer(RpcServer.builder().bind(new InetSocketAddress("127.0.0.1", 0))).start();
    }

    @Override
    protected RpcClient connect(RpcServer server) {
        return RpcClient.connect(server.address());
    }

    @Override
    protected RpcClientPool pool() {
        return RpcClientPool.builder().build();
    }

    @Override
    protected Duration callTimeout() {
        return Duration.ofSeconds(10);
    }

    @Test
    void blockingLargeCallsNeverLockTheConnection() throws Exception {
        runCases(new int[][] {
            {256 << 10, 64, 2},
            {256 << 10, 2, 4},
            {1 << 20, 32, 2},
            {1 << 20, 8, 2},
            {8 << 20, 16, 1},
            {8 << 20, 4, 2},
            {8 << 20, 48, 1},
        }, 3);
    }

    /**
     * A peer that never reads: the kernel's buffers fill, then the connection's send queue. A blocking
     * call that finds the queue over its limit waits for room until its deadline, then fails with
     * OVERLOADED (it used to be queued regardless); the queue never holds more than the limit plus
     * one frame, however many threads call.
     */
    @Test
    void aBlockingCallWaitsForRoomThenFailsOverloaded() throws Exception {
        try (ServerSocketChannel silent = ServerSocketChannel.open().bind(new InetSocketAddress("127.0.0.1", 0));
             RpcClient client = RpcClient.connect((InetSocketAddress) silent.getLocalAddress())) {
            int frame = 4 << 20; // the pool rounds a large buffer up to a power of two: keep the frame at one
            byte[] payload = new byte[frame - 64];
            Duration timeout = Duration.ofMillis(300);
            RpcException overloaded = null;
            long overloadedAfter = 0;
            List<String> seen = new ArrayList<>();
            for (int i = 0; i < 40 && overloaded == null; i++) {
                long start = System.nanoTime();
                try {
                    client.call(ECHO_BYTES, payload, timeout);
                } catch (RpcException e) {
                    seen.add(e.status().name());
                    if (e.status() == Status.OVERLOADED) {
                        overloaded = e;
                        overloadedAfter = System.nanoTime() - start;
                    } else {
                        assertEquals(Status.DEADLINE_EXCEEDED, e.status(), e::toString); // queued, never answered
                    }
                }
            }
            assertTrue(overloaded != null, "no call was refused: " + seen);
            assertTrue(overloaded.getMessage().contains("send queue full"), overloaded::getMessage);
            assertTrue(overloadedAfter >= timeout.toNanos() * 9 / 10, "OVERLOADED after only "
                    + TimeUnit.NANOSECONDS.toMillis(overloadedAfter) + " ms: it did not wait for room");
            // Now many threads at once: still at most the limit plus one frame queued.
            List<Thread> threads = new ArrayList<>();
            for (int t = 0; t < 16; t++) {
                threads.add(Thread.ofPlatform().start(() -> {
                    try {
                        client.call(ECHO_BYTES, payload, timeout);
                    } catch (RpcException e) {
                        // TIMEOUT or OVERLOADED: what is checked is the memory below
                    }
                }));
            }
            for (Thread t : threads) {
                t.join(10_000);
            }
            long queued = client.bufferPool().largeBytesInUse();
            assertTrue(queued <= ClientBuilder.SEND_HIGH_WATER_MARK + frame,
                    "queued " + queued + " bytes, over the limit plus one frame");
        }
    }

    /**
     * {@code sendHighWaterMark} sets the limit: with 1 MiB, asynchronous 256 KiB calls to a peer that
     * reads nothing are refused once 1 MiB waits unsent (the refusal names the limit), and the client
     * holds at most the limit plus one frame; a blocking call then waits and fails OVERLOADED. Zero is
     * refused when the client is built.
     */
    @Test
    void theSendHighWaterMarkIsASetting() throws Exception {
        long mark = 1 << 20;
        try (ServerSocketChannel silent = ServerSocketChannel.open().bind(new InetSocketAddress("127.0.0.1", 0));
             RpcClient client = RpcClient.builder().address((InetSocketAddress) silent.getLocalAddress())
                     .sendHighWaterMark(mark).connect()) {
            int frame = 256 << 10;
            byte[] payload = new byte[frame - 64];
            RpcException refused = null;
            List<CompletableFuture<byte[]>> calls = new ArrayList<>();
            for (int i = 0; i < 400 && refused == null; i++) {
                CompletableFuture<byte[]> f = client.callAsync(ECHO_BYTES, payload);
                calls.add(f);
                if (f.isCompletedExceptionally()) {
                    ExecutionException e = assertThrows(ExecutionException.class, f::get);
                    refused = (RpcException) e.getCause();
                } else {
                    Thread.sleep(2); // let the I/O thread write what the kernel takes
                }
            }
            assertTrue(refused != null, "no call was refused in " + calls.size());
            assertEquals(Status.OVERLOADED, refused.status(), refused::toString);
            assertTrue(refused.getMessage().contains("limit " + mark), refused::getMessage);
            long queued = client.bufferPool().largeBytesInUse();
            assertTrue(queued <= mark + frame, "queued " + queued + " bytes, over the limit plus one frame");
            RpcException blocked = assertThrows(RpcException.class,
                    () -> client.call(ECHO_BYTES, payload, Duration.ofMillis(200)));
            assertEquals(Status.OVERLOADED, blocked.status(), blocked::toString);
        }
        IllegalArgumentException zero = assertThrows(IllegalArgumentException.class,
                () -> RpcClient.builder().address(new InetSocketAddress("127.0.0.1", 1)).sendHighWaterMark(0).connect());
        assertTrue(zero.getMessage().contains("sendHighWaterMark"), zero::getMessage);
    }

    /**
     * Blocking calls that find the send queue full get the room in the order they came, not in the
     * order they happen to wake: a peer that reads nothing holds the queue full while eight threads
     * start waiting one after the other; then it reads, and their requests arrive in that order. (Each
     * used to be woken with all the others, and whichever claimed first went first, so with many
     * threads of large calls some waited many times longer than the rest.)
     */
    @Test
    void blockingCallsWaitingForRoomAreSentInTheOrderTheyCame() throws Exception {
        try (ServerSocketChannel peer = ServerSocketChannel.open().bind(new InetSocketAddress("127.0.0.1", 0));
             RpcClient client = RpcClient.connect((InetSocketAddress) peer.getLocalAddress());
             SocketChannel accepted = peer.accept()) {
            int size = 1 << 20;
            Duration timeout = Duration.ofSeconds(30); // the client's pings close it after about 5 s anyway
            List<Thread> threads = new ArrayList<>();
            // Fill the kernel's buffers and the send queue until a call waits for room (marked 0x7f).
            Thread filler = null;
            for (int i = 0; i < 64 && (filler == null || !waitingForRoom(filler)); i++) {
                filler = caller(client, size, (byte) 0x7f, timeout);
                threads.add(filler);
                awaitParked(filler);
            }
            assertTrue(waitingForRoom(filler), "no call waited for room");
            int waiting = 8;
            for (int k = 0; k < waiting; k++) {
                Thread t = caller(client, size, (byte) k, timeout);
                threads.add(t);
                awaitParked(t);
                assertTrue(waitingForRoom(t), "call " + k + " did not wait for room");
            }
            // Read everything sent, frame by frame, and note the marker of each request.
            List<Integer> order = new ArrayList<>();
            ByteBuffer header = ByteBuffer.allocate(FrameDescriptor.HEADER_LENGTH);
            long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (order.size() < waiting && System.nanoTime() < end) {
                readFully(accepted, header.clear());
                long len = FrameDescriptor.check(MemorySegment.ofBuffer(header.flip()), 0, header.remaining(), Integer.MAX_VALUE);
                assertTrue(len >= FrameDescriptor.HEADER_LENGTH, () -> "not a frame: " + FrameDescriptor.describe(len));
                ByteBuffer body = ByteBuffer.allocate((int) len - FrameDescriptor.HEADER_LENGTH);
                readFully(accepted, body);
                if (len - FrameDescriptor.HEADER_LENGTH >= size) {
                    int marker = body.get(body.limit() - 1);
                    if (marker != 0x7f) {
                        order.add(marker);
                    }
                }
            }
            assertEquals(List.of(0, 1, 2, 3, 4, 5, 6, 7), order);
            client.close(); // the waiting calls end with the connection
            for (Thread t : threads) {
                t.join(10_000);
            }
        }
    }

    /** A thread making one blocking call of {@code size} bytes, each {@code marker}; the outcome is not checked. */
    private static Thread caller(RpcClient client, int size, byte marker, Duration timeout) {
        byte[] payload = new byte[size];
        Arrays.fill(payload, marker);
        return Thread.ofPlatform().start(() -> {
            try {
                client.call(ECHO_BYTES, payload, timeout);
            } catch (RpcException e) {
                // the peer never answers: the calls end when the client closes
            }
        });
    }

    /** Waits until {@code t} waits: for room in the send queue, or for its response. */
    private static void awaitParked(Thread t) throws InterruptedException {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (t.getState() != Thread.State.TIMED_WAITING && t.getState() != Thread.State.WAITING
                && System.nanoTime() < end) {
            Thread.sleep(1);
        }
        Thread.sleep(20); // let a thread that parked only for a moment (a lock) go on to where it waits
        while (t.getState() != Thread.State.TIMED_WAITING && t.getState() != Thread.State.WAITING
                && System.nanoTime() < end) {
            Thread.sleep(1);
        }
    }

    private static boolean waitingForRoom(Thread t) {
        return Arrays.stream(t.getStackTrace()).anyMatch(f -> f.getMethodName().equals("awaitSendRoom"));
    }

    private static void readFully(SocketChannel ch, ByteBuffer b) throws java.io.IOException {
        while (b.hasRemaining()) {
            if (ch.read(b) < 0) {
                throw new java.io.EOFException("the client closed the connection");
            }
        }
    }
}
