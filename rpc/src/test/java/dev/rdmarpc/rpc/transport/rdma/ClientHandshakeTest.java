package dev.rdmarpc.rpc.transport.rdma;

import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.rdmarpc.rpc.Status;
import dev.rdmarpc.rpc.protocol.FrameDescriptor;
import dev.rdmarpc.rpc.protocol.FrameHeaderEncoder;
import dev.rdmarpc.rpc.transport.CertificateRefusedException;
import dev.rdmarpc.rpc.transport.PeerRefusedException;
import dev.rdmarpc.rpc.transport.ResourceExhaustedException;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import javax.net.ssl.SSLHandshakeException;
import org.junit.jupiter.api.Test;

/**
 * The client's side of the hello, without a device: a server's refusal that came while the client
 * was still setting up keeps its kind, whatever the set-up tripped on.
 */
class ClientHandshakeTest {
    private static final InetSocketAddress SERVER = new InetSocketAddress("127.0.0.1", 7000);

    /** The client's handshake after the server's connection-level error with {@code status} and {@code reason}. */
    private static ClientHandshake refusedWith(Status status, String reason) {
        byte[] why = reason.getBytes(StandardCharsets.UTF_8);
        MemorySegment frame = MemorySegment.ofArray(new byte[FrameDescriptor.HEADER_LENGTH + why.length]);
        new FrameHeaderEncoder().wrap(frame, 0).type(FrameDescriptor.TYPE_RESPONSE)
                .requestId(FrameDescriptor.CONNECTION_REQUEST_ID).status(status.code()).payloadLength(why.length);
        MemorySegment.copy(MemorySegment.ofArray(why), 0, frame, FrameDescriptor.HEADER_LENGTH, why.length);
        ClientHandshake side = new ClientHandshake();
        side.onFrame(null, frame, 0, (int) frame.byteSize());
        return side;
    }

    @Test
    void theChecksRefusalDuringTheQueuePairsSetUpIsPermissionDenied() {
        // the refusal's close closed the queue pair under the set-up, which tripped on that
        IllegalStateException tripped = new IllegalStateException("Already closed");
        IOException e = refusedWith(Status.PERMISSION_DENIED, "no RDMA here for CN=client-a").refusal(SERVER, tripped);
        assertInstanceOf(PeerRefusedException.class, e);
        assertTrue(e.getMessage().contains("no RDMA here for CN=client-a"), e.getMessage());
        assertSame(tripped, e.getCause(), "what the set-up tripped on stays as the cause");
    }

    @Test
    void aLimitsRefusalDuringTheSetUpIsResourceExhausted() {
        IOException e = refusedWith(Status.RESOURCE_EXHAUSTED, "connection limit: 4 open").refusal(SERVER,
                new IOException("ibv_post_recv failed"));
        assertInstanceOf(ResourceExhaustedException.class, e);
        assertTrue(e.getMessage().contains("connection limit: 4 open"), e.getMessage());
    }

    @Test
    void otherRefusalsAndLocalFailuresKeepTheirWay() {
        // a refusal of another status (a client without TLS at a TLS server, say) is the set-up's failure, as before
        assertNull(refusedWith(Status.PROTOCOL_ERROR, "this server requires TLS").refusal(SERVER, new IllegalStateException("closed")));
        // no word from the server: the failure stands
        assertNull(new ClientHandshake().refusal(SERVER, new IOException("cannot create completion queues")));
        // already the server's refusal (its answer to the hello): thrown as it is
        PeerRefusedException answer = new PeerRefusedException("the server refused the connection: no");
        assertSame(answer, refusedWith(Status.PERMISSION_DENIED, "no").refusal(SERVER, answer));
        ResourceExhaustedException local = new ResourceExhaustedException("the completion queues are full");
        assertSame(local, new ClientHandshake().refusal(SERVER, local));
    }

    @Test
    void aCertificateRefusalAfterTheVerdictWaitIsACertificateRefusal() {
        // the TLS read after the wait for the server's verdict: its alert, described
        CertificateRefusedException alert = new CertificateRefusedException(
                "the server refused this client's certificate: it does not trust it (Received fatal alert: unknown_ca)",
                new SSLHandshakeException("Received fatal alert: unknown_ca"));
        ClientHandshake side = new ClientHandshake();
        side.onClose(null, alert);
        // the hello's answer fails with it
        IOException answer = assertThrows(IOException.class,
                () -> side.awaitHello(SERVER, System.nanoTime() + 1_000_000_000L, Duration.ofSeconds(1)));
        assertInstanceOf(CertificateRefusedException.class, answer);
        assertTrue(answer.getMessage().contains("it does not trust it"), answer.getMessage());
        // as does a set-up the close tripped, or a hello it could not send
        IllegalStateException tripped = new IllegalStateException("Already closed");
        IOException e = side.refusal(SERVER, tripped);
        assertInstanceOf(CertificateRefusedException.class, e);
        assertTrue(e.getMessage().contains("it does not trust it"), e.getMessage());
        assertSame(tripped, e.getCause(), "what the set-up tripped on stays as the cause");
        assertSame(answer, side.refusal(SERVER, answer), "already the refusal: thrown as it is");
    }
}
