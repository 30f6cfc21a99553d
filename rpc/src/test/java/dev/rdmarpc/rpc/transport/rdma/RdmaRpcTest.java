package dev.rdmarpc.rpc.transport.rdma;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.rdmarpc.ibverbs.verbs.ResourceKind;
import dev.rdmarpc.ibverbs.verbs.VerbsResources;
import dev.rdmarpc.rpc.Attachment;
import dev.rdmarpc.rpc.CallOptions;
import dev.rdmarpc.rpc.Method;
import dev.rdmarpc.rpc.ResponseListener;
import dev.rdmarpc.rpc.ResponseView;
import dev.rdmarpc.rpc.RpcClient;
import dev.rdmarpc.rpc.RpcException;
import dev.rdmarpc.rpc.RpcServer;
import dev.rdmarpc.rpc.Status;
import dev.rdmarpc.rpc.buffer.Slab;
import dev.rdmarpc.rpc.buffer.SlabListener;
import dev.rdmarpc.rpc.codec.Codecs;
import dev.rdmarpc.rpc.protocol.FrameDescriptor;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import dev.rdmarpc.testsupport.RdmaTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The RPC over RDMA for real, in the Soft-RoCE VM: the server on the second address (rxe1), clients
 * from the first (rxe0).
 */
@RdmaTest
@Timeout(600)
class RdmaRpcTest {
    static final Method<MemorySegment, MemorySegment> ECHO = Method.raw("echo");
    static final Method<byte[], byte[]> ECHO_BYTES = Method.of("echoBytes", Codecs.BYTES, Codecs.BYTES);
    static final Method<byte[], byte[]> SLOW_ECHO = Method.of("slowEcho", Codecs.BYTES, Codecs.BYTES);
    static final Method<MemorySegment, MemorySegment> ATTACHMENT_HASH = Method.raw("attachmentHash");

    static RpcServer.Builder echoServer() {
        return RpcServer.builder().bind(RdmaTestEnv.serverBind())
                .registerRaw(ECHO, c -> c.respond(c.buffer(), c.payloadOffset(), c.payloadLength()))
                .registerRaw(ATTACHMENT_HASH, c -> c.respond(Codecs.LONG,
                        hash(c.buffer().asSlice(c.attachmentOffset(), c.attachmentLength()))))
                .registerBlocking(ECHO_BYTES, (ctx, req) -> req)
                .registerBlocking(SLOW_ECHO, (ctx, req) -> {
                    Thread.sleep(2);
                    return req;
                });
    }

    /** Pipelined echo through the zero-allocation path: up to {@code concurrency} calls in flight, payloads checked. */
    static final class Driver implements ResponseListener {
        private final RpcClient client;
        private final MemorySegment[] payloads;
        private final AtomicInteger outstanding = new AtomicInteger();
        private final AtomicLong completed = new AtomicLong();
        private final AtomicReference<Throwable> failure = new AtomicReference<>();
        private final AtomicLong backPressured = new AtomicLong();

        Driver(RpcClient client, MemorySegment[] payloads) {
            this.client = client;
            this.payloads = payloads;
        }

        void run(Method<?, ?> method, int calls, int concurrency) throws InterruptedException {
            completed.set(0);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(240);
            for (int i = 0; i < calls; ) {
                if (failure.get() != null) {
                    throw new AssertionError("call failed", failure.get());
                }
                if (outstanding.get() >= concurrency) {
                    Thread.onSpinWait();
                    continue;
                }
                outstanding.incrementAndGet();
                if (client.send(method, payloads[i % payloads.length], this, i % payloads.length)) {
                    i++;
                } else {
                    outstanding.decrementAndGet();
                    backPressured.incrementAndGet();
                    Thread.sleep(0, 100_000);
                }
                assertTrue(System.nanoTime() < deadline, "echo did not finish in time");
            }
            while (completed.get() < calls) {
                if (failure.get() != null) {
                    throw new AssertionError("call failed", failure.get());
                }
                assertTrue(System.nanoTime() < deadline, "echo did not finish in time: " + completed.get() + "/" + calls);
                Thread.sleep(1);
            }
        }

