package dev.rdmarpc.rpc;

import static org.junit.jupiter.api.Assertions.*;

import dev.rdmarpc.rpc.codec.Codecs;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(30)
class LifecycleTest {
    static final Method<String, String> ECHO = Method.of("echo", Codecs.STRING, Codecs.STRING);
    static final Method<Integer, Integer> SLOW = Method.of("slow", Codecs.INT, Codecs.INT);

    @Test
    void gracefulShutdownDrainsCallsInFlight() throws Exception {
        CountDownLatch started = new CountDownLatch(1);
        RpcServer server = RpcServer.builder().tcp(cfg -> cfg.loop(l -> l.ioThreads(1)))
                .register(ECHO, (c, s) -> s)
                .registerBlocking(SLOW, (c, ms) -> {
                    started.countDown();
                    Thread.sleep(ms);
                    return ms;
                })
                .start();
        try (RpcClient client = RpcClient.connect(server.address())) {
            CompletableFuture<Integer> inFlight = client.callAsync(SLOW, 300);
            assertTrue(started.await(5, TimeUnit.SECONDS));
            CompletableFuture<Boolean> shutdown = CompletableFuture.supplyAsync(() -> server.shutdown(Duration.ofSeconds(5)));
            TestSupport.await("shutdown begins", Duration.ofSeconds(5), () -> !server.isRunning());
            // New calls are refused while draining (or the connection is already gone).
            ExecutionException refused = assertThrows(ExecutionException.class,
                    () -> client.callAsync(ECHO, "late").get(5, TimeUnit.SECONDS));
            Status s = ((RpcException) refused.getCause()).status();
            assertTrue(s == Status.SHUTTING_DOWN || s == Status.CONNECTION_CLOSED, s.toString());
            assertEquals(300, inFlight.get(5, TimeUnit.SECONDS), "the call in flight completes");
            assertTrue(shutdown.get(10, TimeUnit.SECONDS), "drained in time");
            TestSupport.await("client sees the close", Duration.ofSeconds(5), () -> !client.isOpen());
        }
        assertFalse(server.isRunning());
        server.close(); // idempotent
    }

    @Test
    void jfrRecordsCallsAndConnections() throws Exception {
        Path file = Files.createTempFile("rdmarpc", ".jfr");
        try (Recording rec = new Recording()) {
            rec.enable("dev.rdmarpc.ClientCall");
            rec.enable("dev.rdmarpc.ServerCall");
            rec.enable("dev.rdmarpc.ConnectionOpened");
            rec.enable("dev.rdmarpc.ConnectionClosed");
            rec.start();
            try (RpcServer server = RpcServer.builder().tcp(cfg -> cfg.loop(l -> l.ioThreads(1))).register(ECHO, (c, s) -> s).start();
                 RpcClient client = RpcClient.connect(server.address())) {
                for (int i = 0; i < 5; i++) {
                    client.call(ECHO, "jfr");
                }
                assertThrows(RpcException.class, () -> client.call(Method.of("nope", Codecs.STRING, Codecs.STRING), "x"));
            }
            rec.stop();
            rec.dump(file);
        }
        int clientCalls = 0;
        int serverCalls = 0;
        int opened = 0;
        int closed = 0;
        boolean sawError = false;
        for (RecordedEvent e : RecordingFile.readAllEvents(file)) {
            switch (e.getEventType().getName()) {
                case "dev.rdmarpc.ClientCall" -> {
                    clientCalls++;
                    sawError |= "UNKNOWN_METHOD".equals(e.getString("status"));
                    assertTrue(e.getLong("latency") > 0);
                }
                case "dev.rdmarpc.ServerCall" -> {
                    serverCalls++;
                    assertEquals("echo", e.getString("method"));
                }
                case "dev.rdmarpc.ConnectionOpened" -> opened++;
                case "dev.rdmarpc.ConnectionClosed" -> closed++;
                default -> {
                }
            }
        }
        Files.deleteIfExists(file);
        assertEquals(6, clientCalls);
        assertEquals(5, serverCalls);
        assertTrue(sawError);
        assertEquals(2, opened, "client and server side");
        assertEquals(2, closed);
    }
}
