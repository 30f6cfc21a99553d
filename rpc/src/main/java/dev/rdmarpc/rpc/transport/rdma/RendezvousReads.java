package dev.rdmarpc.rpc.transport.rdma;

import dev.rdmarpc.rpc.buffer.PooledBuffer;
import dev.rdmarpc.rpc.protocol.FrameDescriptor;
import dev.rdmarpc.rpc.protocol.FrameHeader;
import dev.rdmarpc.rpc.transport.frame.FrameReassembler;
import java.io.IOException;
import java.lang.foreign.MemorySegment;

/**
 * The peer's rendezvous frame that one {@link RdmaReceiver} reads, on the I/O thread: a buffer of the
 * frame's length is taken (on a server, after its address's share allows it, as for a large frame),
 * its attachment lands in the handler's registered memory when the handler offers some, the frame is
 * read with RDMA READ ({@link RdmaSender#postReads}), and after the last read it goes to the handler
 * and the sender is told it is done ({@link RdmaSender#rendezvousRead}). One frame at a time.
 */
final class RendezvousReads {
    private final RdmaConnection conn;
    private final RdmaLoop loop;
    private final RdmaMetrics metrics;
    private final RdmaSender sender;
    private final int maxFrameLength;
    private final boolean serverSide;
    /** A rendezvous frame is being read: the receiver's later messages wait. */
    private boolean reading;
    private PooledBuffer readTarget;
    private int readFrameLength;
    private int readsLeft;
    /** What the frame being read claimed of its address's share, 0 for none. */
    private long readShare;
    /** Where the attachment of the frame being read lands (the handler's memory), or null. */
    private MemorySegment readSink;
    /** The registration {@link #readSink} lies in, whose use the read holds, or null. */
    private DeviceTable.UserRegion readSinkRegion;
    /** Tests only ({@link RdmaTransport#descriptorHookForTests}); null in use. */
    private final RdmaReceiver.DescriptorHook descriptorHook;

    RendezvousReads(RdmaConnection conn, RdmaLoop loop, RdmaSender sender, int maxFrameLength, boolean serverSide) {
        this.conn = conn;
        this.loop = loop;
        this.metrics = loop.metrics;
        this.sender = sender;
        this.maxFrameLength = maxFrameLength;
        this.serverSide = serverSide;
        this.descriptorHook = loop.transport.descriptorHookForTests;
    }

    /** @return true while a frame is being read */
    boolean active() {
        return reading;
    }

    /**
     * Starts reading the rendezvous frame the descriptor {@code seg} announces (this side announced
     * rendezvous, and no frame is being reassembled); a bad descriptor closes the connection.
     *
     * @return false when the frame must wait for its address's share (nothing done)
     */
    boolean start(MemorySegment seg, int length) {
        String bad = Rendezvous.check(seg, 0, length, maxFrameLength);
        if (bad != null) {
            conn.protocolError(bad);
            return true;
        }
        if (descriptorHook != null) {
            descriptorHook.beforeRead(seg, length);
        }
        int frameLength = Rendezvous.frameLength(seg, 0);
        long share = serverSide ? FrameReassembler.shareOf(frameLength) : 0;
        if (share > 0 && !conn.tcp.takeFrameShare(share)) {
            metrics.frameShareWaits.increment();
            return false;
        }
        // the handler may have the attachment land in memory of its own (a caller's response buffer)
        int attachment = FrameHeader.attachmentLength(seg, Rendezvous.HEADER_OFFSET);
        MemorySegment sink = null;
        DeviceTable.UserRegion sinkRegion = null;
        if (attachment > 0) {
            MemorySegment answer = conn.handler().attachmentSink(conn, seg, Rendezvous.HEADER_OFFSET);
            sinkRegion = answer == null ? null : sender.useSinkRegion(answer, attachment);
            if (sinkRegion != null) {
                sink = answer.asSlice(0, attachment);
            } else if (answer != null) {
                metrics.attachmentSinksRefused.increment();
            }
        }
        int bufferLength = sink != null ? frameLength - attachment : frameLength;
        PooledBuffer target = bufferLength <= loop.pool.chunkSize() ? loop.pool.acquire() : loop.pool.acquire(bufferLength);
        if (target == null) {
            if (share > 0) {
                conn.tcp.releaseFrameShare(share);
            }
            if (sinkRegion != null) {
                sinkRegion.unuse();
            }
            conn.poolPressure("no buffer to read a rendezvous frame of " + frameLength + " bytes");
            conn.closeNow(new IOException("buffer pool exhausted: no buffer for a frame of " + frameLength + " bytes"));
            return true;
        }
        readTarget = target;
        readShare = share;
        readFrameLength = frameLength;
        readSink = sink;
        readSinkRegion = sinkRegion;
        readsLeft = Rendezvous.parts(seg, 0);
        reading = true;
        sender.postReads(target, seg, 0, bufferLength, sink, sinkRegion);
        // when posting failed the connection is closing: releaseRead gives all back after the queue pair
        return true;
    }

    /**
     * A read of the frame completed successfully: after the last, the frame goes to the handler.
     *
     * @return true when the frame went to the handler (messages that waited for it may go on)
     */
    boolean completed() {
        if (!reading || --readsLeft > 0) {
            return false;
        }
        PooledBuffer b = readTarget;
        int frameLength = readFrameLength;
        MemorySegment landed = readSink;
        readTarget = null;
        reading = false;
        releaseReadShare();
        releaseSink(); // the NIC is done with it
        metrics.rendezvousRead.increment();
        metrics.rendezvousBytesRead.add(frameLength);
        try {
            long len = FrameDescriptor.check(b.segment(), 0, frameLength, maxFrameLength);
            if (len != frameLength) {
                conn.protocolError(len < 0 ? "a rendezvous frame: " + FrameDescriptor.describe(len)
                        : "a rendezvous frame of " + frameLength + " bytes whose header says " + len);
                return false;
            }
            if (landed == null) {
                conn.handler().onFrame(conn, b.segment(), 0, frameLength);
            } else if (FrameHeader.attachmentLength(b.segment(), 0) != landed.byteSize()) {
                conn.protocolError("a rendezvous frame whose header says an attachment of "
                        + FrameHeader.attachmentLength(b.segment(), 0) + " bytes, its descriptor " + landed.byteSize());
                return false;
            } else {
                metrics.rendezvousBytesLanded.add(landed.byteSize());
                conn.handler().onFrame(conn, b.segment(), 0, frameLength, landed);
            }
        } finally {
            b.release();
        }
        sender.rendezvousRead();
        loop.scheduleFlush(conn);
        return true;
    }

    private void releaseSink() {
        DeviceTable.UserRegion r = readSinkRegion;
        readSink = null;
        if (r != null) {
            readSinkRegion = null;
            r.unuse();
        }
    }

    private void releaseReadShare() {
        if (readShare > 0) {
            conn.tcp.releaseFrameShare(readShare);
            readShare = 0;
        }
    }

    /** @return true when the frame being read lands its attachment in {@code u} (I/O thread) */
    boolean holds(DeviceTable.UserRegion u) {
        return readSinkRegion == u;
    }

    /** After the queue pair is destroyed: the buffer of a read that never finished goes back. */
    void release() {
        reading = false;
        releaseReadShare();
        releaseSink();
        PooledBuffer b = readTarget;
        if (b != null) {
            readTarget = null;
            b.release();
        }
    }

    /** @return a part of the receive path's diagnostics line: the frame being read, if any */
    String diagnostics() {
        return reading ? ", reading a rendezvous frame of " + readFrameLength + " bytes, " + readsLeft + " reads left" : "";
    }
}
