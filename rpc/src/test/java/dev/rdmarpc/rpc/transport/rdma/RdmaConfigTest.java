package dev.rdmarpc.rpc.transport.rdma;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.rdmarpc.rpc.buffer.BufferPool;
import dev.rdmarpc.rpc.buffer.Slab;
import dev.rdmarpc.rpc.buffer.SlabListener;
import dev.rdmarpc.rpc.transport.LoopSettings;
import dev.rdmarpc.rpc.transport.loop.CpuAffinity;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
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
        assertEquals(256 * 1024, c.bufferPool().chunkSize());
        assertEquals(8L << 20, c.bufferPool().slabSize());
        assertEquals(8, c.receiveQueue().depth());
        assertEquals(32, c.receiveQueue().maxDepth());
        assertEquals(4, c.send().window());
        assertEquals(256, c.send().inlineThreshold());
        assertEquals(1 << 20, c.send().rendezvousThreshold(), "frames of 1 MiB and more go by rendezvous by default");
        assertEquals(8L << 20, c.send().writeHighWaterMark());
        assertEquals(dev.rdmarpc.rpc.transport.IdleStrategy.adaptive(), c.loop().idleStrategy());
        assertEquals(4096, c.polling().completionQueueSize());
        assertEquals(Duration.ofMillis(10), c.loop().tickInterval());
        assertEquals(512L << 20, c.bufferPool().maxPooledBytes());
        assertEquals(512L << 20, c.bufferPool().maxLargeBytes());
        assertEquals(SlabListener.NONE, c.bufferPool().slabListener());
        assertEquals(384L << 20, c.poolHighWaterMark(), "three quarters of the pool");
        assertEquals(false, c.sharedReceiveQueue().enabled());
        assertEquals(64, c.sharedReceiveQueue().depth());
        assertEquals(256, c.sharedReceiveQueue().maxDepth());
        assertEquals(8, c.sharedReceiveQueue().credits());
        assertEquals(Duration.ofSeconds(5), c.timeouts().handshake());
        assertEquals(14, c.timeouts().ackTimeout());
        assertEquals(Duration.ofMinutes(5), c.timeouts().idle(), "TcpConfig's idleTimeout");
        assertEquals(Duration.ofSeconds(30), c.timeouts().frameRead(), "TcpConfig's frameReadTimeout");
    }

    @Test
    void sharedReceiveQueueSettingsAreCopiedAndValidated() {
        RdmaConfig a = new RdmaConfig().sharedReceiveQueue(s -> s.enabled(true).depth(16).maxDepth(32).credits(2));
        RdmaConfig b = a.copy().conclude();
        a.sharedReceiveQueue(s -> s.depth(1).maxDepth(1).credits(1));
        assertTrue(b.sharedReceiveQueue().enabled());
        assertEquals(16, b.sharedReceiveQueue().depth());
        assertEquals(32, b.sharedReceiveQueue().maxDepth());
        assertEquals(2, b.sharedReceiveQueue().credits());
        // the per-connection receive bound does not apply with a shared receive queue
        new RdmaConfig().sharedReceiveQueue(s -> s.enabled(true)).polling(p -> p.completionQueueSize(256))
                .receiveQueue(q -> q.maxDepth(1000)).conclude();
        // without a shared receive queue its depth is not checked against the completion queue
        new RdmaConfig().polling(p -> p.completionQueueSize(128)).conclude();
    }

    @Test
    void copyIsIndependent() {
        RdmaConfig a = new RdmaConfig().device("rxe0").send(s -> s.window(8));
        RdmaConfig b = a.copy();
        a.send(s -> s.window(2));
        assertEquals(8, b.send().window());
        assertEquals("rxe0", b.device());
    }

    @Test
    void aCopysGroupsAreItsOwn() {
        RdmaConfig a = new RdmaConfig();
        RdmaConfig b = a.copy();
        b.bufferPool(p -> p.chunkSize(64 << 10).maxPooledBytes(1L << 30)).receiveQueue(q -> q.depth(2).maxDepth(3))
                .sharedReceiveQueue(s -> s.enabled(true).credits(5)).send(s -> s.window(9).inlineThreshold(0))
                .polling(p -> p.completionQueueSize(128)).loop(l -> l.tickInterval(Duration.ofMillis(1)))
                .timeouts(t -> t.handshake(Duration.ofSeconds(1)).ackTimeout(20));
        assertEquals(new RdmaConfig().toString(), a.toString(), "the original is untouched");
        assertTrue(a.bufferPool() != b.bufferPool() && a.receiveQueue() != b.receiveQueue()
                && a.sharedReceiveQueue() != b.sharedReceiveQueue() && a.send() != b.send() && a.polling() != b.polling()
                && a.timeouts() != b.timeouts());
        // and the other way: editing the original after copying leaves the copy alone
        a.receiveQueue(q -> q.depth(30));
        assertEquals(2, b.receiveQueue().depth());
        // a group's own copy is independent too
        ReceiveQueueSettings q = b.receiveQueue().copy().depth(7);
        assertEquals(2, b.receiveQueue().depth());
        assertEquals(7, q.depth());
    }

    @Test
    void aGivenPoolConfigIsCopiedAndReplacesRdmasDefaults() {
        BufferPool.Config given = BufferPool.Config.builtInDefaults().chunkSize(16 << 10).slabSize(1 << 20);
        RdmaConfig c = new RdmaConfig().bufferPool(given);
        given.chunkSize(8 << 10);
        assertEquals(16 << 10, c.bufferPool().chunkSize(), "copied: later changes to the given one do not reach it");
        assertEquals(BufferPool.Config.DEFAULT_MAX_POOLED_BYTES, c.bufferPool().maxPooledBytes());
        assertTrue(given != c.bufferPool());
        c.conclude();
    }

    @Test
    void toStringListsEveryGroupsSettings() {
        String s = new RdmaConfig().receiveQueue(q -> q.depth(5)).bufferPool(p -> p.maxLargeBytes(7L << 20)).toString();
        for (String part : new String[] {"device=null", "ioThreads=1", "poolHighWaterMark=-1",
                "bufferPool=BufferPool.Config[chunkSize=262144, slabSize=8388608, maxPooledBytes=536870912, maxLargeBytes=7340032",
                "slabListener=SlabListener.NONE", "idleRelease=PT10S",
                "receiveQueue=ReceiveQueue[depth=5, maxDepth=32]",
                "sharedReceiveQueue=SharedReceiveQueue[enabled=false, depth=64, maxDepth=256, credits=8]",
                "send=Send[window=4, inlineThreshold=256, writeHighWaterMark=8388608, rendezvousThreshold=1048576]",
                "polling=Polling[idleStrategy=adaptive:2000us, completionQueueSize=4096, tickInterval=PT0.01S, idleTickInterval=PT0.25S, ioThreadCpus=none]",
                "timeouts=Timeouts[handshake=PT5S, ackTimeout=14, idle=PT5M, frameRead=PT30S]"}) {
            assertTrue(s.contains(part), part + " missing from " + s);
        }
        assertTrue(s.startsWith("RdmaConfig[device=null"), s);
    }

    /** A user's slab listener is kept beside the transport's registration: chained after it, never dropped. */
    @Test
    void aUsersSlabListenerIsKeptAndChainedAfterTheTransports() {
        List<String> told = new ArrayList<>();
        SlabListener user = new SlabListener() {
            @Override
            public void slabCreated(Slab slab) {
                told.add("user created");
            }

            @Override
            public void slabFreed(Slab slab) {
                told.add("user freed");
            }
        };
        RdmaConfig c = new RdmaConfig().bufferPool(p -> p.slabListener(user));
        assertEquals(user, c.copy().conclude().bufferPool().slabListener(), "kept by copy and conclude");
        SlabListener devices = new SlabListener() {
            @Override
            public void slabCreated(Slab slab) {
                told.add("devices registered");
            }

            @Override
            public void slabFreed(Slab slab) {
                told.add("devices deregistered");
            }
        };
        // what RdmaTransport does with its devices and the configured listener
        BufferPool.Config poolConfig = c.bufferPool().copy();
        try (BufferPool pool = BufferPool.create(poolConfig.chunkSize(4096).slabSize(4096).maxPooledBytes(1 << 20)
                .slabListener(devices.andThen(poolConfig.slabListener())))) {
            pool.acquire().release();
        }
        assertEquals(List.of("devices registered", "user created", "user freed", "devices deregistered"), told);
        assertEquals(devices, devices.andThen(SlabListener.NONE), "no user listener: the devices alone");
    }

    @Test
    void aFailingUserListenerUndoesTheRegistration() {
        List<String> told = new ArrayList<>();
        SlabListener devices = new SlabListener() {
            @Override
            public void slabCreated(Slab slab) {
                told.add("registered");
            }

            @Override
            public void slabFreed(Slab slab) {
                told.add("deregistered");
            }
        };
        SlabListener failing = new SlabListener() {
            @Override
            public void slabCreated(Slab slab) {
                throw new IllegalStateException("no");
            }

            @Override
            public void slabFreed(Slab slab) {
                told.add("failing freed");
            }
        };
        try (BufferPool pool = BufferPool.create(BufferPool.Config.builtInDefaults().chunkSize(4096).slabSize(4096)
                .maxPooledBytes(1 << 20).slabListener(devices.andThen(failing)))) {
            assertNull(pool.acquire(), "the acquisition fails, as with any failing listener");
        }
        assertEquals(List.of("registered", "deregistered"), told);
    }

    @Test
    void ioThreadCpusComeFromTheirPropertyAndGoRoundTheThreads() {
        assertArrayEquals(new int[0], new RdmaConfig().loop().ioThreadCpus(), "not pinned by default");
        assertEquals(-1, new RdmaConfig().loop().ioThreadCpu(0));
        LoopSettings p = new RdmaConfig().loop(l -> l.ioThreadCpus(3, 1)).loop();
        assertEquals(3, p.ioThreadCpu(0));
        assertEquals(1, p.ioThreadCpu(1));
        assertEquals(3, p.ioThreadCpu(2));
        String key = "rdmarpc.rdma.polling.ioThreadCpus";
        System.setProperty(key, "2,3");
        try {
            assertArrayEquals(new int[]{2, 3}, new RdmaConfig().loop().ioThreadCpus());
            assertTrue(new RdmaConfig().toString().contains("ioThreadCpus=2,3"));
            System.setProperty(key, "2;3");
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, RdmaConfig::new);
            assertTrue(e.getMessage().contains(key), e.getMessage());
        } finally {
            System.clearProperty(key);
        }
    }

    /** Checked before any device or pool is opened: the refusal leaves nothing behind (and needs no device). */
    @Test
    void aCpuTheCreatingThreadMayNotUseIsRefusedBeforeAnythingOpens() {
        assumeTrue(CpuAffinity.isSupported(), "Linux only");
        int outside = CpuAffinity.MAX_CPUS - 1;
        assumeTrue(!CpuAffinity.currentThreadCpus().contains(outside));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> RdmaTransport.create(new RdmaConfig().loop(l -> l.ioThreadCpus(outside))));
        assertTrue(e.getMessage().startsWith("RdmaConfig polling.ioThreadCpus names CPU " + outside), e.getMessage());
    }

    @Test
    void badSettingsAreNamed() {
        bad(c -> c.device(" "), "device");
        bad(c -> c.port(0), "port");
        bad(c -> c.gidIndex(-2), "gidIndex");
        bad(c -> c.gidIndex(256), "gidIndex");
        bad(c -> c.bufferPool(p -> p.chunkSize(3000)), "bufferPool.chunkSize");
        bad(c -> c.bufferPool(p -> p.chunkSize(1024)), "bufferPool.chunkSize");
        bad(c -> c.bufferPool(p -> p.chunkSize(32 << 20)), "bufferPool.chunkSize");
        bad(c -> c.receiveQueue(q -> q.depth(0)), "receiveQueue.depth");
        bad(c -> c.receiveQueue(q -> q.depth(16).maxDepth(8)), "receiveQueue.maxDepth");
        bad(c -> c.send(s -> s.window(0)), "send.window");
        bad(c -> c.send(s -> s.window(2000)), "send.window");
        bad(c -> c.send(s -> s.inlineThreshold(-1)), "send.inlineThreshold");
        bad(c -> c.send(s -> s.inlineThreshold(4096)), "send.inlineThreshold");
        bad(c -> c.send(s -> s.rendezvousThreshold(4095)), "send.rendezvousThreshold");
        bad(c -> c.send(s -> s.rendezvousThreshold(-1)), "send.rendezvousThreshold");
        bad(c -> c.polling(p -> p.completionQueueSize(10)), "polling.completionQueueSize");
        bad(c -> c.polling(p -> p.completionQueueSize(64)).receiveQueue(q -> q.maxDepth(100)), "polling.completionQueueSize");
        bad(c -> c.loop(l -> l.idleStrategy(dev.rdmarpc.rpc.transport.IdleStrategy.backOff(Duration.ofSeconds(1)))),
                "back-off spin");
        bad(c -> c.bufferPool(p -> p.slabSize(1000)), "bufferPool.slabSize");
        bad(c -> c.bufferPool(p -> p.slabSize(2L << 30).maxPooledBytes(4L << 30)), "bufferPool.slabSize");
        bad(c -> c.bufferPool(p -> p.maxPooledBytes(1 << 20)), "bufferPool.maxPooledBytes");
        bad(c -> c.bufferPool(p -> p.maxPooledBytes(8 << 20).chunkSize(1 << 20).slabSize(8 << 20)), "bufferPool.maxPooledBytes");
        bad(c -> c.bufferPool(p -> p.maxLargeBytes(-1)), "bufferPool.maxLargeBytes");
        bad(c -> c.bufferPool(p -> p.alignment(3)), "bufferPool.alignment");
        bad(c -> c.poolHighWaterMark(1L << 40), "poolHighWaterMark");
        bad(c -> c.poolHighWaterMark(-5), "poolHighWaterMark");
        bad(c -> c.loop(l -> l.ioThreads(0)), "ioThreads");
        bad(c -> c.send(s -> s.writeHighWaterMark(0)), "send.writeHighWaterMark");
        bad(c -> c.loop(l -> l.tickInterval(Duration.ZERO)), "polling.tickInterval");
        bad(c -> c.loop(l -> l.idleTickInterval(Duration.ofMinutes(2))), "polling.idleTickInterval");
        bad(c -> c.loop(l -> l.ioThreadCpus(0, -1)), "polling.ioThreadCpus");
        bad(c -> c.loop(l -> l.ioThreadCpus(1024)), "polling.ioThreadCpus");
        bad(c -> c.timeouts(t -> t.handshake(Duration.ZERO)), "timeouts.handshake");
        bad(c -> c.timeouts(t -> t.ackTimeout(0)), "timeouts.ackTimeout");
        bad(c -> c.timeouts(t -> t.ackTimeout(32)), "timeouts.ackTimeout");
        bad(c -> c.timeouts(t -> t.idle(Duration.ofSeconds(-1))), "timeouts.idle");
        bad(c -> c.timeouts(t -> t.frameRead(Duration.ofSeconds(-1))), "timeouts.frameRead");
        bad(c -> c.sharedReceiveQueue(s -> s.depth(0)), "sharedReceiveQueue.depth");
        bad(c -> c.sharedReceiveQueue(s -> s.depth(70000).maxDepth(70000)), "sharedReceiveQueue.depth");
        bad(c -> c.sharedReceiveQueue(s -> s.depth(64).maxDepth(32)), "sharedReceiveQueue.maxDepth");
        bad(c -> c.sharedReceiveQueue(s -> s.maxDepth(65537)), "sharedReceiveQueue.maxDepth");
        bad(c -> c.sharedReceiveQueue(s -> s.credits(0)), "sharedReceiveQueue.credits");
        bad(c -> c.sharedReceiveQueue(s -> s.credits(4097)), "sharedReceiveQueue.credits");
        bad(c -> c.sharedReceiveQueue(s -> s.enabled(true)).polling(p -> p.completionQueueSize(128)),
                "polling.completionQueueSize");
        bad(c -> c.sharedReceiveQueue(s -> s.enabled(true).depth(40)).bufferPool(p -> p.maxPooledBytes(8 << 20).slabSize(4 << 20)),
                "bufferPool.maxPooledBytes");
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
