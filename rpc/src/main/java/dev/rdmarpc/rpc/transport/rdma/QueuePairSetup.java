package dev.rdmarpc.rpc.transport.rdma;

import dev.rdmarpc.ibverbs.verbs.Access;
import dev.rdmarpc.ibverbs.verbs.ConnectionAttributes;
import dev.rdmarpc.ibverbs.verbs.Gid;
import dev.rdmarpc.ibverbs.verbs.Mtu;
import dev.rdmarpc.ibverbs.verbs.QpEndpoint;
import dev.rdmarpc.ibverbs.verbs.QueuePair;
import dev.rdmarpc.ibverbs.verbs.QueuePairInit;
import dev.rdmarpc.ibverbs.verbs.SendWorkRequests;
import java.io.IOException;

/**
 * The setup of an {@link RdmaConnection}'s queue pair, on the setup thread (its SETUP state): the
 * resources created (the queue pair in INIT), this side's hello filled, then the queue pair connected
 * to the peer's (RTR, RTS) and the send path started with what the two hellos agree on.
 */
final class QueuePairSetup {
    private static final System.Logger LOG = System.getLogger(RdmaConnection.class.getName());

    /** What {@link #create} made: the receive buffers, the queue pair, its send work requests, the rendezvous state or null. */
    record Resources(ReceiveBuffers buffers, QueuePair qp, SendWorkRequests wrs, Rendezvous rendezvous) {
    }

    private QueuePairSetup() {
    }

    /**
     * Creates a connection's receive buffers, its queue pair (moved to INIT) and send work requests,
     * and its rendezvous state when {@code rendezvousEnabled}. On a failure everything made so far is
     * closed, and the connection's table index and completion-queue entries given back.
     *
     * @throws IOException when the device refuses a resource
     */
    static Resources create(RdmaLoop loop, LoopDevice loopDevice, int tableIndex, int recvCqEntries,
                            int sendCqEntries, int sendWrs, boolean rendezvousEnabled) throws IOException {
        DeviceTable.Device device = loopDevice.device;
        RdmaConfig config = loop.config;
        ReceiveBuffers b = null;
        QueuePair q = null;
        SendWorkRequests s = null;
        Rendezvous r = null;
        try {
            b = loopDevice.shared == null
                    ? new PrivateReceiveBuffers(loop.pool, device.index, config.receiveQueue().depth(), config.receiveQueue().maxDepth())
                    : new SharedReceiveBuffers(loopDevice.shared, config.sharedReceiveQueue().credits());
            QueuePairInit init = new QueuePairInit().sendCompletionQueue(loopDevice.sendCq)
                    .receiveCompletionQueue(loopDevice.recvCq).maxSendWr(sendWrs).maxSendSge(2)
                    .maxInlineData(config.send().inlineThreshold());
            b.configure(init);
            q = device.pd.createQueuePair(init);
            s = new SendWorkRequests(sendWrs, 2);
            // with rendezvous the peer reads this side's frames, through windows bound (or regions
            // registered) per frame
            q.toInit(new ConnectionAttributes().port(device.port)
                    .accessFlags(rendezvousEnabled ? Access.REMOTE_READ.bit() : 0));
            if (rendezvousEnabled) {
                r = new Rendezvous(device.pd, device.bindsRepeatedByRetransmission);
            }
        } catch (RuntimeException e) {
            if (r != null) {
                r.close();
            }
            closeQuietly(q, s);
            if (b != null) {
                b.close();
            }
            loop.table.releaseIndex(tableIndex);
            loop.release(loopDevice, recvCqEntries, sendCqEntries);
            throw new IOException("cannot create the queue pair on " + device + ": " + e.getMessage(), e);
        }
        return new Resources(b, q, s, r);
    }

