package dev.rdmarpc.rpc.transport.rdma;

import dev.rdmarpc.ibverbs.verbs.CompletionChannel;
import dev.rdmarpc.ibverbs.verbs.CompletionQueue;

/**
 * The completion queues of one device on one {@link RdmaLoop}, with their completion channel, and how
 * many of their entries the loop's connections (and its shared receive queue) reserved. Created by a
 * setup thread under the loop's setup lock; the reservations change under that lock, the armed flags
 * on the loop thread only.
 */
final class LoopDevice {
    final DeviceTable.Device device;
    final CompletionChannel channel;
    final CompletionQueue sendCq;
    final CompletionQueue recvCq;
    /** The shared receive queue, when {@link SharedReceiveQueueSettings#enabled(boolean)} is on (created with the first connection). */
    SharedReceives shared;
    /** Completion queue entries reserved by this loop's connections (and its shared receive queue). */
    int recvCqReserved;
    int sendCqReserved;
    boolean recvArmed;
    boolean sendArmed;

    LoopDevice(DeviceTable.Device device, CompletionChannel channel, CompletionQueue sendCq, CompletionQueue recvCq) {
        this.device = device;
        this.channel = channel;
        this.sendCq = sendCq;
        this.recvCq = recvCq;
    }

    /** Creates the channel and the two queues of {@code entries} each on {@code device}; closes what it made when one fails. */
    static LoopDevice create(DeviceTable.Device device, int entries) {
        CompletionChannel ch = device.context.createCompletionChannel();
        CompletionQueue send = null;
        try {
            send = device.context.createCompletionQueue(entries, ch, 0);
            CompletionQueue recv = device.context.createCompletionQueue(entries, ch, 0);
            return new LoopDevice(device, ch, send, recv);
        } catch (RuntimeException e) {
            if (send != null) {
                send.close();
            }
            ch.close();
            throw e;
        }
    }
}
