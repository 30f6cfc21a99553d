package dev.rdmarpc.ibverbs.verbs;

import org.junit.jupiter.api.Test;

import java.util.HashSet;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

/**
 * Memory-window arithmetic without a device: {@link MemoryWindow#nextRkey(int)} is
 * {@code ibv_inc_rkey}. (Binding, invalidation and the window's lifecycle need a device:
 * {@code MemoryWindowRdmaTest}; the work-request fields are in {@code WorkRequestLayoutTest}.)
 */
class MemoryWindowTest {
    /** {@code ibv_inc_rkey} of verbs.h, transcribed. */
    private static int ibvIncRkey(int rkey) {
        int mask = 0x000000ff;
        int newtag = (rkey + 1) & mask;
        return (rkey & ~mask) | newtag;
    }

    @Test
    void nextRkeyCountsTheLowByteAndKeepsTheIndex() {
        assertEquals(0x12345601, MemoryWindow.nextRkey(0x12345600));
        assertEquals(0x123456A8, MemoryWindow.nextRkey(0x123456A7));
        assertEquals(0x12345600, MemoryWindow.nextRkey(0x123456FF), "the tag wraps; no carry into the index");
        assertEquals(0xFFFFFF00, MemoryWindow.nextRkey(0xFFFFFFFF));
        assertEquals(0x00000001, MemoryWindow.nextRkey(0));
        assertEquals(0x80000000, MemoryWindow.nextRkey(0x800000FF), "the sign bit is part of the index");
        for (int rkey : new int[] {0, 1, 0xFE, 0xFF, 0x100, 0x17ABCDFF, 0x7FFFFFFF, 0x80000000, -1, -256}) {
            assertEquals(ibvIncRkey(rkey), MemoryWindow.nextRkey(rkey), Integer.toHexString(rkey));
        }
    }

    @Test
    void everyNextKeyDiffersInTheLowByteUntilTheTagComesRound() {
        int first = 0x00ABCD17;
        Set<Integer> seen = new HashSet<>();
        int rkey = first;
        for (int i = 0; i < 256; i++) {
            int next = MemoryWindow.nextRkey(rkey);
            assertNotEquals(rkey & 0xff, next & 0xff, "binding " + i);
            assertEquals(first & 0xffffff00, next & 0xffffff00, "binding " + i);
            seen.add(next);
            rkey = next;
        }
        assertEquals(256, seen.size(), "256 distinct keys");
        assertEquals(first, rkey, "the 256th binding reuses the first key");
    }
}
