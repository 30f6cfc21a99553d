package dev.rdmarpc.rpc.transport;

import dev.rdmarpc.rpc.settings.SettingsTable;
import dev.rdmarpc.rpc.transport.rdma.RdmaConfig;
import dev.rdmarpc.rpc.transport.tcp.TcpConfig;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The loop settings are one group, declared once, that both transports' configurations hold. */
class LoopSettingsTest {

    private static <T> T with(Map<String, String> properties, Supplier<T> body) {
        properties.forEach(System::setProperty);
        try {
            return body.get();
        } finally {
            properties.keySet().forEach(System::clearProperty);
        }
    }

    @Test
    void bothTransportsHoldTheSameGroupWithTheSameDefaults() {
        assertEquals(Runtime.getRuntime().availableProcessors(), new TcpConfig().loop().ioThreads(), "TCP: one per core");
        assertEquals(1, new RdmaConfig().loop().ioThreads(), "RDMA: one");
        LoopSettings tcp = new TcpConfig().loop(l -> l.ioThreads(1)).loop();
        LoopSettings rdma = new RdmaConfig().loop();
        assertEquals(tcp.toString(), rdma.toString(), "the same defaults but ioThreads");
        assertEquals(IdleStrategy.adaptive(), tcp.idleStrategy());
        assertEquals(LoopSettings.DEFAULT_TICK_INTERVAL, tcp.tickInterval());
        assertEquals(LoopSettings.DEFAULT_IDLE_TICK_INTERVAL, rdma.idleTickInterval());
        assertEquals(0, rdma.ioThreadCpus().length);
        assertEquals(-1, rdma.ioThreadCpu(0));
    }

    @Test
    void theTransportsSettersWriteTheGroup() {
        TcpConfig tcp = new TcpConfig().loop(l -> l.tickInterval(Duration.ofMillis(5))
                .idleTickInterval(Duration.ofSeconds(1)).idleStrategy(IdleStrategy.event()).ioThreadCpus(0));
        assertEquals(Duration.ofMillis(5), tcp.loop().tickInterval());
        assertEquals(Duration.ofSeconds(1), tcp.loop().idleTickInterval());
        assertEquals(IdleStrategy.event(), tcp.loop().idleStrategy());
        assertArrayEquals(new int[] {0}, tcp.loop().ioThreadCpus());
        RdmaConfig rdma = new RdmaConfig().loop(l -> l.tickInterval(Duration.ofMillis(7)).idleStrategy(IdleStrategy.busyPoll())
                .ioThreadCpus(0, 1));
        assertEquals(Duration.ofMillis(7), rdma.loop().tickInterval());
        assertEquals(IdleStrategy.busyPoll(), rdma.loop().idleStrategy());
        assertEquals(1, rdma.loop().ioThreadCpu(3));
        assertTrue(rdma.polling().toString().contains("tickInterval=PT0.007S"), "the polling group lists the loop's settings");
    }

    @Test
    void eachTransportKeepsItsPropertyNames() {
        TcpConfig tcp = with(Map.of("rdmarpc.tcp.idleTickInterval", "2s", "rdmarpc.tcp.idleStrategy", "event"),
                TcpConfig::new);
        assertEquals(Duration.ofSeconds(2), tcp.loop().idleTickInterval());
        assertEquals(IdleStrategy.event(), tcp.loop().idleStrategy());
        RdmaConfig rdma = with(Map.of("rdmarpc.rdma.polling.tickInterval", "3ms", "rdmarpc.rdma.polling.ioThreadCpus", "0"),
                RdmaConfig::new);
        assertEquals(Duration.ofMillis(3), rdma.loop().tickInterval());
        assertArrayEquals(new int[] {0}, rdma.loop().ioThreadCpus());
        assertTrue(TcpConfig.systemProperties().containsAll(List.of("rdmarpc.tcp.tickInterval",
                "rdmarpc.tcp.idleTickInterval", "rdmarpc.tcp.idleStrategy", "rdmarpc.tcp.ioThreadCpus")));
        assertTrue(RdmaConfig.systemProperties().containsAll(List.of("rdmarpc.rdma.polling.tickInterval",
                "rdmarpc.rdma.polling.idleTickInterval", "rdmarpc.rdma.polling.idleStrategy",
                "rdmarpc.rdma.polling.ioThreadCpus")));
        assertEquals(3, with(Map.of("rdmarpc.tcp.ioThreads", "3"), TcpConfig::new).loop().ioThreads());
        assertEquals(2, with(Map.of("rdmarpc.rdma.ioThreads", "2"), RdmaConfig::new).loop().ioThreads());
        assertTrue(RdmaConfig.systemProperties().contains("rdmarpc.rdma.ioThreads"));
        assertFalse(RdmaConfig.systemProperties().contains("rdmarpc.rdma.polling.ioThreads"), "ioThreads stays top-level");
    }

