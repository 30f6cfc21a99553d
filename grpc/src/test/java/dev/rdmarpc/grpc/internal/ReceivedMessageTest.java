package dev.rdmarpc.grpc.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.ByteString;
import io.grpc.MethodDescriptor;
import io.grpc.protobuf.ProtoUtils;
import io.grpc.testing.integration.Messages.Payload;
import io.grpc.testing.integration.Messages.SimpleRequest;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.nio.ByteBuffer;
import org.junit.jupiter.api.Test;

/** A received message read in place: its length, a drain, a heap buffer over the one array, detaching. */
class ReceivedMessageTest {
    @Test
    void itReadsDrainsAndLendsItsArray() throws Exception {
        byte[] b = {1, 2, 3, 4, 5};
        ReceivedMessage m = new ReceivedMessage(b);
        assertEquals(5, m.available());
        assertEquals(1, m.read());
        ByteBuffer bb = m.getByteBuffer();
        assertTrue(bb.hasArray());
        assertSame(b, bb.array(), "the buffer is the message's own array, not a copy");
        assertEquals(4, bb.remaining());
        assertEquals(2, bb.get(0));
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        assertEquals(4, m.drainTo(out));
        assertArrayEquals(new byte[] {2, 3, 4, 5}, out.toByteArray());
        assertEquals(-1, m.read());
    }

    @Test
    void detachingMovesTheBytesToTheNewStream() throws Exception {
        ReceivedMessage m = new ReceivedMessage(new byte[] {7, 8, 9});
        m.skip(1);
        InputStream d = m.detach();
        assertEquals(0, m.available());
        assertEquals(-1, m.read());
        assertArrayEquals(new byte[] {8, 9}, d.readAllBytes());
    }

    /** protobuf's marshaller parses it (through the buffer it lends) to the message that was sent. */
    @Test
    void protobufParsesIt() throws Exception {
        SimpleRequest req = SimpleRequest.newBuilder().setResponseSize(7)
                .setPayload(Payload.newBuilder().setBody(ByteString.copyFrom(new byte[1000]))).build();
        MethodDescriptor.Marshaller<SimpleRequest> marshaller = ProtoUtils.marshaller(SimpleRequest.getDefaultInstance());
        SimpleRequest parsed = marshaller.parse(new ReceivedMessage(req.toByteArray()));
        assertEquals(req, parsed);
    }
}