        @Override
        public void onResponse(long tag, ResponseView r) {
            MemorySegment expected = payloads[(int) tag];
            MemorySegment got = r.buffer().asSlice(r.payloadOffset(), r.payloadLength());
            if (got.byteSize() != expected.byteSize() || got.mismatch(expected) != -1) {
                failure.compareAndSet(null, new AssertionError("echo of " + expected.byteSize() + " bytes came back as "
                        + got.byteSize() + " bytes, first difference at " + got.mismatch(expected)));
            }
            outstanding.decrementAndGet();
            completed.incrementAndGet();
        }

        @Override
        public void onError(long tag, RpcException e) {
            failure.compareAndSet(null, e);
            outstanding.decrementAndGet();
        }
    }

    static long hash(MemorySegment s) {
        long h = 0x811C9DC5L;
        for (long i = 0; i < s.byteSize(); i++) {
            h = (h ^ s.get(ValueLayout.JAVA_BYTE, i)) * 0x100000001B3L;
        }
        return h;
    }

    static MemorySegment[] payloads(Arena arena, int size, int variants) {
        MemorySegment[] p = new MemorySegment[variants];
        for (int v = 0; v < variants; v++) {
            p[v] = arena.allocate(Math.max(1, size)).asSlice(0, size);
            for (int i = 0; i < size; i++) {
                p[v].set(ValueLayout.JAVA_BYTE, i, (byte) (i * 31 + v * 7 + (i >>> 10)));
            }
        }
        return p;
    }

    @Test
    void largeFramesPipelined() throws Exception {
        largeFrames(RdmaConfig.DEFAULT_ACK_TIMEOUT);
    }

    private void largeFrames(int ackTimeout) throws Exception {
        RdmaConfig config = RdmaTestEnv.smallConfig().bufferPool(p -> p.maxPooledBytes(256L << 20).maxLargeBytes(256L << 20))
                .timeouts(t -> t.ackTimeout(ackTimeout));
        // a deadline for a stuck connection, not a speed bar: with the host busy (load 10 on 2 cores) the
        // VM moved about 2.5 MB/s, and the 8 calls' 128 MiB both ways took more than 20 s
        try (RdmaTransport serverT = RdmaTransport.create(config);
             RdmaTransport clientT = RdmaTransport.create(config);
             RpcServer server = echoServer().transport(serverT).start();
             RpcClient client = RpcClient.builder().address(server.address()).transport(clientT)
                     .defaultTimeout(java.time.Duration.ofSeconds(90)).connect();
             Arena arena = Arena.ofShared()) {
            System.out.print("ack timeout " + ackTimeout + ", hw counters before: " + RdmaTestEnv.hwCounters());
            try {
                for (int round = 0; round < 3; round++) {
                    Driver d = new Driver(client, payloads(arena, 8 << 20, 2));
                    long t0 = System.nanoTime();
                    d.run(ECHO, 8, 8);
                    System.out.printf("8 MiB x 8 at concurrency 8: %d ms (%d back-pressured retries)%n",
                            (System.nanoTime() - t0) / 1_000_000, d.backPressured.get());
                    System.out.flush();
                }
                // the default rendezvous threshold (1 MiB) takes every 8 MiB frame, both ways
                assertEquals(24, serverT.metrics().rendezvousRead(), "requests read by rendezvous: " + serverT.metrics());
                assertEquals(24, clientT.metrics().rendezvousRead(), "responses read by rendezvous: " + clientT.metrics());
            } catch (Throwable e) {
                System.out.println("client " + clientT.diagnostics());
                System.out.println("server " + serverT.diagnostics());
                throw e;
            } finally {
                System.out.print("ack timeout " + ackTimeout + ", hw counters after: " + RdmaTestEnv.hwCounters());
            }
        }
    }

