package dev.rdmarpc.rpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.rdmarpc.rpc.codec.Codecs;
import dev.rdmarpc.rpc.protocol.FrameDescriptor;
import dev.rdmarpc.rpc.protocol.FrameHeaderEncoder;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** {@link StreamsContract} over TCP loopback, and peers that break the stream rules, written by hand. */
@Timeout(300)
class StreamsTcpTest extends StreamsContract {
    @Override
    protected RpcServer.Builder serverBuilder() {
        return RpcServer.builder().bind(new InetSocketAddress("127.0.0.1", 0));
    }

    @Override
    protected RpcClient.Builder clientBuilder(RpcServer server) {
        return RpcClient.builder().address(server.address());
    }

    @Override
    protected int manySmallMessages() {
        return 1_000_000;
    }

    @Override
    protected Duration streamDeadline() {
        return Duration.ofMillis(300);
    }

    @Override
    protected int largeMessages() {
        return 64;
    }

    private static byte[] frame(int type, int flags, long id, int methodId, byte[] payload) {
        byte[] f = new byte[FrameDescriptor.HEADER_LENGTH + payload.length];
        new FrameHeaderEncoder().wrap(MemorySegment.ofArray(f), 0).type(type).flags(flags).requestId(id).methodId(methodId)
                .payloadLength(payload.length);
        System.arraycopy(payload, 0, f, FrameDescriptor.HEADER_LENGTH, payload.length);
        return f;
    }

    /** Reads frames until the response to {@code id}, skipping the stream's messages and window updates. */
    private static ByteBuffer responseTo(SocketChannel ch, long id) throws Exception {
        while (true) {
            ByteBuffer f = TestSupport.readFrame(ch);
            if (f == null) {
                throw new AssertionError("closed before the response to " + id);
            }
            if (f.get(FrameDescriptor.TYPE_OFFSET) == FrameDescriptor.TYPE_RESPONSE
                    && f.getLong(FrameDescriptor.REQUEST_ID_OFFSET) == id) {
                return f;
            }
        }
    }

    private static String message(ByteBuffer f) {
        return StandardCharsets.UTF_8.decode(f.position(FrameDescriptor.HEADER_LENGTH)).toString();
    }

    /**
     * A client that sends past the window the server granted: the stream fails with PROTOCOL_ERROR
     * (its handler's receive says so, the client gets it as the stream's end), the messages past the
     * window are dropped, and the connection goes on.
     */
    @Test
    void aPeerThatSendsPastItsWindowLosesItsStreamNotTheConnection() throws Exception {
        try (SocketChannel ch = TestSupport.open(server.address())) {
            int sink = SINK.id();
            TestSupport.write(ch, frame(FrameDescriptor.TYPE_REQUEST, FrameDescriptor.FLAG_STREAM, 1, sink, new byte[0]));
            byte[] kib = new byte[1024];
            int allowed = SMALL_WINDOW / (FrameDescriptor.HEADER_LENGTH + kib.length) + 1;
            for (int i = 0; i < allowed + 40; i++) {
                TestSupport.write(ch, frame(FrameDescriptor.TYPE_STREAM_MESSAGE, 0, 1, sink, kib));
            }
            // A call behind them: once it is answered, the server has read every message before it
            // (frames of a connection are handled in order), and the handler has read none: none was
            // granted back, so the window was overrun for sure. The connection goes on meanwhile.
            byte[] hi = "hi".getBytes(StandardCharsets.UTF_8);
            TestSupport.write(ch, TestSupport.requestFrame(2, UNARY.id(), hi, new byte[0]));
            ByteBuffer answer = responseTo(ch, 2);
            assertEquals(0, answer.getShort(FrameDescriptor.STATUS_OFFSET));
            assertEquals("hi!", message(answer));

            drainNow.countDown();
            ByteBuffer end = responseTo(ch, 1);
            assertEquals(Status.PROTOCOL_ERROR.code(), end.getShort(FrameDescriptor.STATUS_OFFSET));
            String why = message(end);
            assertTrue(why.contains("granted " + SMALL_WINDOW), why);
        }
        TestSupport.await("server calls over", Duration.ofSeconds(10), () -> server.metrics().inFlight() == 0);
    }

    /** A window update of 0 (or less) fails its stream with PROTOCOL_ERROR. */
    @Test
    void aZeroWindowUpdateFailsItsStream() throws Exception {
        try (SocketChannel ch = TestSupport.open(server.address())) {
            int sink = SINK.id();
            TestSupport.write(ch, frame(FrameDescriptor.TYPE_REQUEST, FrameDescriptor.FLAG_STREAM, 5, sink, new byte[0]));
            TestSupport.write(ch, frame(FrameDescriptor.TYPE_STREAM_WINDOW, 0, 5, sink, new byte[4]));
            drainNow.countDown();
            ByteBuffer end = responseTo(ch, 5);
            assertEquals(Status.PROTOCOL_ERROR.code(), end.getShort(FrameDescriptor.STATUS_OFFSET));
            assertTrue(message(end).contains("window update of 0"), message(end));
        }
    }
}
