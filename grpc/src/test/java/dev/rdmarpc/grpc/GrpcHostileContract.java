package dev.rdmarpc.grpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.rdmarpc.rpc.CallOptions;
import dev.rdmarpc.rpc.ClientStream;
import dev.rdmarpc.rpc.Method;
import dev.rdmarpc.rpc.RpcClient;
import dev.rdmarpc.rpc.RpcException;
import dev.rdmarpc.rpc.codec.Codecs;
import io.grpc.testing.integration.EmptyProtos.Empty;
import io.grpc.testing.integration.Messages.ResponseParameters;
import io.grpc.testing.integration.Messages.StreamingOutputCallRequest;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Peers that do not follow this transport's rules, written with rdmarpc's own client: a call
 * without its method, a message of an unknown kind, a reader that stops. Each gets a clear error
 * or is held back; the server carries on and holds nothing afterwards.
 */
abstract class GrpcHostileContract extends GrpcContractBase {
    private static final Method<byte[], byte[]> RAW = Method.of("grpc", Codecs.BYTES, Codecs.BYTES);

    /** @return an rdmarpc client on the transport under test, connected to the server */
    protected abstract RpcClient rawClient();

    private static byte[] message(byte kind, byte[] body) {
        byte[] m = new byte[body.length + 1];
        m[0] = kind;
        System.arraycopy(body, 0, m, 1, body.length);
        return m;
    }

    @Test
    void aCallWithoutItsMethodIsRefusedWithAReason() {
        try (RpcClient c = rawClient(); ClientStream<byte[], byte[]> s = c.openStream(RAW)) {
            s.halfClose();
            RpcException e = assertThrows(RpcException.class, s::receive);
            assertEquals(dev.rdmarpc.rpc.Status.PROTOCOL_ERROR, e.status());
            assertTrue(e.getMessage().contains("grpc-path"), e.getMessage());
        }
        assertEquals(Empty.getDefaultInstance(), blocking.emptyCall(Empty.getDefaultInstance()));
    }

    @Test
    void aMessageOfAnUnknownKindFailsThatCallOnly() {
        CallOptions opts = CallOptions.DEFAULT.withMetadata(
                dev.rdmarpc.rpc.Metadata.of("grpc-path", "/grpc.testing.TestService/StreamingInputCall"));
        try (RpcClient c = rawClient(); ClientStream<byte[], byte[]> s = c.openStream(RAW, opts)) {
            s.send(message((byte) 9, new byte[]{1, 2, 3}));
            s.halfClose();
            boolean failed = false;
            try {
                for (byte[] m; (m = s.receive()) != null; ) {
                    // the server's headers, if any
                }
                assertNotEquals("0", s.trailers().get("grpc-status"), "the call did not succeed");
                failed = true;
            } catch (RpcException e) {
                failed = true;
            }
            assertTrue(failed);
        }
        assertEquals(Empty.getDefaultInstance(), blocking.emptyCall(Empty.getDefaultInstance()));
    }

    @Test
    void aReaderThatStopsHoldsItsStreamBackAndLeavesNothingHeld() throws Exception {
        StreamingOutputCallRequest.Builder req = StreamingOutputCallRequest.newBuilder();
        for (int i = 0; i < 200; i++) {
            req.addResponseParameters(ResponseParameters.newBuilder().setSize(64 * 1024));
        }
        CallOptions opts = CallOptions.DEFAULT.withMetadata(
                dev.rdmarpc.rpc.Metadata.of("grpc-path", "/grpc.testing.TestService/StreamingOutputCall"));
        RpcClient c = rawClient();
        ClientStream<byte[], byte[]> s = c.openStream(RAW, opts);
        s.send(message((byte) 0, req.build().toByteArray()));
        s.halfClose();
        Thread.sleep(slowMillis() * 3);
        int ahead = service.streamed.get();
        assertTrue(ahead <= 24, "the server ran " + ahead + " messages ahead of a peer that reads nothing");
        c.close();
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (service.cancelled.get() == 0 && System.nanoTime() < end) {
            Thread.sleep(10);
        }
        assertEquals(1, service.cancelled.get(), "the call was cancelled when its peer went away");
        server.shutdown();
        assertTrue(server.awaitTermination(30, TimeUnit.SECONDS), "nothing held: the server drained at once");
    }
}