    /**
     * Eight connections on one client transport, 1 MiB echoes, 16 in flight: the load under which
     * the rxe driver of Linux 6.1 failed connections (a receive completed with LOC_QP_OP_ERR, the
     * peer's send with REM_OP_ERR; it reproduced in every run with this load there, see docs/rdma.md).
     * Every echo is checked byte for byte: a retransmission that lands the wrong bytes fails it too.
     * Rendezvous is off: the frames go as split SENDs, the path that failed there.
     */
    @Test
    void eightConnectionsOfMebibyteEchoes() throws Exception {
        int connections = 8;
        int perConnection = 2;
        int calls = 8;
        RdmaConfig config = RdmaTestEnv.smallConfig().bufferPool(p -> p.maxPooledBytes(256L << 20).maxLargeBytes(256L << 20))
                .send(s -> s.rendezvousThreshold(0));
        List<RpcClient> clients = new ArrayList<>();
        try (RdmaTransport serverT = RdmaTransport.create(config);
             RdmaTransport clientT = RdmaTransport.create(config);
             RpcServer server = echoServer().transport(serverT).start();
             Arena arena = Arena.ofShared()) {
            try {
                for (int i = 0; i < connections; i++) {
                    clients.add(RpcClient.builder().address(server.address()).transport(clientT)
                            .defaultTimeout(java.time.Duration.ofSeconds(60)).connect());
                }
                MemorySegment[] payloads = payloads(arena, 1 << 20, 2);
                Driver[] drivers = new Driver[connections];
                int[] sent = new int[connections];
                for (int i = 0; i < connections; i++) {
                    drivers[i] = new Driver(clients.get(i), payloads);
                }
                System.out.print("8 connections, hw counters before: " + RdmaTestEnv.hwCounters());
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(300);
                boolean done = false;
                while (!done) {
                    done = true;
                    boolean progressed = false;
                    for (int i = 0; i < connections; i++) {
                        Driver d = drivers[i];
                        if (d.failure.get() != null) {
                            throw new AssertionError("connection " + i + ": call failed", d.failure.get());
                        }
                        while (sent[i] < calls && d.outstanding.get() < perConnection) {
                            d.outstanding.incrementAndGet();
                            if (!clients.get(i).send(ECHO, payloads[sent[i] % 2], d, sent[i] % 2)) {
                                d.outstanding.decrementAndGet();
                                break;
                            }
                            sent[i]++;
                            progressed = true;
                        }
                        done &= d.completed.get() == calls;
                    }
                    assertTrue(System.nanoTime() < deadline, "echoes did not finish in time");
                    if (!done && !progressed) {
                        Thread.sleep(1);
                    }
                }
                assertEquals(connections, server.metrics().connectionsOpened());
                assertEquals(0, server.metrics().connectionsClosed(), "a connection failed");
            } catch (Throwable e) {
                System.out.println("client " + clientT.diagnostics());
                System.out.println("server " + serverT.diagnostics());
                throw e;
            } finally {
                System.out.print("8 connections, hw counters after: " + RdmaTestEnv.hwCounters());
                for (RpcClient c : clients) {
                    c.close();
                }
            }
        }
    }

    @Test
    void framesAroundTheChunkSize() throws Exception {
        try (RdmaTransport serverT = RdmaTransport.create(RdmaTestEnv.smallConfig());
             RdmaTransport clientT = RdmaTransport.create(RdmaTestEnv.smallConfig());
             RpcServer server = echoServer().transport(serverT).start();
             RpcClient client = RpcClient.builder().address(server.address()).transport(clientT)
                     .defaultTimeout(java.time.Duration.ofSeconds(20)).connect();
             Arena arena = Arena.ofShared()) {
            int chunk = serverT.bufferPool().chunkSize();
            try {
                for (int conc : new int[]{1, 2, 8, 8, 8, 8, 8}) {
                    for (int size : new int[]{chunk - 33, chunk - 32, chunk - 31, 2 * chunk}) {
                        System.out.printf("around the chunk: size %d conc %d%n", size, conc);
                        System.out.flush();
                        new Driver(client, payloads(arena, size, 4)).run(ECHO, 16, conc);
                    }
                }
            } catch (AssertionError e) {
                System.out.println("client " + clientT.diagnostics());
                System.out.println("server " + serverT.diagnostics());
                throw e;
            }
            System.out.println("client " + clientT.metrics());
            System.out.println("server " + serverT.metrics());
        }
    }

