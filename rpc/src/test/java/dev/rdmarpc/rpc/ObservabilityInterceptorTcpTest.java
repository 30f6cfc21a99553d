package dev.rdmarpc.rpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.rdmarpc.rpc.codec.Codecs;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@code observability(...)} on the server, client and pool builders: adds the interceptor where it is called
 * among the others, registers the started server (connected client, built pool) once, and closes the
 * registrations once, the last made first, when the owner closes; a registration that fails closes the owner.
 */
@Timeout(60)
class ObservabilityInterceptorTcpTest {
    static final Method<String, String> ECHO = Method.of("Echo/say", Codecs.STRING, Codecs.STRING);

    /** Records what the builders and owners do with it in {@code log}. */
    static final class Recorder implements Observability {
        final String name;
        final List<String> log;
        final List<Object> observed = new CopyOnWriteArrayList<>();
        RuntimeException failObserve;

        Recorder(String name, List<String> log) {
            this.name = name;
            this.log = log;
        }

        @Override
        public ServerInterceptor serverInterceptor() {
            return call -> log.add(name + ".server");
        }

        @Override
        public ClientInterceptor clientInterceptor() {
            return (method, metadata) -> {
                log.add(name + ".client");
                return metadata;
            };
        }

        private AutoCloseable register(Object owner, boolean running) {
            log.add(name + ".observe" + (running ? "" : " (not running)"));
            observed.add(owner);
            if (failObserve != null) {
                throw failObserve;
            }
            return () -> log.add(name + ".close");
        }

        @Override
        public AutoCloseable observe(RpcServer server) {
            return register(server, server.isRunning());
        }

        @Override
        public AutoCloseable observe(RpcClient client) {
            return register(client, client.isOpen());
        }

        @Override
        public AutoCloseable observe(RpcClientPool pool) {
            return register(pool, true);
        }
    }

    @Test
    void aServerAddsTheInterceptorInOrderRegistersWhenStartedAndClosesOnceLastFirst() {
        List<String> log = new CopyOnWriteArrayList<>();
        Recorder a = new Recorder("a", log);
        Recorder b = new Recorder("b", log);
        RpcServer server = RpcServer.builder().intercept(call -> log.add("first.server")).observability(a)
                .intercept(call -> log.add("third.server")).observability(b)
                .register(ECHO, (ctx, req) -> req).start();
        assertEquals(List.of("a.observe", "b.observe"), log);
        assertEquals(List.of(server), a.observed);
        try (RpcClient client = RpcClient.connect(server.address())) {
            log.clear();
            assertEquals("x", client.call(ECHO, "x"));
            assertEquals(List.of("first.server", "a.server", "third.server", "b.server"), log);
        }
        log.clear();
        server.close();
        server.close();
        assertEquals(List.of("b.close", "a.close"), log, "closed once, the last registered first");
    }

    @Test
    void aServerWhoseRegistrationFailsIsClosedAndTheErrorThrown() {
        List<String> log = new CopyOnWriteArrayList<>();
        Recorder a = new Recorder("a", log);
        Recorder b = new Recorder("b", log);
        b.failObserve = new IllegalStateException("no meter");
        RpcServer.Builder builder = RpcServer.builder().observability(a).observability(b).register(ECHO, (ctx, req) -> req);
        IllegalStateException e = assertThrows(IllegalStateException.class, builder::start);
        assertSame(b.failObserve, e);
        RpcServer started = (RpcServer) b.observed.get(0);
        assertFalse(started.isRunning(), "the server is closed");
        assertEquals(List.of("a.observe", "b.observe", "a.close"), log, "what was registered is closed");
    }

    @Test
    void aClientAndAPoolAddTheInterceptorRegisterAndCloseOnce() {
        try (RpcServer server = RpcServer.builder().register(ECHO, (ctx, req) -> req).start()) {
            List<String> log = new CopyOnWriteArrayList<>();
            Recorder c = new Recorder("c", log);
            RpcClient client = RpcClient.builder().address(server.address()).observability(c).connect();
            assertEquals(List.of(client), c.observed);
            assertEquals("x", client.call(ECHO, "x"));
            client.close();
            client.close();
            assertEquals(List.of("c.observe", "c.client", "c.close"), log);

            log.clear();
            Recorder p = new Recorder("p", log);
            RpcClientPool pool = RpcClientPool.builder().observability(p).build();
            assertEquals(List.of(pool), p.observed);
            assertEquals("y", pool.channel(server.address()).call(ECHO, "y"));
            pool.close();
            pool.close();
            assertEquals(List.of("p.observe", "p.client", "p.close"), log);
            assertTrue(server.isRunning());
        }
    }
}
