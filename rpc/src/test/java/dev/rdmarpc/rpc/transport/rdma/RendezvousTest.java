package dev.rdmarpc.rpc.transport.rdma;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.rdmarpc.rpc.protocol.FrameDescriptor;
import dev.rdmarpc.rpc.protocol.FrameHeader;
import dev.rdmarpc.rpc.protocol.FrameHeaderEncoder;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import org.junit.jupiter.api.Test;

/** The rendezvous descriptor's codec and the checks a received one must pass, without a device. */
class RendezvousTest {
    private static final int MAX_FRAME = 16 << 20;

    /** A response frame's header: {@code frameLength} bytes, 100 of payload, the rest attachment. */
    private static MemorySegment frame(Arena arena, int frameLength) {
        MemorySegment f = arena.allocate(FrameDescriptor.HEADER_LENGTH);
        new FrameHeaderEncoder().wrap(f, 0).type(FrameDescriptor.TYPE_RESPONSE).requestId(7).methodId(1)
                .status(FrameDescriptor.STATUS_OK).payloadLength(Math.min(100, frameLength - FrameDescriptor.HEADER_LENGTH))
                .attachmentLength(Math.max(0, frameLength - FrameDescriptor.HEADER_LENGTH - 100));
        return f;
    }

    private static MemorySegment descriptor(Arena arena, int frameLength, int... partLengths) {
        return descriptor(arena, frame(arena, Math.max(frameLength, FrameDescriptor.HEADER_LENGTH)), frameLength,
                partLengths);
    }

    private static MemorySegment descriptor(Arena arena, MemorySegment frame, int frameLength, int... partLengths) {
        MemorySegment d = arena.allocate(Rendezvous.MAX_DESCRIPTOR);
        Rendezvous.writeHeader(d, 0, frameLength, partLengths.length, frame);
        for (int j = 0; j < partLengths.length && j < Rendezvous.MAX_PARTS; j++) {
            Rendezvous.writePart(d, 0, j, 0x7F00_0000_1000L + j, 0x1234_5600 + j, partLengths[j]);
        }
        return d;
    }

    @Test
    void aDescriptorRoundTrips() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment d = descriptor(arena, 1 << 20, 100, (1 << 20) - 100);
            assertEquals(72, Rendezvous.descriptorLength(2));
            assertNull(Rendezvous.check(d, 0, 72, MAX_FRAME));
            assertEquals(1 << 20, Rendezvous.frameLength(d, 0));
            assertEquals(2, Rendezvous.parts(d, 0));
            assertEquals(0x7F00_0000_1001L, Rendezvous.partAddress(d, 0, 1));
            assertEquals(0x1234_5601, Rendezvous.partKey(d, 0, 1));
            assertEquals((1 << 20) - 100, Rendezvous.partLength(d, 0, 1));
            // the frame's header travels in the descriptor: the receiver knows the call and the attachment first
            assertEquals(7, FrameHeader.requestId(d, Rendezvous.HEADER_OFFSET));
            assertEquals((1 << 20) - FrameDescriptor.HEADER_LENGTH - 100, FrameHeader.attachmentLength(d, Rendezvous.HEADER_OFFSET));
        }
    }

    @Test
    void malformedDescriptorsAreRefusedWithAReason() {
        try (Arena arena = Arena.ofConfined()) {
            assertBad(descriptor(arena, 4096, 4096), 55, "bytes");                     // shorter than one part
            assertBad(descriptor(arena, 4096, 4096), 72, "parts");                     // length does not match parts
            assertBad(descriptor(arena, 4096, 1000, 1000, 2096), 88, "parts");         // three parts
            assertBad(descriptor(arena, 4096, 4000), 56, "4000 bytes for a frame of 4096");
            assertBad(descriptor(arena, 4096, 4096, 0), 72, "0 bytes");
            assertBad(descriptor(arena, MAX_FRAME + 1, MAX_FRAME + 1), 56, "at most " + MAX_FRAME);
            assertBad(descriptor(arena, FrameDescriptor.HEADER_LENGTH - 1, FrameDescriptor.HEADER_LENGTH - 1), 56,
                    "bytes");
            assertBad(descriptor(arena, -1, -1), 56, "4294967295 bytes");
            // the header copy must be a frame header, of the descriptor's frame
            assertBad(descriptor(arena, frame(arena, 8192), 4096, 4096), 56, "header says 8192");
            MemorySegment notAFrame = frame(arena, 4096);
            notAFrame.set(java.lang.foreign.ValueLayout.JAVA_INT, 0, 0x12345678);
            assertBad(descriptor(arena, notAFrame, 4096, 4096), 56, "header");
        }
    }

    private static void assertBad(MemorySegment d, int messageLength, String expected) {
        String why = Rendezvous.check(d, 0, messageLength, MAX_FRAME);
        assertTrue(why != null && why.contains(expected), "expected a reason with '" + expected + "', got " + why);
    }
}
