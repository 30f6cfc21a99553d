package dev.rdmarpc.rpc.transport.rdma;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayDeque;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** Credit accounting, and a simulation of two peers that checks no receive queue ever runs dry. */
class CreditsTest {

    @Test
    void consumesGrantedCreditsThenStalls() {
        Credits c = new Credits(2, 8, 8);
        assertTrue(c.tryConsume());
        assertTrue(c.tryConsume());
        assertFalse(c.tryConsume());
        assertTrue(c.isStalled());
        assertEquals(1, c.stalls());
        assertFalse(c.tryConsume());
        assertEquals(1, c.stalls(), "one stall until it is reported");
        int imm = c.nextImm(false);
        assertEquals(Credits.STALLED, imm, "the next message reports the stall");
        assertFalse(c.isStalled());
        assertFalse(c.onImm(3));
        assertEquals(3, c.available());
    }

    @Test
    void returnsRepostedReceivesOnTheNextMessage() {
        Credits c = new Credits(4, 8, 8);
        for (int i = 0; i < 3; i++) {
            c.reposted();
        }
        assertFalse(c.creditOnlyDue(), "3 < half of 8");
        c.reposted();
        assertTrue(c.creditOnlyDue());
        int imm = c.nextImm(true);
        assertEquals(4 | Credits.CREDIT_ONLY, imm);
        assertEquals(0, c.toReturn());
        assertFalse(c.creditOnlyDue());
    }

    @Test
    void growthGrantsRideAlongButDoNotTriggerCreditOnlyMessages() {
        Credits c = new Credits(4, 8, 32);
        assertEquals(8, c.growthStep());
        c.grew(8);
        assertEquals(16, c.depth());
        assertEquals(8, c.toReturn());
        assertFalse(c.creditOnlyDue(), "grants alone never trigger a credit-only message");
        assertEquals(8, c.nextImm(false) & Credits.CREDITS_MASK);
        c.grew(c.growthStep());
        assertEquals(32, c.depth());
        assertEquals(0, c.growthStep());
        assertThrows(IllegalArgumentException.class, () -> c.grew(1));
    }

    @Test
    void rejectsReservedBits() {
        Credits c = new Credits(1, 1, 1);
        assertThrows(IllegalArgumentException.class, () -> c.onImm(1 << 25));
        assertThrows(IllegalArgumentException.class, () -> c.onImm(1 << 31));
        c.onImm(Credits.RENDEZVOUS | (Credits.MAX_DONE << Credits.DONE_SHIFT)); // the rendezvous bits are known
        assertThrows(IllegalArgumentException.class, () -> new Credits(0, 1, 1));
        assertThrows(IllegalArgumentException.class, () -> new Credits(1, 2, 1));
    }

    @Test
    void aStalledPeerGetsWhatIsOwedEvenBelowTheThreshold() {
        Credits c = new Credits(8, 8, 32);
        for (int i = 0; i < 8; i++) {
            c.received(); // the peer used all 8 credits it was given
        }
        c.reposted();
        assertTrue(c.creditOnlyDue(), "1 owed, the peer has none left");
        c.nextImm(true);
        assertEquals(1, c.peerAvailable());
        assertFalse(c.creditOnlyDue());
        c.received();
        c.grew(8);
        assertTrue(c.creditOnlyDue(), "grants alone go when the peer is out of credits");
        assertEquals(8, c.nextImm(true) & Credits.CREDITS_MASK);
    }

    /**
     * Two peers with random traffic, random delivery delays (in order per direction), random
     * handling delays and depth growth: every message must find a posted receive (safety), and once
     * the randomness stops, everything each side wanted to send must get through (liveness).
     */
    @Test
    void simulatedPeersNeverOverrunTheReceiveQueueAndNeverStall() {
        assertEquals(0, simulate(false, 0, false));
    }

    /**
     * The same with rendezvous: each side keeps its last credit for done reports (data messages take
     * a credit only while more than one is left; a done report, now and then, may take the last), and
     * counts the peer's kept credit as spent for credit-only rule (b).
     */
    @Test
    void simulatedPeersThatKeepACreditForDoneReportsNeverOverrunAndNeverStall() {
        assertEquals(0, simulate(true, 1, true), "with done reports now and then");
        assertEquals(0, simulate(true, 1, false), "with none: small messages only");
    }

    /**
     * Without counting the kept credit as spent, peers that keep one and have no done report to send
     * (small messages only) end up waiting for each other: what the VM showed.
     */
    @Test
    void countingAKeptCreditAsAvailableStalls() {
        int stalled = simulate(true, 0, false);
        System.out.println("kept credit counted as available: " + stalled + " of 300 runs stalled");
        assertTrue(stalled > 0, "some runs stall");
    }

