package dev.rdmarpc.rpc.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;

import dev.rdmarpc.rpc.Metadata;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import org.junit.jupiter.api.Test;

/** {@link MetadataReader}: a repeated block gives the instance read before, anything else reads as {@link Metadata#readFrom}. */
class MetadataReaderTest {
    /** Writes {@code md}'s block at {@code at} of a native segment, as a frame carries it. */
    private static MemorySegment block(Arena arena, Metadata md, long at) {
        MemorySegment buf = arena.allocate(at + md.encodedLength());
        md.writeTo(buf, at);
        return buf;
    }

    @Test
    void aRepeatedBlockGivesTheInstanceReadBefore() {
        MetadataReader reader = new MetadataReader();
        Metadata sent = Metadata.of("path", "/pkg.Svc/Call").with("authority", "host:1").with("token-bin", new byte[] {1, 2, 3});
        try (Arena arena = Arena.ofConfined()) {
            Metadata first = reader.read(block(arena, sent, 0), 0);
            assertEquals(sent, first);
            // the same bytes elsewhere, in another buffer and at another offset: the same instance
            assertSame(first, reader.read(block(arena, sent, 37), 37));
            // one byte of a value differs, the length is the same: read again, not the stale instance
            Metadata other = sent.with("authority", "host:2");
            Metadata second = reader.read(block(arena, other, 5), 5);
            assertEquals(other, second);
            assertEquals("host:2", second.get("authority"));
            assertSame(first, reader.read(block(arena, sent, 0), 0));
            assertSame(second, reader.read(block(arena, other, 0), 0));
        }
    }

    @Test
    void keepsTheLastFewDistinctBlocksAndForgetsTheOldest() {
        MetadataReader reader = new MetadataReader();
        try (Arena arena = Arena.ofConfined()) {
            Metadata[] read = new Metadata[MetadataReader.SLOTS + 1];
            for (int i = 0; i < read.length; i++) {
                read[i] = reader.read(block(arena, Metadata.of("k", "v" + i), 0), 0);
            }
            for (int i = 1; i < read.length; i++) {
                assertSame(read[i], reader.read(block(arena, Metadata.of("k", "v" + i), 0), 0), "slot " + i);
            }
            Metadata again = reader.read(block(arena, Metadata.of("k", "v0"), 0), 0); // the oldest was replaced
            assertNotSame(read[0], again);
            assertEquals(read[0], again);
        }
    }

    @Test
    void aBlockOverTheLimitIsReadButNotKept() {
        MetadataReader reader = new MetadataReader();
        Metadata big = Metadata.of("big", "x".repeat(MetadataReader.MAX_KEPT));
        try (Arena arena = Arena.ofConfined()) {
            Metadata first = reader.read(block(arena, big, 0), 0);
            Metadata second = reader.read(block(arena, big, 0), 0);
            assertEquals(big, first);
            assertEquals(big, second);
            assertNotSame(first, second);
        }
    }

    @Test
    void afterManyNewBlocksARepeatIsStillFoundAgain() {
        MetadataReader reader = new MetadataReader();
        try (Arena arena = Arena.ofConfined()) {
            for (int i = 0; i < 10 * MetadataReader.MISSES_BEFORE_SPARSE; i++) { // every call a new trace id
                Metadata md = Metadata.of("trace-id", "t" + i);
                assertEquals(md, reader.read(block(arena, md, 0), 0));
            }
            Metadata steady = Metadata.of("trace-id", "steady");
            Metadata kept = null;
            for (int i = 0; i <= MetadataReader.MISSES_BEFORE_SPARSE; i++) { // kept within one round of the sparse mode
                Metadata m = reader.read(block(arena, steady, 0), 0);
                if (m == kept) {
                    break;
                }
                kept = m;
            }
            assertSame(kept, reader.read(block(arena, steady, 0), 0));
            assertSame(kept, reader.read(block(arena, steady, 0), 0));
        }
    }
}