    @Test
    void echoFromOneByteToEightMebibytesAtConcurrencyOneToSixtyFour() throws Exception {
        long rnrBefore = RdmaTestEnv.hwCounter("rcvd_rnr_err");
        long rnrSentBefore = RdmaTestEnv.hwCounter("send_rnr_err");
        try (RdmaTransport serverT = RdmaTransport.create(RdmaTestEnv.smallConfig().bufferPool(p -> p.maxPooledBytes(256L << 20).maxLargeBytes(256L << 20)));
             RdmaTransport clientT = RdmaTransport.create(RdmaTestEnv.smallConfig().bufferPool(p -> p.maxPooledBytes(256L << 20).maxLargeBytes(256L << 20)));
             RpcServer server = echoServer().transport(serverT).start();
             RpcClient client = RpcClient.builder().address(server.address()).transport(clientT).connect();
             Arena arena = Arena.ofShared()) {
            int chunk = serverT.bufferPool().chunkSize();
            long rendezvous = echoSweep(client, clientT, serverT, arena,
                    new int[]{1, 200, 4096, chunk - 32, chunk - 31, 1 << 20, 8 << 20}, new int[]{1, 8, 64}, 1000, 4 << 20);
            System.out.println("client " + clientT.metrics());
            System.out.println("server " + serverT.metrics());
            assertEquals(53, rendezvous, "echoes of 1 and 8 MiB");
            assertRendezvousAtTheDefaultThreshold(clientT, serverT, rendezvous);
            assertEquals(0, clientT.metrics().completionErrors() + serverT.metrics().completionErrors());
            assertEquals(0, clientT.metrics().rnrErrors() + serverT.metrics().rnrErrors());
            assertTrue(clientT.metrics().messagesSent() > 0 && serverT.metrics().messagesReceived() > 0);
        }
        assertNoNewRnr(rnrBefore, rnrSentBefore);
    }

    /**
     * The default configuration's two paths, after {@code rendezvous} echoes whose frames were at least
     * {@link RdmaConfig#DEFAULT_RENDEZVOUS_THRESHOLD} and others below it: exactly those were read by
     * rendezvous on each side, and the smaller ones were split and copied into reassembly buffers.
     */
    static void assertRendezvousAtTheDefaultThreshold(RdmaTransport clientT, RdmaTransport serverT, long rendezvous) {
        assertEquals(rendezvous, serverT.metrics().rendezvousRead(), "requests read by rendezvous: " + serverT.metrics());
        assertEquals(rendezvous, clientT.metrics().rendezvousRead(), "responses read by rendezvous: " + clientT.metrics());
        assertTrue(serverT.metrics().reassemblyCopiedBytes() > 0, "smaller requests split: " + serverT.metrics());
        assertTrue(clientT.metrics().reassemblyCopiedBytes() > 0, "smaller responses split: " + clientT.metrics());
    }

