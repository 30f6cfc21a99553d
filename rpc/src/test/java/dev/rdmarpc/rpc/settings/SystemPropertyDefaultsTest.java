package dev.rdmarpc.rpc.settings;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.rdmarpc.rpc.buffer.BufferPool;
import dev.rdmarpc.rpc.transport.IdleStrategy;
import dev.rdmarpc.rpc.transport.rdma.RdmaConfig;
import dev.rdmarpc.rpc.transport.tcp.TcpTransport;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

/** Every setting of the three configuration classes has a system-property default, a copy and a place in toString. */
class SystemPropertyDefaultsTest {

    /** Runs {@code body} with {@code properties} set, then clears them. */
    static <T> T with(Map<String, String> properties, Supplier<T> body) {
        properties.forEach(System::setProperty);
        try {
            return body.get();
        } finally {
            properties.keySet().forEach(System::clearProperty);
        }
    }

    /** The fluent setters of {@code type}: public, one parameter, returning the type itself. */
    static List<String> setters(Class<?> type) {
        return Arrays.stream(type.getDeclaredMethods())
                .filter(m -> Modifier.isPublic(m.getModifiers()) && !Modifier.isStatic(m.getModifiers()))
                .filter(m -> m.getParameterCount() == 1 && m.getReturnType() == type)
                .map(Method::getName).distinct().sorted().toList();
    }

    @Test
    void everySetterIsInTheTableSoCopyAndToStringCannotForgetIt() {
        assertEveryone(RdmaConfig.class, new RdmaConfig().toString(), RdmaConfig.systemProperties(), "rdmarpc.rdma.", List.of());
        assertEveryone(TcpTransport.Config.class, new TcpTransport.Config().toString(), TcpTransport.Config.systemProperties(),
                "rdmarpc.tcp.", List.of("bufferPool"));
        assertEveryone(BufferPool.Config.class, new BufferPool.Config().toString(), BufferPool.Config.systemProperties(),
                "rdmarpc.pool.", List.of("slabListener"));
    }

    private static void assertEveryone(Class<?> type, String shown, List<String> properties, String prefix, List<String> notProperties) {
        List<String> setters = setters(type);
        assertTrue(setters.size() >= 5, type + " " + setters);
        for (String s : setters) {
            assertTrue(shown.contains(s + "="), type.getSimpleName() + ".toString() lacks " + s + ": " + shown);
            if (!notProperties.contains(s)) {
                assertTrue(properties.contains(prefix + s), prefix + s + " missing from " + properties);
            }
        }
        assertEquals(setters.size() - notProperties.size(), properties.size(), "no property without a setter: " + properties);
    }

    @Test
    void propertiesAreDefaultsThatSettersOverride() {
        RdmaConfig r = with(Map.of("rdmarpc.rdma.receiveQueueDepth", "16", "rdmarpc.rdma.chunkSize", "64K",
                "rdmarpc.rdma.idleStrategy", "back-off:20us", "rdmarpc.rdma.handshakeTimeout", "30s",
                "rdmarpc.rdma.sharedReceiveQueue", "true", "rdmarpc.rdma.device", "rxe0", "rdmarpc.rdma.poolHighWaterMark", "auto"),
                RdmaConfig::new);
        assertEquals(16, r.receiveQueueDepth());
        assertEquals(64 << 10, r.chunkSize());
        assertEquals(IdleStrategy.backOff(Duration.ofNanos(20_000)), r.idleStrategy());
        assertEquals(Duration.ofSeconds(30), r.handshakeTimeout());
        assertTrue(r.sharedReceiveQueue());
        assertEquals("rxe0", r.device());
        assertEquals(8, r.receiveQueueDepth(8).receiveQueueDepth(), "a setter still wins");
        assertEquals(8, new RdmaConfig().receiveQueueDepth(), "cleared: the built-in default again");
        assertNull(new RdmaConfig().device());

        TcpTransport.Config t = with(Map.of("rdmarpc.tcp.ioThreads", "3", "rdmarpc.tcp.writeHighWaterMark", "16M",
                "rdmarpc.tcp.idleStrategy", "busy-poll", "rdmarpc.tcp.tickInterval", "5ms"), TcpTransport.Config::new);
        assertEquals(3, t.ioThreads());
        assertEquals(16L << 20, t.writeHighWaterMark());
        assertEquals(IdleStrategy.busyPoll(), t.idleStrategy());
        assertEquals(Duration.ofMillis(5), t.tickInterval());

        BufferPool.Config p = with(Map.of("rdmarpc.pool.chunkSize", "128k", "rdmarpc.pool.idleRelease", "PT30S"),
                BufferPool.Config::new);
        assertEquals(128 << 10, p.chunkSize());
        assertEquals(Duration.ofSeconds(30), p.idleRelease());
        TcpTransport.Config withPool = with(Map.of("rdmarpc.pool.maxPooledBytes", "1G"), TcpTransport.Config::new);
        assertEquals(1L << 30, withPool.bufferPool().maxPooledBytes(), "a transport's own pool settings read theirs");
    }

    @Test
    void anUnreadablePropertyIsAnErrorThatNamesIt() {
        for (Map.Entry<String, String> bad : Map.of("rdmarpc.rdma.receiveQueueDepth", "many", "rdmarpc.rdma.sharedReceiveQueue", "yes",
                "rdmarpc.tcp.tickInterval", "10", "rdmarpc.pool.chunkSize", "64X", "rdmarpc.rdma.idleStrategy", "spin").entrySet()) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> with(Map.of(bad.getKey(), bad.getValue()), () -> List.of(new RdmaConfig(), new TcpTransport.Config(),
                            new BufferPool.Config())), bad.toString());
            assertTrue(e.getMessage().startsWith("system property " + bad.getKey() + "='" + bad.getValue() + "'"), e.getMessage());
        }
    }

    @Test
    void aCopyHasEverySettingOfItsOriginal() {
        RdmaConfig a = new RdmaConfig().device("mlx5_1").port(2).gidIndex(3).chunkSize(64 << 10).receiveQueueDepth(4)
                .maxReceiveQueueDepth(9).sharedReceiveQueue(true).sharedReceiveQueueDepth(7).maxSharedReceiveQueueDepth(70)
                .sharedReceiveQueueCredits(5).sendWindow(6).inlineThreshold(64).writeHighWaterMark(3 << 20).poolBytes(64 << 20)
                .slabBytes(1 << 20).poolHighWaterMark(32 << 20).ioThreads(2).completionQueueSize(512)
                .idleStrategy(IdleStrategy.busyPoll()).threadNamePrefix("x").tickInterval(Duration.ofMillis(3))
                .handshakeTimeout(Duration.ofSeconds(9)).ackTimeout(12);
        assertEquals(a.toString(), a.copy().toString());
        assertTrue(!a.toString().equals(new RdmaConfig().toString()));
        TcpTransport.Config t = new TcpTransport.Config().ioThreads(5).threadNamePrefix("y").socketSendBuffer(1 << 20)
                .socketReceiveBuffer(1 << 19).loopbackSocketSendBuffer(1 << 18).writeHighWaterMark(1 << 22)
                .tickInterval(Duration.ofMillis(7)).idleStrategy(IdleStrategy.busyPoll());
        assertTrue(t.toString().contains("ioThreads=5") && t.toString().contains("idleStrategy=busy-poll"), t.toString());
    }
}
