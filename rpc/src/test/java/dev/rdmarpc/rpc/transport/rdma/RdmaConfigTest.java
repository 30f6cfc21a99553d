package dev.rdmarpc.rpc.transport.rdma;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;

/** Defaults and validation of {@link RdmaConfig}: every bad setting is named in the error. */
class RdmaConfigTest {

    @Test
    void defaults() {
        RdmaConfig c = new RdmaConfig().conclude();
        assertNull(c.device());
        assertEquals(1, c.port());
        assertEquals(RdmaConfig.AUTO_GID_INDEX, c.gidIndex());
        assertEquals(256 * 1024, c.chunkSize());
        assertEquals(8, c.receiveQueueDepth());
        assertEquals(32, c.maxReceiveQueueDepth());
        assertEquals(4, c.sendWindow());
        assertEquals(256, c.inlineThreshold());
        assertEquals(dev.rdmarpc.rpc.transport.IdleStrategy.event(), c.idleStrategy());
        assertEquals(512L << 20, c.poolBytes());
        assertEquals(384L << 20, c.poolHighWaterMark(), "three quarters of the pool");
        assertEquals(false, c.sharedReceiveQueue());
        assertEquals(64, c.sharedReceiveQueueDepth());
        assertEquals(256, c.maxSharedReceiveQueueDepth());
        assertEquals(8, c.sharedReceiveQueueCredits());
    }

    @Test
    void sharedReceiveQueueSettingsAreCopiedAndValidated() {
        RdmaConfig a = new RdmaConfig().sharedReceiveQueue(true).sharedReceiveQueueDepth(16).maxSharedReceiveQueueDepth(32)
                .sharedReceiveQueueCredits(2);
        RdmaConfig b = a.copy().conclude();
        a.sharedReceiveQueueDepth(1).maxSharedReceiveQueueDepth(1).sharedReceiveQueueCredits(1);
        assertTrue(b.sharedReceiveQueue());
        assertEquals(16, b.sharedReceiveQueueDepth());
        assertEquals(32, b.maxSharedReceiveQueueDepth());
        assertEquals(2, b.sharedReceiveQueueCredits());
        // the per-connection receive bound does not apply with a shared receive queue
        new RdmaConfig().sharedReceiveQueue(true).completionQueueSize(256).maxReceiveQueueDepth(1000).conclude();
        // without a shared receive queue its depth is not checked against the completion queue
        new RdmaConfig().completionQueueSize(128).conclude();
    }

    @Test
    void copyIsIndependent() {
        RdmaConfig a = new RdmaConfig().device("rxe0").sendWindow(8);
        RdmaConfig b = a.copy();
        a.sendWindow(2);
        assertEquals(8, b.sendWindow());
        assertEquals("rxe0", b.device());
    }

    @Test
    void badSettingsAreNamed() {
        bad(c -> c.device(" "), "device");
        bad(c -> c.port(0), "port");
        bad(c -> c.gidIndex(-2), "gidIndex");
        bad(c -> c.gidIndex(256), "gidIndex");
        bad(c -> c.chunkSize(3000), "chunkSize");
        bad(c -> c.chunkSize(1024), "chunkSize");
        bad(c -> c.chunkSize(32 << 20), "chunkSize");
        bad(c -> c.receiveQueueDepth(0), "receiveQueueDepth");
        bad(c -> c.receiveQueueDepth(16).maxReceiveQueueDepth(8), "maxReceiveQueueDepth");
        bad(c -> c.sendWindow(0), "sendWindow");
        bad(c -> c.sendWindow(2000), "sendWindow");
        bad(c -> c.inlineThreshold(-1), "inlineThreshold");
        bad(c -> c.inlineThreshold(4096), "inlineThreshold");
        bad(c -> c.completionQueueSize(10), "completionQueueSize");
        bad(c -> c.completionQueueSize(64).maxReceiveQueueDepth(100), "completionQueueSize");
        bad(c -> c.idleStrategy(dev.rdmarpc.rpc.transport.IdleStrategy.backOff(Duration.ofSeconds(1))), "back-off spin");
        bad(c -> c.slabBytes(1000), "slabBytes");
        bad(c -> c.poolBytes(1 << 20), "poolBytes");
        bad(c -> c.poolBytes(8 << 20).chunkSize(1 << 20).slabBytes(8 << 20), "poolBytes");
        bad(c -> c.poolHighWaterMark(1L << 40), "poolHighWaterMark");
        bad(c -> c.poolHighWaterMark(-5), "poolHighWaterMark");
        bad(c -> c.ioThreads(0), "ioThreads");
        bad(c -> c.writeHighWaterMark(0), "writeHighWaterMark");
        bad(c -> c.tickInterval(Duration.ZERO), "tickInterval");
        bad(c -> c.handshakeTimeout(Duration.ZERO), "handshakeTimeout");
        bad(c -> c.ackTimeout(0), "ackTimeout");
        bad(c -> c.ackTimeout(32), "ackTimeout");
        bad(c -> c.sharedReceiveQueueDepth(0), "sharedReceiveQueueDepth");
        bad(c -> c.sharedReceiveQueueDepth(70000).maxSharedReceiveQueueDepth(70000), "sharedReceiveQueueDepth");
        bad(c -> c.sharedReceiveQueueDepth(64).maxSharedReceiveQueueDepth(32), "maxSharedReceiveQueueDepth");
        bad(c -> c.maxSharedReceiveQueueDepth(65537), "maxSharedReceiveQueueDepth");
        bad(c -> c.sharedReceiveQueueCredits(0), "sharedReceiveQueueCredits");
        bad(c -> c.sharedReceiveQueueCredits(4097), "sharedReceiveQueueCredits");
        bad(c -> c.sharedReceiveQueue(true).completionQueueSize(128), "completionQueueSize");
        bad(c -> c.sharedReceiveQueue(true).sharedReceiveQueueDepth(40).poolBytes(8 << 20).slabBytes(4 << 20),
                "poolBytes");
    }

    @Test
    void explicitHighWaterMarkIsKept() {
        assertEquals(100, new RdmaConfig().poolHighWaterMark(100).conclude().poolHighWaterMark());
    }

    private static void bad(UnaryOperator<RdmaConfig> change, String name) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> change.apply(new RdmaConfig()).conclude());
        assertTrue(e.getMessage().startsWith(name), "'" + e.getMessage() + "' should name " + name);
    }
}