    @Test
    void ioThreadsIsCheckedAgainstEachTransportsBound() {
        assertEquals(1024, new TcpConfig().loop(l -> l.ioThreads(1024)).conclude().loop().ioThreads());
        IllegalArgumentException tcp = assertThrows(IllegalArgumentException.class,
                () -> new TcpConfig().loop(l -> l.ioThreads(1025)).conclude());
        assertTrue(tcp.getMessage().startsWith("ioThreads must be in [1, 1024]"), tcp.getMessage());
        IllegalArgumentException rdma = assertThrows(IllegalArgumentException.class,
                () -> new RdmaConfig().loop(l -> l.ioThreads(257)).conclude());
        assertTrue(rdma.getMessage().startsWith("ioThreads must be in [1, 256]"), rdma.getMessage());
        assertThrows(IllegalArgumentException.class, () -> new TcpConfig().loop(l -> l.ioThreads(0)).conclude());
    }

    @Test
    void oneCheckNamesTheSettingAsEachTransportDoes() {
        IllegalArgumentException tcp = assertThrows(IllegalArgumentException.class,
                () -> new TcpConfig().loop(l -> l.tickInterval(Duration.ZERO)).conclude());
        assertTrue(tcp.getMessage().startsWith("tickInterval must be in [1 ms, 60 s]"), tcp.getMessage());
        IllegalArgumentException rdma = assertThrows(IllegalArgumentException.class,
                () -> new RdmaConfig().loop(l -> l.idleTickInterval(Duration.ofMinutes(2))).conclude());
        assertTrue(rdma.getMessage().startsWith("polling.idleTickInterval must be in [1 ms, 60 s]"), rdma.getMessage());
        IllegalArgumentException cpus = assertThrows(IllegalArgumentException.class, () -> new LoopSettings("polling.", 1, 256).ioThreadCpus(-1));
        assertTrue(cpus.getMessage().contains("polling.ioThreadCpus"), cpus.getMessage());
    }

    @Test
    void copiesAreIndependent() {
        RdmaConfig a = new RdmaConfig().loop(l -> l.tickInterval(Duration.ofMillis(4)));
        RdmaConfig b = a.copy();
        assertNotSame(a.loop(), b.loop());
        assertEquals(Duration.ofMillis(4), b.loop().tickInterval());
        b.loop().tickInterval(Duration.ofMillis(9));
        assertEquals(Duration.ofMillis(4), a.loop().tickInterval());
        LoopSettings c = new LoopSettings("", 1, 1024);
        c.copyFrom(a.loop());
        assertEquals(a.loop().toString(), c.toString());
    }

    @Test
    void aTableCannotBorrowASettingThatIsNotDeclared() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> new SettingsTable<Object>("X", "x.").addFrom(LoopSettings.settingsTable(), "spinCount", o -> new LoopSettings("", 1, 1024)));
        assertTrue(e.getMessage().contains("LoopSettings declares no setting spinCount"), e.getMessage());
    }
}