    /**
     * Echoes every size at every concurrency through the zero-allocation path, payloads checked
     * ({@code calls} per cell: at least min(concurrency, 16), else up to {@code maxCalls} or
     * {@code bytesPerCell} worth), then one frame over three chunks through the copying path
     * (blocking handler, typed codec). Prints both transports' state when a call fails.
     *
     * @return the echoes whose frames were at least {@link RdmaConfig#DEFAULT_RENDEZVOUS_THRESHOLD}
     *         (the frame over three chunks is below it)
     */
    static long echoSweep(RpcClient client, RdmaTransport clientT, RdmaTransport serverT, Arena arena, int[] sizes,
                          int[] concurrencies, int maxCalls, int bytesPerCell) throws InterruptedException {
        long atThreshold = 0;
        try {
            for (int size : sizes) {
                MemorySegment[] p = payloads(arena, size, 4);
                for (int conc : concurrencies) {
                    int calls = Math.max(Math.min(conc, 16), Math.min(maxCalls, bytesPerCell / Math.max(1, size)));
                    if (size + FrameDescriptor.HEADER_LENGTH >= RdmaConfig.DEFAULT_RENDEZVOUS_THRESHOLD) {
                        atThreshold += calls;
                    }
                    Driver d = new Driver(client, p);
                    long t0 = System.nanoTime();
                    d.run(ECHO, calls, conc);
                    System.out.printf("echo size %8d conc %2d: %5d calls in %9d us (%d back-pressured retries)%n",
                            size, conc, calls, (System.nanoTime() - t0) / 1000, d.backPressured.get());
                    System.out.flush();
                }
            }
        } catch (AssertionError e) {
            System.out.println("client " + clientT.diagnostics());
            System.out.println("server " + serverT.diagnostics());
            throw e;
        }
        byte[] big = new byte[3 * serverT.bufferPool().chunkSize() + 17];
        for (int i = 0; i < big.length; i++) {
            big[i] = (byte) (i ^ (i >>> 8));
        }
        assertArrayEquals(big, client.call(ECHO_BYTES, big), "the copying path, a frame over three chunks");
        return atThreshold;
    }

    static void assertNoNewRnr(long rcvdBefore, long sentBefore) {
        long rcvd = RdmaTestEnv.hwCounter("rcvd_rnr_err");
        long sent = RdmaTestEnv.hwCounter("send_rnr_err");
        System.out.println("rxe hw_counters rcvd_rnr_err " + rcvdBefore + " -> " + rcvd + ", send_rnr_err " + sentBefore
                + " -> " + sent);
        if (rcvd >= 0) {
            assertEquals(rcvdBefore, rcvd, "RNR NAKs received by the devices");
        }
        if (sent >= 0) {
            assertEquals(sentBefore, sent, "RNR NAKs sent by the devices");
        }
    }

    @Test
    void aBurstAgainstTinyReceiveQueuesNeverMeetsAnRnr() throws Exception {
        long rnrBefore = RdmaTestEnv.hwCounter("rcvd_rnr_err");
        long rnrSentBefore = RdmaTestEnv.hwCounter("send_rnr_err");
        RdmaConfig tiny = RdmaTestEnv.smallConfig().receiveQueue(q -> q.depth(2).maxDepth(4)).send(s -> s.window(2))
                .bufferPool(p -> p.chunkSize(4096).slabSize(1 << 20));
        java.nio.file.Path jfr = java.nio.file.Files.createTempFile("rdma-stalls", ".jfr");
        try (jdk.jfr.Recording recording = new jdk.jfr.Recording();
             RdmaTransport serverT = RdmaTransport.create(tiny);
             RdmaTransport clientT = RdmaTransport.create(tiny);
             RpcServer server = echoServer().transport(serverT).start();
             RpcClient client = RpcClient.builder().address(server.address()).transport(clientT).maxOutstanding(4096)
                     .connect();
             Arena arena = Arena.ofShared()) {
            recording.enable("rdmarpc.RdmaSendStall");
            recording.start();
            // Inline echoes, then slow (blocking) ones that make the server's responses lag behind.
            new Driver(client, payloads(arena, 3000, 8)).run(ECHO, 5_000, 2048);
            new Driver(client, payloads(arena, 100, 8)).run(SLOW_ECHO, 1_000, 1024);
            new Driver(client, payloads(arena, 10_000, 8)).run(ECHO, 1_000, 512); // 3 messages per frame
            RdmaMetrics c = clientT.metrics();
            RdmaMetrics s = serverT.metrics();
            System.out.println("client " + c);
            System.out.println("server " + s);
            assertEquals(0, c.rnrErrors() + s.rnrErrors(), "RNR error completions");
            assertEquals(0, c.completionErrors() + s.completionErrors(), "error completions");
            assertTrue(c.creditStalls() + s.creditStalls() > 0, "the burst ran out of credits (flow control exercised)");
            recording.stop();
            recording.dump(jfr);
            assertTrue(jdk.jfr.consumer.RecordingFile.readAllEvents(jfr).stream()
                    .anyMatch(e -> e.getEventType().getName().equals("rdmarpc.RdmaSendStall")), "send-stall events");
        } finally {
            java.nio.file.Files.deleteIfExists(jfr);
        }
        assertNoNewRnr(rnrBefore, rnrSentBefore);
    }

