package dev.rdmarpc.rpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** A builder that created its transport closes it when the client or server it was making fails to start. */
@Timeout(30)
class BuilderTransportOwnershipTest {
    @Test
    void aServerThatCannotListenClosesTheTransportItCreated() throws Exception {
        try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            InetSocketAddress address = new InetSocketAddress(InetAddress.getLoopbackAddress(), taken.getLocalPort());
            UncheckedIOException e = assertThrows(UncheckedIOException.class, () -> RpcServer.builder().bind(address)
                    .tcp(cfg -> cfg.threadNamePrefix("ownership-server")).start());
            assertTrue(e.getMessage().startsWith("could not listen on"), e.getMessage());
        }
        assertEquals(List.of(), threadsLeft("ownership-server"), "the server's I/O threads outlived the failed start");
    }

    @Test
    void aClientThatCannotConnectClosesTheTransportItCreated() throws Exception {
        int port;
        try (ServerSocket free = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            port = free.getLocalPort();
        }
        InetSocketAddress nobody = new InetSocketAddress(InetAddress.getLoopbackAddress(), port);
        RpcException e = assertThrows(RpcException.class, () -> RpcClient.builder().address(nobody)
                .tcp(cfg -> cfg.threadNamePrefix("ownership-client")).connect());
        assertEquals(Status.UNAVAILABLE, e.status());
        assertEquals(List.of(), threadsLeft("ownership-client"), "the client's I/O threads outlived the failed connect");
    }

    /** @return the live threads named {@code prefix...} once they are gone, or after 5 s those still there */
    private static List<String> threadsLeft(String prefix) throws InterruptedException {
        long until = System.nanoTime() + 5_000_000_000L;
        List<String> left;
        do {
            left = Thread.getAllStackTraces().keySet().stream().filter(t -> t.isAlive() && t.getName().startsWith(prefix))
                    .map(Thread::getName).toList();
            if (left.isEmpty()) {
                return left;
            }
            Thread.sleep(20);
        } while (System.nanoTime() < until);
        return left;
    }
}
