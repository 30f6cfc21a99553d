package dev.rdmarpc.rpc.transport.rdma;

import static dev.rdmarpc.rpc.transport.rdma.RdmaRpcTest.ECHO;
import static dev.rdmarpc.rpc.transport.rdma.RdmaRpcTest.echoServer;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.rdmarpc.ibverbs.verbs.ResourceKind;
import dev.rdmarpc.ibverbs.verbs.VerbsResources;
import dev.rdmarpc.rpc.RpcClient;
import dev.rdmarpc.rpc.RpcException;
import dev.rdmarpc.rpc.RpcServer;
import dev.rdmarpc.rpc.Status;
import dev.rdmarpc.testsupport.RdmaTest;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Keys at the transport level (issue 47, point 4): a peer that reads a rendezvous frame with the key of
 * an earlier frame, one it reported done and whose key the sender revoked, is refused by the sender's
 * device (remote access error); its connection closes and says why, and the sender loses nothing else.
 * The attacking client replays the key through a test hook of its transport
 * ({@link RdmaTransport#descriptorHookForTests}), which rewrites the parts of the descriptor it is about
 * to read with those of the first frame it read.
 */
@RdmaTest
@Timeout(120)
class StaleKeyRdmaTest {
    private static final int SIZE = 1 << 20;

    private static RdmaConfig config() {
        return RdmaTestEnv.smallConfig().send(s -> s.rendezvousThreshold(RdmaConfig.SUGGESTED_RENDEZVOUS_THRESHOLD));
    }

    private static RpcClient client(RpcServer server, RdmaTransport t) throws Exception {
        return RpcClient.builder().address(server.address()).transport(t).defaultTimeout(Duration.ofSeconds(30)).connect();
    }

    private static MemorySegment pattern(Arena arena, int size, int seed) {
        MemorySegment s = arena.allocate(size, 8);
        for (long i = 0; i < size; i += 8) {
            s.set(ValueLayout.JAVA_LONG_UNALIGNED, i, (i + seed) * 0x9E3779B97F4A7C15L);
        }
        return s;
    }

    private static void assertEcho(RpcClient client, MemorySegment payload) {
        MemorySegment back = client.call(ECHO, payload);
        assertEquals(-1, back.mismatch(payload), "echo of " + payload.byteSize() + " bytes");
    }

    private static void await(String what, Duration timeout, BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!condition.getAsBoolean()) {
            assertTrue(System.nanoTime() - deadline < 0, "timed out waiting for " + what);
            Thread.sleep(5);
        }
    }

    /** Keeps the parts of the first descriptor it sees; once armed, writes them over the next one's. */
    private static final class StaleKeys implements RdmaReceiver.DescriptorHook {
        private long[] addresses;
        private int[] keys;
        private int[] lengths;
        volatile boolean armed;
        volatile int replayed;

        @Override
        public void beforeRead(MemorySegment d, int length) {
            int n = Rendezvous.parts(d, 0);
            if (addresses == null) {
                addresses = new long[n];
                keys = new int[n];
                lengths = new int[n];
                for (int j = 0; j < n; j++) {
                    addresses[j] = Rendezvous.partAddress(d, 0, j);
                    keys[j] = Rendezvous.partKey(d, 0, j);
                    lengths[j] = Rendezvous.partLength(d, 0, j);
                }
            } else if (armed && replayed == 0 && sameShape(d, n)) { // else not replayed: the test fails
                for (int j = 0; j < n; j++) {
                    Rendezvous.writePart(d, 0, j, addresses[j], keys[j], lengths[j]);
                }
                replayed++;
            }
        }

        private boolean sameShape(MemorySegment d, int n) {
            if (n != addresses.length) {
                return false;
            }
            for (int j = 0; j < n; j++) {
                if (Rendezvous.partLength(d, 0, j) != lengths[j]) {
                    return false;
                }
            }
            return true;
        }
    }

    /**
     * A good client and an attacking one share the server. The attacker reads a 1 MiB response by
     * rendezvous and reports it done (with its next request, whose answer comes after the server
     * revoked that frame's key); then it reads the next 1 MiB response with the first one's address and
     * key. Its READ fails with a remote access error, its call fails with {@code CONNECTION_CLOSED}
     * naming the refused key, and the server closes its side: its queue pairs and the server's buffers
     * are back to what they were with the good client alone, which keeps working, as does a new client;
     * after close every verbs resource is back.
     */
    @Test
    void aPeerThatReadsWithAStaleKeyIsRefusedAndClosedAndTheServerLosesNothingElse() throws Exception {
        Map<ResourceKind, Long> before = VerbsResources.snapshot();
        StaleKeys hook = new StaleKeys();
        try (RdmaTransport serverT = RdmaTransport.create(config());
             RdmaTransport goodT = RdmaTransport.create(config());
             RdmaTransport badT = RdmaTransport.create(config());
             RpcServer server = echoServer().transport(serverT).start();
             RpcClient good = client(server, goodT);
             Arena arena = Arena.ofShared()) {
            badT.descriptorHookForTests = hook;
            assertEcho(good, pattern(arena, SIZE, 1));
            assertEcho(good, pattern(arena, 64, 2)); // reports the frame done: the server releases it
            Thread.sleep(200);
            long qps = VerbsResources.live(ResourceKind.QUEUE_PAIR);
            long serverBytes = serverT.bytesInUse();
            long goodRead = goodT.metrics().rendezvousRead();
            try (RpcClient bad = client(server, badT)) {
                assertEcho(bad, pattern(arena, SIZE, 3)); // read by rendezvous: the hook keeps its parts
                assertEcho(bad, pattern(arena, 64, 4)); // carries the done report; its key is revoked before the answer
                assertEquals(1, badT.metrics().rendezvousRead(), badT.metrics().toString());
                hook.armed = true;
                CompletableFuture<MemorySegment> call = bad.callAsync(ECHO, pattern(arena, SIZE, 5));
                ExecutionException e = assertThrows(ExecutionException.class, () -> call.get(30, TimeUnit.SECONDS));
                assertEquals(1, hook.replayed, "the stale key was replayed");
                RpcException re = assertInstanceOf(RpcException.class, e.getCause());
                System.out.println("the attacker's call failed: " + re.getMessage());
                assertEquals(Status.CONNECTION_CLOSED, re.status(), re.getMessage());
                assertTrue(re.getMessage().contains("REM_ACCESS_ERR"), re.getMessage());
                assertTrue(re.getMessage().contains("the peer refused the key"), re.getMessage());
                assertEquals(1, badT.metrics().rendezvousRead(), "nothing more was read: " + badT.metrics());
                assertEquals(1, badT.metrics().completionErrors(), badT.metrics().toString());
                assertFalse(bad.isOpen());
                await("the attacker's queue pairs and the server's buffers back, " + serverT.metrics(), Duration.ofSeconds(20),
                        () -> VerbsResources.live(ResourceKind.QUEUE_PAIR) == qps && serverT.bytesInUse() == serverBytes);
                System.out.println("server after the attack: " + serverT.metrics());
            }
            assertEcho(good, pattern(arena, SIZE, 6));
            assertEquals(goodRead + 1, goodT.metrics().rendezvousRead(), "the good client still reads by rendezvous");
            try (RpcClient again = client(server, goodT)) {
                assertEcho(again, pattern(arena, SIZE, 7));
            }
            assertEquals(0, goodT.metrics().completionErrors(), goodT.metrics().toString());
        }
        assertEquals(before, VerbsResources.snapshot(), "live verbs resources after close");
    }
}
