package dev.rdmarpc.rpc.transport.rdma;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.rdmarpc.rpc.protocol.FrameDescriptor;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import org.junit.jupiter.api.Test;

/** The RDMA hello: round trip, refusal, and every malformed field rejected with a reason. */
class HelloTest {

    private static Hello sample() {
        Hello h = new Hello();
        h.qpn = 0x123456;
        h.psn = 0xABCDEF;
        for (int i = 0; i < 16; i++) {
            h.gid[i] = (byte) (i * 17);
        }
        h.lid = 0;
        h.mtu = 3;
        h.receiveSize = 256 * 1024;
        h.receiveCount = 8;
        h.maxFrameLength = 16 << 20;
        h.flags = Hello.FLAG_RENDEZVOUS;
        return h;
    }

    @Test
    void refusalCodesAreTheStatusesTheClientReports() {
        // the transport may not import the API; the codes it writes must still be the API's
        assertEquals(dev.rdmarpc.rpc.Status.PROTOCOL_ERROR.code(), Hello.REFUSED_MALFORMED);
        assertEquals(dev.rdmarpc.rpc.Status.HANDLER_FAILED.code(), Hello.REFUSED_SETUP_FAILED);
        assertEquals(dev.rdmarpc.rpc.Status.RESOURCE_EXHAUSTED.code(), Hello.REFUSED_EXHAUSTED);
    }

    @Test
    void roundTrip() throws Exception {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment buf = arena.allocate(256);
            int len = sample().encode(buf, 7);
            assertEquals(Hello.FRAME_LENGTH, len);
            assertEquals(len, FrameDescriptor.check(buf, 7, len, FrameDescriptor.DEFAULT_MAX_FRAME_LENGTH),
                    "a hello is a valid frame");
            Hello d = new Hello().decode(buf, 7, len);
            Hello s = sample();
            assertEquals(s.qpn, d.qpn);
            assertEquals(s.psn, d.psn);
            assertArrayEquals(s.gid, d.gid);
            assertEquals(s.mtu, d.mtu);
            assertEquals(s.receiveSize, d.receiveSize);
            assertEquals(s.receiveCount, d.receiveCount);
            assertEquals(s.maxFrameLength, d.maxFrameLength);
            assertEquals(Hello.FLAG_RENDEZVOUS, d.flags);
        }
    }

    @Test
    void refusalCarriesStatusAndReason() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment buf = arena.allocate(2048);
            String reason = "buffer pool high-water mark reached";
            int len = Hello.encodeRefusal(buf, 0, 8, reason);
            assertEquals(Hello.refusalLength(reason), len);
            assertTrue(FrameDescriptor.check(buf, 0, len, 1 << 20) > 0);
            Hello.HelloException e = assertThrows(Hello.HelloException.class, () -> new Hello().decode(buf, 0, len));
            assertEquals(8, e.status());
            assertEquals(reason, e.getMessage());
            assertThrows(IllegalArgumentException.class, () -> Hello.encodeRefusal(buf, 0, 0, "x"));
        }
    }

    @Test
    void malformedFieldsAreRejected() {
        check(Hello.QPN_OFFSET, 0, "queue pair number");
        check(Hello.QPN_OFFSET, 1 << 24, "queue pair number");
        check(Hello.PSN_OFFSET, 1 << 24, "packet sequence number");
        check(Hello.RECEIVE_SIZE_OFFSET, 1000, "receive buffer size");
        check(Hello.RECEIVE_COUNT_OFFSET, 0, "receive buffer count");
        check(Hello.MAX_FRAME_OFFSET, 5, "maximum frame length");
        check(Hello.VERSION_OFFSET, 2, "version");
        check(Hello.FLAGS_OFFSET, 2, "reserved");
        check(Hello.FLAGS_OFFSET, Hello.FLAG_RENDEZVOUS | 4, "reserved");
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment buf = arena.allocate(256);
            sample().encode(buf, 0);
            buf.set(ValueLayout.JAVA_BYTE, FrameDescriptor.HEADER_LENGTH + Hello.MTU_OFFSET, (byte) 9);
            assertTrue(assertThrows(Hello.HelloException.class, () -> new Hello().decode(buf, 0, Hello.FRAME_LENGTH))
                    .getMessage().contains("MTU"));
        }
    }

    private static void check(int field, int value, String expected) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment buf = arena.allocate(256);
            sample().encode(buf, 0);
            buf.set(ValueLayout.JAVA_INT_UNALIGNED, FrameDescriptor.HEADER_LENGTH + field, value);
            Hello.HelloException e = assertThrows(Hello.HelloException.class,
                    () -> new Hello().decode(buf, 0, Hello.FRAME_LENGTH));
            assertTrue(e.getMessage().contains(expected), e.getMessage());
            assertEquals(0, e.status());
        }
    }
}
