package dev.rdmarpc.rpc.settings;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.rdmarpc.rpc.buffer.BufferPool;
import dev.rdmarpc.rpc.transport.IdleStrategy;
import dev.rdmarpc.rpc.transport.LoopSettings;
import dev.rdmarpc.rpc.transport.rdma.RdmaConfig;
import dev.rdmarpc.rpc.transport.ConnectionLimits;
import dev.rdmarpc.rpc.transport.tcp.TcpKeepalive;
import dev.rdmarpc.rpc.transport.tcp.TcpConfig;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
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

    /**
     * The fluent setters of {@code type}: public, one parameter, returning the type itself; but
     * {@code loop}, the {@link LoopSettings} group, whose settings each configuration lists as its own
     * (checked as {@code LoopSettings}'s setters).
     */
    static List<String> setters(Class<?> type) {
        return Arrays.stream(type.getDeclaredMethods())
                .filter(m -> Modifier.isPublic(m.getModifiers()) && !Modifier.isStatic(m.getModifiers()))
                .filter(m -> m.getParameterCount() == 1 && m.getReturnType() == type && !m.getName().equals("loop"))
                .map(Method::getName).distinct().sorted().toList();
    }

    @Test
    void everySetterIsInTheTableSoCopyAndToStringCannotForgetIt() {
        RdmaConfig rdma = new RdmaConfig();
        Map<String, Object> groups = Map.of("bufferPool", rdma.bufferPool(), "receiveQueue", rdma.receiveQueue(),
                "sharedReceiveQueue", rdma.sharedReceiveQueue(), "send", rdma.send(), "polling", rdma.polling(),
                "timeouts", rdma.timeouts(), "limits", rdma.limits());
        List<String> rdmaProperties = RdmaConfig.systemProperties();
        List<String> notRdmaProperties = new java.util.ArrayList<>(groups.keySet());
        notRdmaProperties.add("tls"); // keys and trust are set by code, never from a property
        int expected = assertEveryone(RdmaConfig.class, rdma.toString(), rdmaProperties, "rdmarpc.rdma.",
                notRdmaProperties, 5);
        for (Map.Entry<String, Object> g : groups.entrySet()) {
            String shown = g.getValue().toString();
            assertTrue(rdma.toString().contains(g.getKey() + "=" + shown), "RdmaConfig.toString() lacks " + g.getKey()
                    + ": " + rdma);
            expected += assertEveryone(g.getValue().getClass(), shown, rdmaProperties, "rdmarpc.rdma." + g.getKey() + ".",
                    g.getKey().equals("bufferPool") ? List.of("slabListener") : List.of(), g.getKey().equals("polling") ? 1 : 2);
        }
        // the loop settings: ioThreads top-level, the others in the polling group
        expected += assertEveryone(LoopSettings.class, rdma.toString(), rdmaProperties, "rdmarpc.rdma.polling.",
                List.of("ioThreads"), 5);
        assertTrue(rdmaProperties.contains("rdmarpc.rdma.ioThreads"), rdmaProperties.toString());
        assertTrue(rdma.toString().contains("ioThreads=1"), rdma.toString());
        expected++;
        assertEquals(expected, rdmaProperties.size(), "no property without a setter: " + rdmaProperties);
        assertEquals(expected, Set.copyOf(rdmaProperties).size(), "no property twice: " + rdmaProperties);

        List<String> tcp = TcpConfig.systemProperties();
        TcpConfig tcpConfig = new TcpConfig();
        String keepalive = tcpConfig.keepalive().toString();
        String limits = tcpConfig.limits().toString();
        assertTrue(tcpConfig.toString().contains("keepalive=" + keepalive), tcpConfig.toString());
        assertTrue(tcpConfig.toString().contains("limits=" + limits), tcpConfig.toString());
        assertEquals(assertEveryone(TcpConfig.class, tcpConfig.toString(), tcp, "rdmarpc.tcp.",
                List.of("bufferPool", "keepalive", "limits", "tls"), 5)
                + assertEveryone(LoopSettings.class, tcpConfig.toString(), tcp, "rdmarpc.tcp.", List.of(), 5)
                + assertEveryone(TcpKeepalive.class, keepalive, tcp, "rdmarpc.tcp.keepalive.", List.of(), 3)
                + assertEveryone(ConnectionLimits.class, limits, tcp, "rdmarpc.tcp.limits.", List.of(), 2),
                tcp.size(), "no property without a setter: " + tcp);
        List<String> pool = BufferPool.Config.systemProperties();
        assertEquals(assertEveryone(BufferPool.Config.class, new BufferPool.Config().toString(), pool, "rdmarpc.pool.",
                List.of("slabListener"), 5), pool.size(), "no property without a setter: " + pool);
    }

    /** @return how many of {@code properties} the setters of {@code type} account for */
    private static int assertEveryone(Class<?> type, String shown, List<String> properties, String prefix, List<String> notProperties,
            int atLeast) {
        List<String> setters = setters(type);
        assertTrue(setters.size() >= atLeast, type + " " + setters);
        for (String s : setters) {
            assertTrue(shown.contains(s + "="), type.getSimpleName() + ".toString() lacks " + s + ": " + shown);
            if (!notProperties.contains(s)) {
                assertTrue(properties.contains(prefix + s), prefix + s + " missing from " + properties);
            }
        }
        return setters.size() - notProperties.size();
    }

    @Test
    void rdmasGroupsReadTheirOwnProperties() {
        assertTrue(RdmaConfig.systemProperties().containsAll(List.of("rdmarpc.rdma.device", "rdmarpc.rdma.ioThreads",
                "rdmarpc.rdma.poolHighWaterMark", "rdmarpc.rdma.bufferPool.chunkSize", "rdmarpc.rdma.bufferPool.slabSize",
                "rdmarpc.rdma.bufferPool.maxPooledBytes", "rdmarpc.rdma.bufferPool.maxLargeBytes",
                "rdmarpc.rdma.bufferPool.idleRelease", "rdmarpc.rdma.receiveQueue.depth", "rdmarpc.rdma.receiveQueue.maxDepth",
                "rdmarpc.rdma.sharedReceiveQueue.enabled", "rdmarpc.rdma.sharedReceiveQueue.depth",
                "rdmarpc.rdma.sharedReceiveQueue.maxDepth", "rdmarpc.rdma.sharedReceiveQueue.credits", "rdmarpc.rdma.send.window",
                "rdmarpc.rdma.send.inlineThreshold", "rdmarpc.rdma.send.writeHighWaterMark", "rdmarpc.rdma.polling.idleStrategy",
                "rdmarpc.rdma.polling.completionQueueSize", "rdmarpc.rdma.polling.tickInterval", "rdmarpc.rdma.polling.idleTickInterval", "rdmarpc.rdma.timeouts.handshake",
                "rdmarpc.rdma.timeouts.ackTimeout", "rdmarpc.rdma.timeouts.idle", "rdmarpc.rdma.timeouts.frameRead")),
                RdmaConfig.systemProperties().toString());
        RdmaConfig r = with(Map.of("rdmarpc.rdma.bufferPool.maxPooledBytes", "1G", "rdmarpc.rdma.bufferPool.idleRelease", "1s",
                "rdmarpc.rdma.receiveQueue.maxDepth", "64", "rdmarpc.rdma.sharedReceiveQueue.credits", "3",
                "rdmarpc.rdma.send.window", "16", "rdmarpc.rdma.send.writeHighWaterMark", "1M",
                "rdmarpc.rdma.polling.completionQueueSize", "8192", "rdmarpc.rdma.polling.tickInterval", "2ms",
                "rdmarpc.rdma.polling.idleTickInterval", "1s", "rdmarpc.rdma.timeouts.ackTimeout", "18"), RdmaConfig::new);
        assertEquals(1L << 30, r.bufferPool().maxPooledBytes());
        assertEquals(Duration.ofSeconds(1), r.bufferPool().idleRelease());
        assertEquals(256 << 10, r.bufferPool().chunkSize(), "RDMA's default where no property is set");
        assertEquals(64, r.receiveQueue().maxDepth());
        assertEquals(3, r.sharedReceiveQueue().credits());
        assertEquals(16, r.send().window());
        assertEquals(1L << 20, r.send().writeHighWaterMark());
        assertEquals(8192, r.polling().completionQueueSize());
        assertEquals(Duration.ofMillis(2), r.loop().tickInterval());
        assertEquals(Duration.ofSeconds(1), r.loop().idleTickInterval());
        assertEquals(18, r.timeouts().ackTimeout());
        assertEquals(r.toString(), r.copy().toString(), "a copy does not read the properties again");

        // the RDMA pool reads rdmarpc.rdma.bufferPool.*, a pool made elsewhere rdmarpc.pool.*: neither reads the other's
        Map<String, String> both = Map.of("rdmarpc.pool.chunkSize", "16K", "rdmarpc.pool.alignment", "64",
                "rdmarpc.rdma.bufferPool.chunkSize", "32K");
        assertEquals(32 << 10, with(both, RdmaConfig::new).bufferPool().chunkSize());
        assertEquals(BufferPool.Config.DEFAULT_ALIGNMENT, with(both, RdmaConfig::new).bufferPool().alignment());
        assertEquals(16 << 10, with(both, BufferPool.Config::new).chunkSize());
        assertEquals(BufferPool.Config.DEFAULT_CHUNK_SIZE, with(both, BufferPool.Config::builtInDefaults).chunkSize());
    }

    @Test
    void propertiesAreDefaultsThatSettersOverride() {
        RdmaConfig r = with(Map.of("rdmarpc.rdma.receiveQueue.depth", "16", "rdmarpc.rdma.bufferPool.chunkSize", "64K",
                "rdmarpc.rdma.polling.idleStrategy", "back-off:20us", "rdmarpc.rdma.timeouts.handshake", "30s",
                "rdmarpc.rdma.sharedReceiveQueue.enabled", "true", "rdmarpc.rdma.device", "rxe0",
                "rdmarpc.rdma.poolHighWaterMark", "auto", "rdmarpc.rdma.timeouts.idle", "90s",
                "rdmarpc.rdma.timeouts.frameRead", "0s"), RdmaConfig::new);
        assertEquals(Duration.ofSeconds(90), r.timeouts().idle());
        assertEquals(Duration.ZERO, r.timeouts().frameRead());
        assertEquals(16, r.receiveQueue().depth());
        assertEquals(64 << 10, r.bufferPool().chunkSize());
        assertEquals(IdleStrategy.backOff(Duration.ofNanos(20_000)), r.loop().idleStrategy());
        assertEquals(Duration.ofSeconds(30), r.timeouts().handshake());
        assertTrue(r.sharedReceiveQueue().enabled());
        assertEquals("rxe0", r.device());
        assertEquals(RdmaConfig.AUTO_POOL_HIGH_WATER_MARK, r.poolHighWaterMark());
        assertEquals(8, r.receiveQueue(q -> q.depth(8)).receiveQueue().depth(), "a setter still wins");
        assertEquals(8, new RdmaConfig().receiveQueue().depth(), "cleared: the built-in default again");
        assertNull(new RdmaConfig().device());

        TcpConfig t = with(Map.of("rdmarpc.tcp.ioThreads", "3", "rdmarpc.tcp.writeHighWaterMark", "16M",
                "rdmarpc.tcp.idleStrategy", "busy-poll", "rdmarpc.tcp.tickInterval", "5ms", "rdmarpc.tcp.frameReadTimeout", "2s",
                "rdmarpc.tcp.idleTimeout", "0s", "rdmarpc.tcp.keepalive.idle", "30s", "rdmarpc.tcp.keepalive.count", "5",
                "rdmarpc.tcp.limits.maxConnectionsPerAddress", "64"),
                TcpConfig::new);
        assertEquals(3, t.loop().ioThreads());
        assertEquals(Duration.ofSeconds(2), t.frameReadTimeout());
        assertEquals(Duration.ZERO, t.idleTimeout());
        assertEquals(Duration.ofSeconds(30), t.keepalive().idle());
        assertEquals(5, t.keepalive().count());
        assertEquals(64, t.limits().maxConnectionsPerAddress());
        assertEquals(4096, t.limits().maxConnections(), "unset: the built-in default");
        assertEquals(Duration.ofSeconds(5), t.keepalive().interval(), "unset: the built-in default");
        assertEquals(16L << 20, t.writeHighWaterMark());
        assertEquals(IdleStrategy.busyPoll(), t.loop().idleStrategy());
        assertEquals(Duration.ofMillis(5), t.loop().tickInterval());

        BufferPool.Config p = with(Map.of("rdmarpc.pool.chunkSize", "128k", "rdmarpc.pool.idleRelease", "PT30S"),
                BufferPool.Config::new);
        assertEquals(128 << 10, p.chunkSize());
        assertEquals(Duration.ofSeconds(30), p.idleRelease());
        TcpConfig withPool = with(Map.of("rdmarpc.pool.maxPooledBytes", "1G"), TcpConfig::new);
        assertEquals(1L << 30, withPool.bufferPool().maxPooledBytes(), "a transport's own pool settings read theirs");
    }

    @Test
    void anUnreadablePropertyIsAnErrorThatNamesIt() {
        for (Map.Entry<String, String> bad : Map.of("rdmarpc.rdma.receiveQueue.depth", "many", "rdmarpc.rdma.sharedReceiveQueue.enabled", "yes",
                "rdmarpc.tcp.tickInterval", "10", "rdmarpc.pool.chunkSize", "64X", "rdmarpc.rdma.polling.idleStrategy", "spin",
                "rdmarpc.rdma.bufferPool.maxPooledBytes", "lots", "rdmarpc.rdma.timeouts.handshake", "5").entrySet()) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> with(Map.of(bad.getKey(), bad.getValue()), () -> List.of(new RdmaConfig(), new TcpConfig(),
                            new BufferPool.Config())), bad.toString());
            assertTrue(e.getMessage().startsWith("system property " + bad.getKey() + "='" + bad.getValue() + "'"), e.getMessage());
        }
    }

    @Test
    void aCopyHasEverySettingOfItsOriginal() {
        RdmaConfig a = new RdmaConfig().device("mlx5_1").port(2).gidIndex(3).loop(l -> l.ioThreads(2)).threadNamePrefix("x")
                .bufferPool(p -> p.chunkSize(64 << 10).slabSize(1 << 20).maxPooledBytes(64 << 20).maxLargeBytes(32 << 20)
                        .alignment(8192).idleRelease(Duration.ofSeconds(3)))
                .poolHighWaterMark(32 << 20)
                .receiveQueue(q -> q.depth(4).maxDepth(9))
                .sharedReceiveQueue(s -> s.enabled(true).depth(7).maxDepth(70).credits(5))
                .send(s -> s.window(6).inlineThreshold(64).writeHighWaterMark(3 << 20))
                .polling(p -> p.completionQueueSize(512)).loop(l -> l.idleStrategy(IdleStrategy.busyPoll()).tickInterval(Duration.ofMillis(3)))
                .timeouts(t -> t.handshake(Duration.ofSeconds(9)).ackTimeout(12));
        assertEquals(a.toString(), a.copy().toString());
        assertTrue(!a.toString().equals(new RdmaConfig().toString()));
        for (String changed : List.of("device=mlx5_1", "alignment=8192", "idleRelease=PT3S", "maxDepth=9", "credits=5",
                "writeHighWaterMark=3145728", "tickInterval=PT0.003S", "ackTimeout=12")) {
            assertTrue(a.copy().toString().contains(changed), changed + " not copied: " + a.copy());
        }
        TcpConfig t = new TcpConfig().loop(l -> l.ioThreads(5)).threadNamePrefix("y").socketSendBuffer(1 << 20)
                .socketReceiveBuffer(1 << 19).loopbackSocketSendBuffer(1 << 18).writeHighWaterMark(1 << 22)
                .loop(l -> l.tickInterval(Duration.ofMillis(7)).idleStrategy(IdleStrategy.busyPoll()))
                .frameReadTimeout(Duration.ofSeconds(3)).idleTimeout(Duration.ofMinutes(1))
                .keepalive(k -> k.idle(Duration.ofSeconds(20)).interval(Duration.ofSeconds(4)).count(6));
        assertTrue(t.toString().contains("ioThreads=5") && t.toString().contains("idleStrategy=busy-poll"), t.toString());
        for (String changed : List.of("frameReadTimeout=PT3S", "idleTimeout=PT1M", "keepalive=TcpKeepalive[idle=PT20S, interval=PT4S, count=6]")) {
            assertTrue(t.toString().contains(changed), changed + " not shown: " + t);
        }
    }
}
