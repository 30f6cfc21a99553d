package dev.rdmarpc.ibverbs.verbs;

import dev.rdmarpc.testsupport.RdmaTest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * RDMA READs through a memory window that the requester retransmits, between the two Soft-RoCE devices of
 * the test VM, every byte checked: what rdmarpc's rendezvous does (the receiver reads a frame through a
 * window its sender bound to it) when the read's responses are late.
 *
 * <p>Side A binds one window over a 4 MiB region with {@code REMOTE_READ}; side B reads all of it through
 * the window's key, in rounds of {@link #READS} reads of 1 MiB posted at once, with the shortest ack timeout
 * ({@code timeout} 1: 8 us, one jiffy in rxe's timer), while threads of the test keep every CPU of the VM
 * busy 6 ms in every 20: rxe's work items then wait for the scheduler now and then past that timeout (a slow responder), so
 * B's requester times out and sends the unanswered reads again, from the first response it has not seen
 * (a partly answered read resumes part way). The test goes {@link #MIN_ROUNDS} rounds, and more until rxe's own counter of such retries on B's
 * device ({@code completer_retry_err} in sysfs) has moved, at most {@link #MAX_ROUNDS}: a run where no read
 * was retried proves nothing and fails. Every round checks each read's completion and every byte it
 * landed against A's memory.
 */
@RdmaTest
class ReadRetransmissionRdmaTest {
    private static final int MIB = 1 << 20;
    private static final int READS = 8;
    private static final int EXPOSED = 4 * MIB;
    private static final int MIN_ROUNDS = 2;
    /** How long the CPU-hogging threads spin, then rest, in turn. */
    private static final long SPIN_NANOS = 6_000_000;
    private static final long REST_NANOS = 14_000_000;
    private static final int MAX_ROUNDS = 10;

    private Map<ResourceKind, Long> before;
    private RdmaSide a;
    private RdmaSide b;
    private MemorySegment exposed;
    private MemoryRegion bindable;
    private MemoryWindow mw;
    private MemorySegment landing;
    private MemoryRegion landingMr;

    @BeforeEach
    void sides() {
        before = VerbsResources.snapshot();
        a = new RdmaSide(RdmaDevices.DEV0, RdmaDevices.ADDR0, 0x1001, init -> { });
        b = new RdmaSide(RdmaDevices.DEV1, RdmaDevices.ADDR1, 0x2002, init -> { });
        exposed = a.arena.allocate(EXPOSED, 4096);
        for (int i = 0; i < EXPOSED; i++) {
            exposed.set(JAVA_BYTE, i, (byte) (i * 31 + (i >>> 12) * 7 + 3));
        }
        bindable = a.pd.register(exposed, Access.LOCAL_WRITE.bit() | Access.MW_BIND.bit());
        mw = a.pd.allocateMemoryWindow();
        landing = b.arena.allocate((long) READS * MIB, 4096);
        landingMr = b.pd.register(landing, Access.LOCAL_WRITE.bit());
        QpEndpoint ea = a.endpoint();
        QpEndpoint eb = b.endpoint();
        a.qp.connect(a.attributes(eb));
        b.qp.connect(b.attributes(ea).timeout(1).retryCount(7));
    }

    @AfterEach
    void close() {
        if (mw != null) {
            mw.close();
        }
        if (bindable != null) {
            bindable.close();
        }
        if (landingMr != null) {
            landingMr.close();
        }
        if (b != null) {
            b.close();
        }
        if (a != null) {
            a.close();
        }
        if (before != null) {
            assertEquals(before, VerbsResources.snapshot(), "every resource of the test was closed");
        }
    }

    @Test
    void retransmittedReadsThroughAWindowLandEveryByte() {
        int key = MemoryWindow.nextRkey(mw.rkey());
        a.sends.get(0).clear().wrId(99).bindMemoryWindow(mw, key, bindable, bindable.address(), EXPOSED,
                Access.REMOTE_READ.bit()).signaled(true);
        assertEquals(0, a.qp.postSend(a.sends, 1));
        a.awaitOne();
        a.expect(WcOpcode.BIND_MW, 99);
        mw.bound(key);

        long retriesBefore = counter(RdmaDevices.DEV1, "completer_retry_err");
        long retries = 0;
        List<String> rounds = new ArrayList<>();
        for (int round = 1; round <= MAX_ROUNDS && (retries == 0 || round <= MIN_ROUNDS); round++) {
            readAll(key, round);
            retries = counter(RdmaDevices.DEV1, "completer_retry_err") - retriesBefore;
            rounds.add("round " + round + ": " + retries + " retries so far");
        }
        System.out.println("ReadRetransmissionRdmaTest: " + rounds + "; duplicate requests at the responder: "
                + counter(RdmaDevices.DEV0, "duplicate_request"));
        assertTrue(retries > 0, "no read was retransmitted in " + MAX_ROUNDS + " rounds: the test proved nothing");
        assertEquals(QpState.RTS, b.qp.state());
    }

    /** One round: {@link #READS} reads of 1 MiB posted at once, each completion and every landed byte checked. */
    private void readAll(int key, int round) {
        landing.fill((byte) 0x5A);
        java.util.concurrent.atomic.AtomicBoolean spin = new java.util.concurrent.atomic.AtomicBoolean(true);
        List<Thread> spinners = new ArrayList<>();
        for (int i = 0; i < Runtime.getRuntime().availableProcessors(); i++) {
            // a slow responder: threads that keep every CPU busy for 6 ms in every 20, so rxe's work items
            // (kernel threads the scheduler shares the CPUs with) wait for their turn, past the ack timeout
            spinners.add(Thread.ofPlatform().daemon().start(() -> {
                while (spin.get()) {
                    long until = System.nanoTime() + SPIN_NANOS;
                    while (System.nanoTime() < until) {
                        Thread.onSpinWait();
                    }
                    java.util.concurrent.locks.LockSupport.parkNanos(REST_NANOS);
                }
            }));
        }
        try {
            postAndCheck(key, round);
        } finally {
            spin.set(false);
            for (Thread t : spinners) {
                try {
                    t.join();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        }
    }

    private void postAndCheck(int key, int round) {
        for (int i = 0; i < READS; i++) {
            long source = (long) (i % (EXPOSED / MIB)) * MIB;
            b.sends.get(i).clear().wrId(round * 100L + i).read(landingMr, (long) i * MIB, MIB,
                    bindable.address() + source, key).signaled(true);
        }
        assertEquals(0, b.qp.postSend(b.sends, READS));
        List<String> done = awaitReads(round);
        for (String d : done) {
            assertTrue(d.contains("SUCCESS"), "round " + round + ": " + done);
        }
        for (int i = 0; i < READS; i++) {
            long source = (long) (i % (EXPOSED / MIB)) * MIB;
            long at = MemorySegment.mismatch(exposed, source, source + MIB, landing, (long) i * MIB, (long) (i + 1) * MIB);
            assertEquals(-1, at, "round " + round + ", read " + i + ": first wrong byte at offset " + at);
        }
    }

    /** B's completions of one round's reads, polled with pauses (the CPUs are busy enough), 120 s at most. */
    private List<String> awaitReads(int round) {
        List<String> got = new ArrayList<>();
        long deadline = System.nanoTime() + 120_000_000_000L;
        while (got.size() < READS) {
            int k = b.cq.poll(b.wc, READS - got.size());
            for (int i = 0; i < k; i++) {
                got.add(b.wc.describe(i));
            }
            if (k == 0) {
                assertTrue(System.nanoTime() < deadline, "round " + round + ": waited 120 s for the reads, got " + got);
                java.util.concurrent.locks.LockSupport.parkNanos(200_000);
            }
        }
        return got;
    }

    /** A counter of rxe's (or another driver's) in sysfs; 0 when the device has none of that name. */
    private static long counter(String device, String name) {
        Path p = Path.of("/sys/class/infiniband", device, "ports/1/hw_counters", name);
        try {
            return Files.exists(p) ? Long.parseLong(Files.readString(p).trim()) : 0;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
