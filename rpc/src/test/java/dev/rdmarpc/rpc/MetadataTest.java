package dev.rdmarpc.rpc;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.rdmarpc.rpc.protocol.MetadataBlock;
import java.lang.foreign.MemorySegment;
import java.util.List;
import org.junit.jupiter.api.Test;

/** {@link Metadata}'s rules and its block encoding, read back by {@link MetadataView} and {@link MetadataBlock}. */
class MetadataTest {
    @Test
    void keysAreCheckedWhenAdded() {
        for (String bad : List.of("", "Upper", "sp ace", "colon:", "ü", "x".repeat(256))) {
            assertThrows(IllegalArgumentException.class, () -> Metadata.of(bad, "v"), bad);
        }
        assertEquals("x".repeat(255), Metadata.of("x".repeat(255), "v").keys().get(0));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Metadata.of("token-bin", "text"));
        assertTrue(e.getMessage().contains("ends in -bin"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> Metadata.EMPTY.with("token", new byte[1]));
        assertTrue(e.getMessage().contains("-bin"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> Metadata.EMPTY.with("big-bin", new byte[65_536]));
        assertTrue(e.getMessage().contains("at most 65535"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> Metadata.of("k", "v").get("k-bin"));
    }

    @Test
    void immutableWithReplaceAndRemove() {
        byte[] bytes = {1, 2};
        Metadata a = Metadata.of("a", "1");
        Metadata b = a.with("b-bin", bytes).with("a", "2");
        bytes[0] = 9;
        assertEquals("1", a.get("a"));
        assertEquals(1, a.size());
        assertEquals(List.of("a", "b-bin"), b.keys());
        assertEquals("2", b.get("a"));
        assertArrayEquals(new byte[] {1, 2}, b.getBytes("b-bin"), "copied when added");
        assertEquals(4 + (3 + 1 + 1) + (3 + 5 + 2), b.encodedLength());
        Metadata c = b.without("a");
        assertEquals(List.of("b-bin"), c.keys());
        assertEquals(4 + 3 + 5 + 2, c.encodedLength());
        assertSame(c, c.without("missing"));
        assertNull(c.get("a"));
        assertEquals(Metadata.of("b-bin", new byte[0]).with("b-bin", new byte[] {1, 2}), c);
        assertEquals(a.withAll(Metadata.of("a", "x").with("z", "y")), Metadata.of("a", "x").with("z", "y"));
        assertEquals(4, Metadata.EMPTY.encodedLength());
        assertTrue(Metadata.EMPTY.isEmpty());
        assertEquals("Metadata{a=2, b-bin=AQI=}", b.toString());
    }

    @Test
    void theBlockReadsBackInPlaceAndOnTheHeap() {
        Metadata md = Metadata.of("trace-id", "abc").with("tenant", "zürich").with("key-bin", new byte[] {0, -1});
        MemorySegment buf = MemorySegment.ofArray(new byte[100]);
        md.writeTo(buf, 10);
        assertEquals(null, MetadataBlock.check(buf, 10, md.encodedLength()));
        assertEquals(md, Metadata.readFrom(buf, 10));
        MetadataView view = new MetadataView().wrap(buf, 10, md.encodedLength());
        assertEquals(3, view.size());
        assertEquals("zürich", view.get("tenant"));
        assertEquals(2, view.valueLength("key-bin"));
        assertEquals(-1, buf.get(java.lang.foreign.ValueLayout.JAVA_BYTE, view.valueOffset("key-bin") + 1));
        assertTrue(view.valueEquals("trace-id", "abc".getBytes()));
        assertFalse(view.valueEquals("trace-id", "abd".getBytes()));
        assertEquals(-1, view.valueOffset("absent"));
        assertFalse(view.containsKey("trace"), "no prefix match");
        assertTrue(new MetadataView().wrap(buf, 10, 0).isEmpty(), "a frame without metadata");
        assertTrue(MetadataBlock.check(buf, 10, md.encodedLength() - 1).contains("not within the payload"));
    }

    @Test
    void anInstanceWrittenAgainAndAgainWritesTheSameBlockAndKeepsItsHash() {
        Metadata md = Metadata.of("path", "/pkg.Svc/Call").with("token-bin", new byte[] {1, 2, 3}).with("tenant", "t");
        int hash = md.hashCode();
        try (java.lang.foreign.Arena arena = java.lang.foreign.Arena.ofConfined()) {
            byte[] first = null;
            for (int i = 0; i < 4; i++) { // the first writes encode, the later ones copy the block kept
                MemorySegment buf = arena.allocate(7 + md.encodedLength());
                buf.fill((byte) 0x55);
                md.writeTo(buf, 7);
                byte[] written = buf.asSlice(7).toArray(java.lang.foreign.ValueLayout.JAVA_BYTE);
                if (first == null) {
                    first = written;
                }
                assertArrayEquals(first, written, "write " + i);
                assertEquals(md, Metadata.readFrom(buf, 7), "write " + i);
                assertEquals(0x55, buf.get(java.lang.foreign.ValueLayout.JAVA_BYTE, 6) & 0xff, "nothing written before the block");
            }
        }
        assertEquals(hash, md.hashCode());
        assertEquals(hash, Metadata.of("path", "/pkg.Svc/Call").with("token-bin", new byte[] {1, 2, 3}).with("tenant", "t").hashCode());
    }
}