    @Test
    void theOneCallSwitchAndPlainTcpClientsOnTheSamePort() throws Exception {
        try (RpcServer server = echoServer().rdma(RdmaTestEnv.smallConfig()).start();
             RpcClient rdmaClient = RpcClient.builder().address(server.address()).rdma(RdmaTestEnv.smallConfig()).connect();
             RpcClient tcpClient = RpcClient.connect(server.address())) {
            byte[] msg = "over rdma".getBytes();
            assertArrayEquals(msg, rdmaClient.call(ECHO_BYTES, msg));
            byte[] msg2 = "over tcp, same port".getBytes();
            assertArrayEquals(msg2, tcpClient.call(ECHO_BYTES, msg2));
            byte[] large = new byte[1 << 20];
            large[12345] = 7;
            assertArrayEquals(large, tcpClient.call(ECHO_BYTES, large));
            assertArrayEquals(large, rdmaClient.call(ECHO_BYTES, large));
            assertEquals(2, server.metrics().connectionsOpened());
        }
    }

    @Test
    void aTcpOnlyServerRefusesAnRdmaClientWithAClearError() {
        try (RpcServer server = echoServer().start()) {
            RpcException e = assertThrows(RpcException.class,
                    () -> RpcClient.builder().address(server.address()).rdma(RdmaTestEnv.smallConfig()).connect());
            assertEquals(Status.UNAVAILABLE, e.status());
            assertTrue(e.getMessage().contains("rdma() enabled on the server"), e.getMessage());
        }
    }

    @Test
    void tenThousandCallsLeaveNoNativeResourceBehind() throws Exception {
        Map<ResourceKind, Long> before = VerbsResources.snapshot();
        try (RdmaTransport serverT = RdmaTransport.create(RdmaTestEnv.smallConfig());
             RpcServer server = echoServer().transport(serverT).start()) {
            for (int round = 0; round < 2; round++) {
                try (RpcClient client = RpcClient.builder().address(server.address()).rdma(RdmaTestEnv.smallConfig())
                        .connect();
                     Arena arena = Arena.ofShared()) {
                    new Driver(client, payloads(arena, 512, 4)).run(ECHO, 5_000, 16);
                }
            }
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (server.metrics().connectionsOpened() != server.metrics().connectionsClosed()
                    || serverT.bufferPool().chunksInUse() != 0) {
                assertTrue(System.nanoTime() < deadline, "server connections not drained: " + serverT.bufferPool());
                Thread.sleep(5);
            }
            assertEquals(0, serverT.bufferPool().largeBuffersInUse());
        }
        assertEquals(before, VerbsResources.snapshot(), "live verbs resources after 10,000 calls and close");
    }

    /** A slab listener set in RdmaConfig.bufferPool is kept: told after the transport has registered each slab. */
    @Test
    void aUsersSlabListenerIsToldAfterTheTransportsRegistration() throws Exception {
        List<Slab> created = new java.util.concurrent.CopyOnWriteArrayList<>();
        List<Slab> freed = new java.util.concurrent.CopyOnWriteArrayList<>();
        AtomicInteger unregistered = new AtomicInteger();
        SlabListener user = new SlabListener() {
            @Override
            public void slabCreated(Slab slab) {
                if (!(slab.registration() instanceof DeviceTable.Registration)) {
                    unregistered.incrementAndGet();
                }
                created.add(slab);
            }

            @Override
            public void slabFreed(Slab slab) {
                freed.add(slab);
            }
        };
        RdmaConfig config = RdmaTestEnv.smallConfig().bufferPool(p -> p.slabListener(user));
        try (RpcServer server = echoServer().rdma(config).start();
             RpcClient client = RpcClient.builder().address(server.address()).rdma(RdmaTestEnv.smallConfig()).connect()) {
            byte[] msg = "registered".getBytes();
            assertArrayEquals(msg, client.call(ECHO_BYTES, msg));
            assertTrue(!created.isEmpty(), "the server's pool made slabs and told the user's listener");
        }
        assertEquals(0, unregistered.get(), "every slab was registered before the user's listener saw it");
        assertEquals(created.size(), freed.size(), "every slab it saw made it saw freed");
    }

