package dev.rdmarpc.rdmacm;

import java.util.concurrent.atomic.AtomicLong;

/**
 * Live native objects of this module, JVM-wide: incremented when a native object is created,
 * decremented when it is destroyed, so leak tests (and monitoring) can check that every
 * {@link EventChannel}, {@link CmId} and queue pair created on an id was closed. Readable from any
 * thread; the counts are exact once the threads that create and close resources are quiescent.
 */
public final class RdmaCmCounters {
    static final AtomicLong EVENT_CHANNELS = new AtomicLong();
    static final AtomicLong IDS = new AtomicLong();
    static final AtomicLong QUEUE_PAIRS = new AtomicLong();

    private RdmaCmCounters() {
    }

    /** Open {@link EventChannel}s. */
    public static long liveEventChannels() {
        return EVENT_CHANNELS.get();
    }

    /** Open {@link CmId}s, those created by {@link EventChannel#createId()} and those that came with a connection request. */
    public static long liveIds() {
        return IDS.get();
    }

    /** Queue pairs created on ids ({@code rdma_create_qp}) and not yet destroyed. */
    public static long liveQueuePairs() {
        return QUEUE_PAIRS.get();
    }

    /** The sum of the three counts: 0 when nothing of this module is left open. */
    public static long liveObjects() {
        return liveEventChannels() + liveIds() + liveQueuePairs();
    }
}
