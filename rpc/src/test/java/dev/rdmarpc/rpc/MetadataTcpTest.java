package dev.rdmarpc.rpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.rdmarpc.rpc.protocol.FrameDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** {@link MetadataContract} over TCP loopback, and metadata blocks written by hand. */
@Timeout(120)
class MetadataTcpTest extends MetadataContract {
    @Override
    protected RpcServer.Builder serverBuilder() {
        return RpcServer.builder().bind(new InetSocketAddress("127.0.0.1", 0));
    }

    @Override
    protected RpcClient.Builder clientBuilder(RpcServer server) {
        return RpcClient.builder().address(server.address());
    }

    /** A request of {@code method} whose payload is {@code block} then {@code body}, with the metadata flag. */
    private static byte[] withBlock(long id, Method<?, ?> method, byte[] block, byte[] body) {
        byte[] payload = new byte[block.length + body.length];
        System.arraycopy(block, 0, payload, 0, block.length);
        System.arraycopy(body, 0, payload, block.length, body.length);
        byte[] frame = TestSupport.requestFrame(id, method.id(), payload, new byte[0]);
        MemorySegment.ofArray(frame).set(ValueLayout.JAVA_SHORT_UNALIGNED, FrameDescriptor.FLAGS_OFFSET,
                (short) FrameDescriptor.FLAG_METADATA);
        return frame;
    }

    private static byte[] block(int declaredLength, byte[]... entries) {
        ByteBuffer b = ByteBuffer.allocate(1024).order(ByteOrder.LITTLE_ENDIAN);
        b.putInt(declaredLength);
        for (byte[] e : entries) {
            b.put(e);
        }
        byte[] out = new byte[b.position()];
        b.flip().get(out);
        return out;
    }

    private static byte[] entry(String key, String value) {
        byte[] k = key.getBytes(StandardCharsets.ISO_8859_1);
        byte[] v = value.getBytes(StandardCharsets.UTF_8);
        ByteBuffer b = ByteBuffer.allocate(3 + k.length + v.length).order(ByteOrder.LITTLE_ENDIAN);
        b.put((byte) k.length).putShort((short) v.length).put(k).put(v);
        return b.array();
    }

    /**
     * Malformed metadata blocks each get a PROTOCOL_ERROR response naming the fault, the handler does
     * not run, and the connection goes on; a well-formed block written by hand is read, and a key
     * sent twice is read as its first value.
     */
    @Test
    void malformedMetadataIsAnsweredAndTheConnectionGoesOn() throws Exception {
        byte[] body = "hi".getBytes(StandardCharsets.UTF_8);
        byte[] x = entry("tenant", "acme");
        Object[][] bad = {
                {block(100, x), "is not within the payload"},
                {block(2), "is not within the payload"},
                {block(4 + x.length, entry("Tenant", "acme")), "has character 0x54"},
                {block(4 + 3, new byte[] {0, 0, 0}), "empty metadata key"},
                {block(4 + x.length - 1, x), "runs past the block's end"},
                {block(4 + 2, new byte[] {5, 0}), "cut short"},
        };
        try (SocketChannel ch = TestSupport.open(server.address())) {
            // the flag on a frame with no payload at all, the last bytes the server received: nothing
            // past the frame is read (this read 4 bytes beyond it, off the end of the receive buffer
            // when the frame ended there)
            TestSupport.write(ch, withBlock(100, INLINE, new byte[0], new byte[0]));
            ByteBuffer empty = TestSupport.readFrame(ch);
            assertEquals(Status.PROTOCOL_ERROR.code(), empty.getShort(FrameDescriptor.STATUS_OFFSET));
            String why = new String(empty.array(), FrameDescriptor.HEADER_LENGTH, empty.getInt(FrameDescriptor.PAYLOAD_LENGTH_OFFSET),
                    StandardCharsets.UTF_8);
            assertTrue(why.contains("the payload has 0 bytes, fewer than a block's length field"), why);
            long id = 1;
            for (Object[] c : bad) {
                byte[] frame = withBlock(id, INLINE, (byte[]) c[0], body);
                TestSupport.write(ch, frame);
                ByteBuffer r = TestSupport.readFrame(ch);
                assertEquals(id, r.getLong(FrameDescriptor.REQUEST_ID_OFFSET));
                assertEquals(Status.PROTOCOL_ERROR.code(), r.getShort(FrameDescriptor.STATUS_OFFSET), "case " + id);
                String message = new String(r.array(), FrameDescriptor.HEADER_LENGTH, r.getInt(FrameDescriptor.PAYLOAD_LENGTH_OFFSET),
                        StandardCharsets.UTF_8);
                assertTrue(message.contains("request of md.inline has bad metadata") && message.contains((String) c[1]),
                        "case " + id + ": " + message);
                id++;
            }
            byte[] y = entry("tenant", "other");
            byte[] twice = block(4 + x.length + y.length, x, y);
            TestSupport.write(ch, withBlock(id, RAW, twice, body));
            ByteBuffer r = TestSupport.readFrame(ch);
            assertEquals(Status.OK.code(), r.getShort(FrameDescriptor.STATUS_OFFSET), "the connection goes on");
            assertTrue((r.getShort(FrameDescriptor.FLAGS_OFFSET) & FrameDescriptor.FLAG_METADATA) != 0, "a response with metadata");
            int mlen = r.getInt(FrameDescriptor.HEADER_LENGTH);
            String answer = new String(r.array(), FrameDescriptor.HEADER_LENGTH + mlen,
                    r.getInt(FrameDescriptor.PAYLOAD_LENGTH_OFFSET) - mlen, StandardCharsets.UTF_8);
            assertEquals("acme false -1 2 2", answer, "the first of a repeated key");
        }
        assertEquals(0, securedHandlerRuns.get());
    }
}
