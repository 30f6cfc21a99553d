package dev.rdmarpc.rpc.transport.rdma;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.rdmarpc.rpc.protocol.FrameDescriptor;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import org.junit.jupiter.api.Test;

/** The rendezvous descriptor's codec and the checks a received one must pass, without a device. */
class RendezvousTest {
    private static final int MAX_FRAME = 16 << 20;

    private static MemorySegment descriptor(Arena arena, int frameLength, int... partLengths) {
        MemorySegment d = arena.allocate(Rendezvous.MAX_DESCRIPTOR);
        Rendezvous.writeHeader(d, 0, frameLength, partLengths.length);
        for (int j = 0; j < partLengths.length && j < Rendezvous.MAX_PARTS; j++) {
            Rendezvous.writePart(d, 0, j, 0x7F00_0000_1000L + j, 0x1234_5600 + j, partLengths[j]);
        }
        return d;
    }

    @Test
    void aDescriptorRoundTrips() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment d = descriptor(arena, 1 << 20, 100, (1 << 20) - 100);
            assertEquals(40, Rendezvous.descriptorLength(2));
            assertNull(Rendezvous.check(d, 0, 40, MAX_FRAME));
            assertEquals(1 << 20, Rendezvous.frameLength(d, 0));
            assertEquals(2, Rendezvous.parts(d, 0));
            assertEquals(0x7F00_0000_1001L, Rendezvous.partAddress(d, 0, 1));
            assertEquals(0x1234_5601, Rendezvous.partKey(d, 0, 1));
            assertEquals((1 << 20) - 100, Rendezvous.partLength(d, 0, 1));
        }
    }

    @Test
    void malformedDescriptorsAreRefusedWithAReason() {
        try (Arena arena = Arena.ofConfined()) {
            assertBad(descriptor(arena, 4096, 4096), 23, "bytes");                     // shorter than one part
            assertBad(descriptor(arena, 4096, 4096), 40, "parts");                     // length does not match parts
            assertBad(descriptor(arena, 4096, 1000, 1000, 2096), 56, "parts");         // three parts
            assertBad(descriptor(arena, 4096, 4000), 24, "4000 bytes for a frame of 4096");
            assertBad(descriptor(arena, 4096, 4096, 0), 40, "0 bytes");
            assertBad(descriptor(arena, MAX_FRAME + 1, MAX_FRAME + 1), 24, "at most " + MAX_FRAME);
            assertBad(descriptor(arena, FrameDescriptor.HEADER_LENGTH - 1, FrameDescriptor.HEADER_LENGTH - 1), 24,
                    "bytes");
            assertBad(descriptor(arena, -1, -1), 24, "4294967295 bytes");
        }
    }

    private static void assertBad(MemorySegment d, int messageLength, String expected) {
        String why = Rendezvous.check(d, 0, messageLength, MAX_FRAME);
        assertTrue(why != null && why.contains(expected), "expected a reason with '" + expected + "', got " + why);
    }
}