    @Test
    void poolHighWaterMarkRefusesNewConnectionsAndKeepsOldOnes() throws Exception {
        // 16 receive chunks of 64 KiB per connection (14 + 2) = 1 MiB; the mark admits two connections.
        RdmaConfig serverConfig = RdmaTestEnv.smallConfig()
                .bufferPool(p -> p.chunkSize(64 * 1024).slabSize(1 << 20).maxPooledBytes(8L << 20).maxLargeBytes(8L << 20))
                .receiveQueue(q -> q.depth(14).maxDepth(14)).poolHighWaterMark((2L << 20) + (512 << 10));
        java.nio.file.Path jfr = java.nio.file.Files.createTempFile("rdma-events", ".jfr");
        try (jdk.jfr.Recording recording = new jdk.jfr.Recording();
             RdmaTransport serverT = RdmaTransport.create(serverConfig);
             RpcServer server = echoServer().transport(serverT).start()) {
            recording.enable("rdmarpc.RdmaPoolPressure");
            recording.enable("rdmarpc.RdmaQpState");
            recording.start();
            List<RpcClient> clients = new ArrayList<>();
            try {
                for (int i = 0; i < 2; i++) {
                    clients.add(RpcClient.builder().address(server.address()).rdma(RdmaTestEnv.smallConfig()).connect());
                }
                RpcException e = assertThrows(RpcException.class,
                        () -> RpcClient.builder().address(server.address()).rdma(RdmaTestEnv.smallConfig()).connect());
                assertEquals(Status.RESOURCE_EXHAUSTED, e.status());
                assertTrue(e.getMessage().contains("high-water mark"), e.getMessage());
                assertEquals(1, serverT.metrics().connectionsRefused());
                for (RpcClient c : clients) {
                    assertArrayEquals(new byte[]{1, 2, 3}, c.call(ECHO_BYTES, new byte[]{1, 2, 3}), "old ones keep working");
                }
                clients.remove(0).close();
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                RpcClient again = null;
                while (again == null) {
                    try {
                        again = RpcClient.builder().address(server.address()).rdma(RdmaTestEnv.smallConfig()).connect();
                    } catch (RpcException retry) {
                        assertEquals(Status.RESOURCE_EXHAUSTED, retry.status());
                        assertTrue(System.nanoTime() < deadline, "room did not come back after a close");
                        Thread.sleep(20);
                    }
                }
                clients.add(again);
                assertArrayEquals(new byte[]{4}, again.call(ECHO_BYTES, new byte[]{4}));
            } finally {
                for (RpcClient c : clients) {
                    c.close();
                }
            }
            recording.stop();
            recording.dump(jfr);
            List<jdk.jfr.consumer.RecordedEvent> events = jdk.jfr.consumer.RecordingFile.readAllEvents(jfr);
            assertTrue(events.stream().anyMatch(e -> e.getEventType().getName().equals("rdmarpc.RdmaPoolPressure")
                    && e.getString("what").equals("connection refused")), "a pool-pressure event for the refusal");
            assertTrue(events.stream().anyMatch(e -> e.getEventType().getName().equals("rdmarpc.RdmaQpState")
                    && e.getString("state").equals("RTS")), "queue pairs reaching RTS");
            assertTrue(events.stream().anyMatch(e -> e.getEventType().getName().equals("rdmarpc.RdmaQpState")
                    && e.getString("state").equals("ERR")), "a queue pair closing");
        } finally {
            java.nio.file.Files.deleteIfExists(jfr);
        }
    }

