package dev.rdmarpc.grpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.rdmarpc.rpc.RpcClient;
import io.grpc.testing.integration.EmptyProtos.Empty;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** {@link GrpcHostileContract} over TCP, and bytes that are not rdmarpc at all. */
@Timeout(120)
class GrpcHostileTcpTest extends GrpcHostileContract {
    @Override
    protected RdmarpcServerBuilder serverBuilder() {
        return RdmarpcServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0));
    }

    @Override
    protected RdmarpcChannelBuilder channelBuilder(String target) {
        return RdmarpcChannelBuilder.forTarget(target);
    }

    @Override
    protected String host() {
        return "127.0.0.1";
    }

    @Override
    protected RpcClient rawClient() {
        return RpcClient.builder().address(new InetSocketAddress("127.0.0.1", server.getPort())).connect();
    }

    private void closedQuickly(byte[] bytes) throws Exception {
        try (Socket s = new Socket("127.0.0.1", server.getPort())) {
            s.setSoTimeout(10_000);
            s.getOutputStream().write(bytes);
            s.getOutputStream().flush();
            long start = System.nanoTime();
            InputStream in = s.getInputStream();
            try {
                while (in.read() >= 0) {
                    // whatever the server says before it closes
                }
            } catch (java.net.SocketException reset) {
                // closed by the server with a reset: as good as an end
            }
            assertTrue(System.nanoTime() - start < 10_000_000_000L, "the server closed the connection");
        }
        assertEquals(Empty.getDefaultInstance(), blocking.emptyCall(Empty.getDefaultInstance()), "the server carries on");
    }

    @Test
    void garbageBytesAreRefused() throws Exception {
        byte[] garbage = new byte[256];
        new Random(45).nextBytes(garbage);
        closedQuickly(garbage);
    }

    @Test
    void anHttp2PrefaceIsRefused() throws Exception {
        closedQuickly("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".getBytes(java.nio.charset.StandardCharsets.US_ASCII));
    }
}
