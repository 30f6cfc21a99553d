package dev.rdmarpc.rpc.transport.rdma;

import dev.rdmarpc.ibverbs.verbs.SharedReceiveQueue;
import dev.rdmarpc.rpc.buffer.BufferPool;
import java.io.IOException;

/**
 * The completion queues (and shared receive queue) one RDMA I/O thread has per device: created on
 * first use by the threads that set connections up, with the room each connection needs reserved
 * in them. Guarded by this object's monitor; closed by the loop once its thread stops.
 */
final class LoopDevices {
    private static final System.Logger LOG = System.getLogger(LoopDevices.class.getName());

    private final RdmaConfig config;
    private final BufferPool pool;
    private final RdmaMetrics metrics;
    private final LoopDevice[] devices = new LoopDevice[DeviceTable.MAX_DEVICES];

    LoopDevices(RdmaConfig config, BufferPool pool, RdmaMetrics metrics) {
        this.config = config;
        this.pool = pool;
        this.metrics = metrics;
    }

    /**
     * The completion queues for {@code device} (created on first use) with room reserved for one
     * more connection.
     *
     * @return the loop device, or null when its completion queues are full
     */
    synchronized LoopDevice reserve(DeviceTable.Device device, int recvCqEntries, int sendCqEntries) throws IOException {
        LoopDevice ld = devices[device.index];
        if (ld == null) {
            ld = LoopDevice.create(device, config.polling().completionQueueSize());
            devices[device.index] = ld;
        }
        if (config.sharedReceiveQueue().enabled() && ld.shared == null) {
            // the queue's completions all land in the receive CQ: reserve them once, for its maximum
            if (ld.recvCqReserved + config.sharedReceiveQueue().maxDepth() > ld.recvCq.capacity()) {
                return null;
            }
            ld.shared = new SharedReceives(device, pool, metrics, config.sharedReceiveQueue().depth(),
                    config.sharedReceiveQueue().maxDepth());
            ld.recvCqReserved += config.sharedReceiveQueue().maxDepth();
        }
        if (ld.recvCqReserved + recvCqEntries > ld.recvCq.capacity() || ld.sendCqReserved + sendCqEntries > ld.sendCq.capacity()) {
            return null;
        }
        ld.recvCqReserved += recvCqEntries;
        ld.sendCqReserved += sendCqEntries;
        return ld;
    }

    synchronized void release(LoopDevice ld, int recvCqEntries, int sendCqEntries) {
        ld.recvCqReserved -= recvCqEntries;
        ld.sendCqReserved -= sendCqEntries;
    }

    /** @return registered bytes of the shared receive queues (0 without them) */
    synchronized long sharedReceiveBytes() {
        long n = 0;
        for (LoopDevice ld : devices) {
            if (ld != null && ld.shared != null) {
                n += ld.shared.bytes();
            }
        }
        return n;
    }

    /** @return the loop device whose shared receive queue is {@code srq}, or null */
    synchronized LoopDevice ownerOf(SharedReceiveQueue srq) {
        for (LoopDevice ld : devices) {
            if (ld != null && ld.shared != null && ld.shared.srq == srq) {
                return ld;
            }
        }
        return null;
    }

    /** @return completion queue entries reserved (a load measure) */
    synchronized int load() {
        int n = 0;
        for (LoopDevice ld : devices) {
            if (ld != null) {
                n += ld.recvCqReserved + ld.sendCqReserved;
            }
        }
        return n;
    }

    /** Closes every shared receive queue, then the completion queues and channels; once no queue pair uses them. */
    synchronized void close() {
        for (int i = devices.length - 1; i >= 0; i--) {
            LoopDevice ld = devices[i];
            if (ld == null) {
                continue;
            }
            devices[i] = null;
            if (ld.shared != null) {
                ld.shared.close();
                ld.shared = null;
            }
            try {
                ld.recvCq.close();
                ld.sendCq.close();
                ld.channel.close();
            } catch (RuntimeException e) {
                LOG.log(System.Logger.Level.WARNING, "could not close the completion queues of " + ld.device, e);
            }
        }
    }
}
