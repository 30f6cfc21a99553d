package dev.rdmarpc.rpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.rdmarpc.rpc.protocol.FrameDescriptor;
import dev.rdmarpc.rpc.protocol.FrameHeaderEncoder;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.function.BooleanSupplier;

/** Helpers shared by the tests: raw frames over plain sockets, polling with a deadline. */
final class TestSupport {
    private TestSupport() {
    }

    /** Encodes one request frame with a byte payload. */
    static byte[] requestFrame(long requestId, int methodId, byte[] payload, byte[] attachment) {
        byte[] frame = new byte[FrameDescriptor.HEADER_LENGTH + payload.length + attachment.length];
        MemorySegment seg = MemorySegment.ofArray(frame);
        new FrameHeaderEncoder().wrap(seg, 0).type(FrameDescriptor.TYPE_REQUEST).requestId(requestId).methodId(methodId)
                .payloadLength(payload.length).attachmentLength(attachment.length);
        System.arraycopy(payload, 0, frame, FrameDescriptor.HEADER_LENGTH, payload.length);
        System.arraycopy(attachment, 0, frame, FrameDescriptor.HEADER_LENGTH + payload.length, attachment.length);
        return frame;
    }

    static SocketChannel open(InetSocketAddress address) throws IOException {
        SocketChannel ch = SocketChannel.open(address);
        ch.socket().setSoTimeout(5000);
        return ch;
    }

    static void write(SocketChannel ch, byte[] bytes) throws IOException {
        ByteBuffer b = ByteBuffer.wrap(bytes);
        while (b.hasRemaining()) {
            ch.write(b);
        }
    }

    /** Reads one whole frame (blocking); null at end of stream. */
    static ByteBuffer readFrame(SocketChannel ch) throws IOException {
        ByteBuffer header = ByteBuffer.allocate(FrameDescriptor.HEADER_LENGTH).order(ByteOrder.LITTLE_ENDIAN);
        if (!readFully(ch, header)) {
            return null;
        }
        int plen = header.getInt(FrameDescriptor.PAYLOAD_LENGTH_OFFSET);
        int alen = header.getInt(FrameDescriptor.ATTACHMENT_LENGTH_OFFSET);
        ByteBuffer frame = ByteBuffer.allocate(FrameDescriptor.HEADER_LENGTH + plen + alen).order(ByteOrder.LITTLE_ENDIAN);
        frame.put(header.flip());
        if (!readFully(ch, frame)) {
            return null;
        }
        return frame.flip();
    }

    private static boolean readFully(SocketChannel ch, ByteBuffer b) throws IOException {
        var in = ch.socket().getInputStream();
        while (b.hasRemaining()) {
            int n = in.read(b.array(), b.arrayOffset() + b.position(), b.remaining());
            if (n < 0) {
                return false;
            }
            b.position(b.position() + n);
        }
        return true;
    }

    /** True when the peer closed the channel within the socket timeout. */
    static boolean closedByPeer(SocketChannel ch) {
        try {
            var in = ch.socket().getInputStream();
            byte[] sink = new byte[4096];
            while (true) {
                if (in.read(sink) < 0) {
                    return true;
                }
            }
        } catch (IOException e) {
            return e.getMessage() != null && e.getMessage().contains("reset");
        }
    }

    static void await(String what, Duration timeout, BooleanSupplier condition) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) {
                throw new AssertionError("timed out waiting for " + what);
            }
            try {
                Thread.sleep(2);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError("interrupted waiting for " + what);
            }
        }
    }

    /** Reads the connection-level error the server sends before it closes, and checks the close. */
    static String lastWord(SocketChannel ch, Status status) throws Exception {
        ByteBuffer f = TestSupport.readFrame(ch);
        assertNotNull(f, "the server says why before it closes");
        assertEquals(FrameDescriptor.TYPE_RESPONSE, f.get(FrameDescriptor.TYPE_OFFSET));
        assertEquals(FrameDescriptor.CONNECTION_REQUEST_ID, f.getLong(FrameDescriptor.REQUEST_ID_OFFSET));
        assertEquals(status.code(), f.getShort(FrameDescriptor.STATUS_OFFSET));
        String message = StandardCharsets.UTF_8.decode(f.position(FrameDescriptor.HEADER_LENGTH)).toString();
        assertTrue(TestSupport.closedByPeer(ch), "closed after its last word");
        return message;
    }
}