    @Test
    void aPeerDownToItsKeptCreditGetsWhatIsOwed() {
        Credits c = new Credits(8, 8, 32, 1);
        for (int i = 0; i < 7; i++) {
            c.received(); // the peer used 7 of its 8 credits and keeps the last
        }
        c.reposted();
        assertTrue(c.creditOnlyDue(), "1 owed, the peer is down to the credit it keeps");
        c.nextImm(true);
        assertEquals(2, c.peerAvailable());
        assertFalse(c.creditOnlyDue());
        assertFalse(new Credits(8, 8, 32, 0).creditOnlyDue());
        assertThrows(IllegalArgumentException.class, () -> new Credits(8, 1, 32, 1), "a reserve must leave a credit to use");
    }

    /**
     * Two peers with random traffic, random delivery delays (in order per direction), random
     * handling delays and depth growth: every message must find a posted receive (safety, checked
     * always), and once the randomness stops, everything each side wanted to send must get through
     * (liveness).
     *
     * @param keep        whether each side keeps its last credit for done reports
     * @param reserve     the peer's kept credits as each side counts them for rule (b)
     * @param doneReports whether done reports are owed now and then
     * @return how many of the 300 runs stalled
     */
    private static int simulate(boolean keep, int reserve, boolean doneReports) {
        Random rnd = new Random(42);
        int stalled = 0;
        for (int run = 0; run < 300; run++) {
            int depth = (keep ? 2 : 1) + rnd.nextInt(16);
            int max = depth + rnd.nextInt(3) * depth;
            Peer a = new Peer(depth, max, keep, reserve);
            Peer b = new Peer(depth, max, keep, reserve);
            for (int step = 0; step < 5_000; step++) {
                Peer p = rnd.nextBoolean() ? a : b;
                Peer q = p == a ? b : a;
                switch (rnd.nextInt(doneReports ? 6 : 5)) {
                    case 0, 1 -> p.wantToSend += rnd.nextInt(4);
                    case 2 -> p.deliverOne(q);
                    case 3 -> p.handleOne(rnd);
                    case 5 -> p.doneOwed++;
                    default -> p.flush();
                }
            }
            // Liveness: only event-driven work from here (a flush after handling, as the transport does),
            // after the flush that ends the last event of the random phase.
            a.flush();
            b.flush();
            for (int i = 0; i < 100_000 && (a.busy() || b.busy()); i++) {
                Peer p = (i & 1) == 0 ? a : b;
                Peer q = p == a ? b : a;
                p.deliverOne(q);
                if (p.handleOne(rnd)) {
                    p.flush();
                }
            }
            if (a.busy() || b.busy()) {
                stalled++;
            }
        }
        return stalled;
    }

    private static final class Peer {
        final Credits credits;
        int posted;
        int wantToSend;
        int doneOwed;
        final int keep;
        final ArrayDeque<Integer> wire = new ArrayDeque<>(); // imm values in flight towards the peer
        final ArrayDeque<Integer> received = new ArrayDeque<>(); // consumed receives awaiting handling

        Peer(int depth, int max, boolean keep, int reserve) {
            this.posted = depth + RdmaConfig.RESERVED_RECEIVES;
            this.keep = keep ? 1 : 0;
            this.credits = new Credits(depth, depth, max, reserve);
        }

        boolean busy() {
            return wantToSend > 0 || doneOwed > 0 || !wire.isEmpty() || !received.isEmpty();
        }

        void flush() {
            while (wantToSend > 0 && credits.tryConsume(keep)) {
                wantToSend--;
                doneOwed = 0; // a data message carries the done reports owed
                wire.add(credits.nextImm(false));
            }
            if (doneOwed > 0 && credits.tryConsume()) { // an empty data message for them, as RdmaSender does
                doneOwed = 0;
                wire.add(credits.nextImm(false));
            }
            if (credits.creditOnlyDue()) {
                wire.add(credits.nextImm(true));
            }
        }

        void deliverOne(Peer to) {
            Integer imm = wire.poll();
            if (imm == null) {
                return;
            }
            if (to.posted == 0) {
                throw new AssertionError("RNR: a message arrived with no receive posted");
            }
            to.posted--;
            to.credits.onImm(imm);
            if ((imm & Credits.CREDIT_ONLY) != 0) {
                to.posted++; // re-posted at once
            } else {
                to.credits.received();
                to.received.add(imm);
            }
            if (to.wantToSend > 0 || to.doneOwed > 0) {
                to.flush(); // credits arrived: what was waiting may go (the transport schedules a flush)
            }
        }

        boolean handleOne(Random rnd) {
            Integer imm = received.poll();
            if (imm == null) {
                return false;
            }
            posted++;
            credits.reposted();
            if ((imm & Credits.STALLED) != 0 && rnd.nextBoolean()) {
                int add = credits.growthStep();
                posted += add;
                credits.grew(add);
            }
            return true;
        }

        @Override
        public String toString() {
            return "Peer[posted=" + posted + ", want=" + wantToSend + ", wire=" + wire.size() + ", received="
                    + received.size() + ", " + credits + "]";
        }
    }
}