    /**
     * Split SENDs (the client's rendezvous off): a registered attachment is a scatter entry of the SENDs
     * that carry it, and no large buffer is needed. By rendezvous (the default from 1 MiB) a frame's head
     * always takes a large buffer of its own; that path is {@link RendezvousRdmaTest}'s.
     */
    @Test
    void attachmentsInRegisteredMemoryAreSentWithoutACopy() throws Exception {
        try (RdmaTransport serverT = RdmaTransport.create(RdmaTestEnv.smallConfig());
             RdmaTransport clientT = RdmaTransport.create(RdmaTestEnv.smallConfig().send(s -> s.rendezvousThreshold(0)));
             RpcServer server = echoServer().transport(serverT).start();
             Arena arena = Arena.ofShared()) {
            MemorySegment blob = arena.allocate(4 << 20);
            for (long i = 0; i < blob.byteSize(); i += 8) {
                blob.set(ValueLayout.JAVA_LONG_UNALIGNED, i, i * 0x9E3779B97F4A7C15L);
            }
            try (RegisteredMemory reg = clientT.register(blob);
                 RpcClient client = RpcClient.builder().address(server.address()).transport(clientT).connect()) {
                Method<MemorySegment, Long> hashCall = Method.of(ATTACHMENT_HASH.name(), Codecs.SEGMENT, Codecs.LONG);
                long sent = 0;
                for (int size : new int[]{4096, 100_000, 1 << 20, 3 << 20}) {
                    MemorySegment part = reg.segment().asSlice(size % 4096, size);
                    CallOptions opts = CallOptions.DEFAULT.withAttachment(Attachment.of(part));
                    long h = client.call(hashCall, arena.allocate(10), opts);
                    assertEquals(hash(part), h, "attachment of " + size + " bytes arrived intact");
                    sent += size;
                }
                assertEquals(sent, clientT.metrics().zeroCopyBytes(), "every attachment byte sent in place");
                assertEquals(0, clientT.bufferPool().largeAllocations(), "no large send buffer was needed");
                // Small or unregistered attachments are copied, and still arrive.
                MemorySegment heap = MemorySegment.ofArray(new byte[50_000]).fill((byte) 5);
                long h = client.call(hashCall, arena.allocate(1), CallOptions.DEFAULT.withAttachment(Attachment.of(heap)));
                assertEquals(hash(heap), h);
                assertEquals(sent, clientT.metrics().zeroCopyBytes());
            }
        }
    }

    /** sendInPlace over RDMA copies its payload (only TCP writes it in place): echoes stay exact, the caller may reuse it once it hears. */
    @Test
    void sendInPlaceCopiesOverRdmaAndEchoesExactly() throws Exception {
        try (RdmaTransport serverT = RdmaTransport.create(RdmaTestEnv.smallConfig());
             RdmaTransport clientT = RdmaTransport.create(RdmaTestEnv.smallConfig());
             RpcServer server = echoServer().transport(serverT).start();
             RpcClient client = RpcClient.builder().address(server.address()).transport(clientT)
                     .defaultTimeout(java.time.Duration.ofSeconds(20)).connect();
             Arena arena = Arena.ofShared()) {
            for (int size : new int[]{100, 16 * 1024, 1 << 20}) {
                MemorySegment payload = arena.allocate(size);
                for (long i = 0; i < size; i++) {
                    payload.set(ValueLayout.JAVA_BYTE, i, (byte) (i * 7 + size));
                }
                MemorySegment expected = arena.allocate(size).copyFrom(payload);
                java.util.concurrent.CompletableFuture<Boolean> done = new java.util.concurrent.CompletableFuture<>();
                assertTrue(client.sendInPlace(ECHO, payload, new ResponseListener() {
                    @Override
                    public void onResponse(long tag, ResponseView r) {
                        done.complete(r.payloadLength() == size && MemorySegment.mismatch(r.buffer(), r.payloadOffset(),
                                r.payloadOffset() + size, expected, 0, size) == -1);
                        payload.fill((byte) 0);
                    }

                    @Override
                    public void onError(long tag, RpcException e) {
                        done.completeExceptionally(e);
                    }
                }, size));
                assertTrue(done.get(30, TimeUnit.SECONDS), "echo of " + size + " bytes");
            }
        }
    }
}