    /** Fills {@code c}'s side of the hello; posts the receives it announces. Before the loop knows {@code c}. */
    static void fillHello(RdmaConnection c, Hello h) throws IOException {
        c.buffers.postInitial();
        QpEndpoint me = c.qp.endpoint(c.device.port, c.gidIndex, c.psn);
        h.qpn = me.qpNum();
        h.psn = me.psn();
        byte[] g = me.gid().toByteArray();
        System.arraycopy(g, 0, h.gid, 0, 16);
        h.lid = me.lid();
        h.mtu = c.device.portAttributes.activeMtu().value();
        h.receiveSize = c.loop().pool.chunkSize();
        h.receiveCount = c.buffers.initialCredits();
        h.maxFrameLength = c.maxFrameLength;
        h.flags = c.rendezvous != null ? Hello.FLAG_RENDEZVOUS : 0;
    }

    /**
     * Moves {@code c}'s queue pair to RTR and RTS towards the peer of {@code peer}; starts its send path
     * with the credits and the rendezvous the two hellos agree on.
     *
     * @return {@code c}'s rendezvous state, or null when the two sides send no rendezvous frames (then
     *         it was closed here)
     */
    static Rendezvous connect(RdmaConnection c, Hello peer) throws IOException {
        Rendezvous rendezvous = c.rendezvous;
        Mtu mtu = c.device.portAttributes.activeMtu().min(Mtu.of(peer.mtu));
        int peerReceive = Math.min(peer.receiveSize, c.loop().pool.chunkSize());
        // each side keeps one credit for done reports: a peer that grants one only cannot take rendezvous
        boolean announced = rendezvous != null; // what this side's hello said (fillHello)
        boolean peerAnnounced = (peer.flags & Hello.FLAG_RENDEZVOUS) != 0;
        boolean both = announced && peerAnnounced && peer.receiveCount >= 2;
        if (rendezvous != null && !both) {
            rendezvous.close(); // the peer does not take rendezvous frames: this side sends none
            rendezvous = null;
        }
        // and so does the peer when it sends rendezvous frames to this side (its 'both'): credit-only
        // messages must then count that credit as spent
        boolean peerKeepsOne = announced && peerAnnounced && c.buffers.initialCredits() >= 2;
        c.sender.start(new SendQueue(c.loop().pool, c.config.send().window(), peerReceive),
                new Credits(peer.receiveCount, c.buffers.initialCredits(), c.buffers.maxCredits(), peerKeepsOne ? 1 : 0),
                rendezvous,
                c.config.send().rendezvousThreshold());
        // reads: this side's of the peer's rendezvous frames (initiator depth), the peer's of ours (responder)
        int reads = c.config.send().rendezvousThreshold() > 0 ? Rendezvous.READS : 0;
        try {
            ConnectionAttributes a = new ConnectionAttributes().port(c.device.port).sgidIndex(c.gidIndex)
                    .remote(new QpEndpoint(peer.qpn, peer.psn, Gid.of(peer.gid), peer.lid)).pathMtu(mtu)
                    .localPsn(c.psn).accessFlags(reads > 0 ? Access.REMOTE_READ.bit() : 0).maxDestReadAtomic(reads)
                    .maxReadAtomic(reads).timeout(c.config.timeouts().ackTimeout()).retryCount(7).rnrRetry(7);
            c.qp.toRtr(a);
            c.qp.toRts(a);
        } catch (RuntimeException e) {
            throw new IOException("cannot connect the queue pair to " + c.remote + ": " + e.getMessage(), e);
        }
        RdmaEvents.qpState(c.device.context.name(), c.qp.qpNum(), String.valueOf(c.remote), "RTS",
                "connected to QP " + peer.qpn + ", MTU " + mtu.bytes());
        return rendezvous;
    }

    private static void closeQuietly(AutoCloseable... resources) {
        for (AutoCloseable c : resources) {
            if (c != null) {
                try {
                    c.close();
                } catch (Exception e) {
                    LOG.log(System.Logger.Level.DEBUG, "cleanup failed", e);
                }
            }
        }
    }
}
