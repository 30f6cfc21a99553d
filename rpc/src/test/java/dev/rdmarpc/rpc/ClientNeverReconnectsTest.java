package dev.rdmarpc.rpc;

import static org.junit.jupiter.api.Assertions.*;

import dev.rdmarpc.rpc.codec.Codecs;
import java.net.InetSocketAddress;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * An RpcClient is one connection (issue 43, point 7): after the server restarts, its calls fail
 * with CONNECTION_CLOSED saying that it never reconnects and what does, while a pool's channel to the
 * same address reconnects.
 */
@Timeout(30)
class ClientNeverReconnectsTest {
    static final Method<String, String> ECHO = Method.of("echo", Codecs.STRING, Codecs.STRING);

    @Test
    void aClientSaysItDoesNotReconnectAndAPoolDoes() {
        RpcServer first = RpcServer.builder().bind(new InetSocketAddress("127.0.0.1", 0)).register(ECHO, (ctx, s) -> s).start();
        InetSocketAddress ep = first.address();
        try (RpcClient client = RpcClient.connect(ep);
             RpcClientPool pool = RpcClientPool.builder().maxConnectionsPerEndpoint(1).reconnectBackoff(Duration.ZERO).build()) {
            assertEquals("a", client.call(ECHO, "a"));
            assertEquals("a", pool.channel(ep).call(ECHO, "a"));
            first.close();
            TestSupport.await("the client sees the close", Duration.ofSeconds(5), () -> !client.isOpen());
            try (RpcServer second = RpcServer.builder().bind(ep).register(ECHO, (ctx, s) -> s).start()) {
                RpcException e = assertThrows(RpcException.class, () -> client.call(ECHO, "b"));
                assertEquals(Status.CONNECTION_CLOSED, e.status());
                assertTrue(e.getMessage().contains("never reconnects") && e.getMessage().contains("RpcClientPool"),
                        e.getMessage());
                TestSupport.await("the pool reconnects", Duration.ofSeconds(5), () -> {
                    try {
                        return "b".equals(pool.channel(ep).call(ECHO, "b"));
                    } catch (RpcException x) {
                        return false;
                    }
                });
            }
        } finally {
            first.close();
        }
    }
}
