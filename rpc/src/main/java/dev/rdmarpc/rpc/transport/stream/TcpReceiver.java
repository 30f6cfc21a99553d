package dev.rdmarpc.rpc.transport.stream;

import dev.rdmarpc.rpc.buffer.BufferPool;
import dev.rdmarpc.rpc.buffer.PooledBuffer;
import dev.rdmarpc.rpc.protocol.FrameDescriptor;
import dev.rdmarpc.rpc.transport.FrameHold;
import dev.rdmarpc.rpc.transport.PeerRefusedException;
import dev.rdmarpc.rpc.transport.ProtocolException;
import dev.rdmarpc.rpc.transport.ResourceExhaustedException;
import dev.rdmarpc.rpc.transport.frame.FrameHolds;
import dev.rdmarpc.rpc.transport.frame.FrameReassembler;
import java.io.EOFException;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;

/**
 * The receive side of a {@link TcpConnection}; loop thread only.
 *
 * <p>One pooled chunk: each readiness event reads as much as fits and hands every complete frame to
 * the handler in place. A frame longer than a chunk is completed in the {@link FrameReassembler},
 * read from the socket straight into its buffer, which is taken only once a chunk's worth of the
 * frame has arrived (so a header that declares megabytes and stops holds no more than one chunk) and,
 * on an accepted connection, then grows with the bytes that arrive. On an accepted connection the frame's whole declared length
 * is first claimed from its address's share ({@link ConnectionCounts}): over it, reading stops,
 * holding the chunk, and the tick tries again.
 *
 * <p>A handler may keep the frame it is handed ({@link #holdFrame}, at most {@link FrameHolds#MAX_HELD}
 * per connection): its buffer is retained until the hold's release. A chunk with a held frame is never
 * written over: where the chunk would be reused (compacted, or read again from its start) reading goes on
 * in a fresh chunk, with the few bytes of the frame begun copied over as compaction would have moved them,
 * and the held chunk goes back to the pool with its last hold.
 */
final class TcpReceiver {
    private static final System.Logger LOG = System.getLogger(TcpReceiver.class.getName());
    private static final int MAX_READS_PER_EVENT = 16;

    private final TcpConnection connection;
    private final Wire wire;
    private final BufferPool pool;
    private final int maxFrameLength;
    private final ReceiveTimers timers;
    private final FrameReassembler reassembler;
    private final FrameHolds holds;
    private PooledBuffer readBuf;
    /** A frame of {@link #readBuf} is held: the chunk must not be written over. */
    private boolean readBufHeld;
    /** The buffer of the frame being handed to the handler (it may hold it), or null. */
    private PooledBuffer handing;
    private long readPos;
    private long parsePos;
    /** The large receive buffer whose frame is being handed to the handler: claimFromReceived may hold it. */
    private PooledBuffer dispatching;
    /** A frame's first chunk is here and its large buffer waits for its address's share: not reading. */
    private boolean waitingForShare;
    /** What the large frame being received reserved of its address's share, 0 for none. */
    private long frameShare;
    /** An accepted connection's place in its transport's connection counts; else null. */
    private ConnectionCounts.Admission admission;

    /** @param serverSide an accepted connection: its large frames' buffers grow with their bytes ({@link FrameReassembler}) */
    TcpReceiver(TcpConnection connection, Wire wire, BufferPool pool, int maxFrameLength, ReceiveTimers timers,
                boolean serverSide) {
        this.connection = connection;
        this.wire = wire;
        this.pool = pool;
        this.maxFrameLength = maxFrameLength;
        this.timers = timers;
        this.reassembler = new FrameReassembler(pool, serverSide);
        this.holds = new FrameHolds(connection::execute, (b, slot) -> b.release());
    }

    /**
     * Keeps the frame being handed to the handler (loop thread, inside its {@code onFrame}).
     *
     * @return the hold, or null outside a handler or with {@link FrameHolds#MAX_HELD} frames held
     */
    FrameHold holdFrame() {
        PooledBuffer b = handing;
        if (b == null) {
            return null;
        }
        FrameHold h = holds.hold(b, 0);
        if (h == null) {
            return null;
        }
        b.retain();
        if (b == readBuf) {
            readBufHeld = true;
        }
        return h;
    }

    /** @return frames held now (any thread; tests) */
    int heldFrames() {
        return holds.held();
    }

    void admitted(ConnectionCounts.Admission a) {
        this.admission = a;
    }

    /** Reads and dispatches until the socket is drained, a bounded number of reads, or reading must stop. */
    void read() {
        try {
            for (int i = 0; i < MAX_READS_PER_EVENT && !waitingForShare && connection.mayRead(); i++) {
                if (reassembler.active()) {
                    if (!readLarge()) {
                        return;
                    }
                    continue;
                }
                if (readBuf == null) {
                    readBuf = pool.acquire();
                    if (readBuf == null) {
                        connection.refuse(new ResourceExhaustedException(
                                "server buffer pool exhausted: no receive buffer for this connection"));
                        return;
                    }
                    readPos = 0;
                    parsePos = 0;
                }
                ByteBuffer bb = readBuf.byteBuffer();
                int cap = readBuf.capacity();
                long space = cap - readPos;
                bb.limit(cap).position((int) readPos);
                int n = wire.read(bb);
                if (n < 0) {
                    connection.closeNow(new EOFException("peer closed the connection"));
                    return;
                }
                if (n == 0) {
                    return;
                }
                timers.received();
                readPos += n;
                parse();
                if (n < space) {
                    return; // drained the socket: the read did not fill the space offered
                }
            }
        } catch (ProtocolException | PeerRefusedException e) {
            // from the wire: a client without TLS at a TLS server, or one the server's check refused
            connection.refuse(e);
        } catch (IOException e) {
            connection.closeNow(e);
        } catch (RuntimeException e) {
            // A handler bug must not re-dispatch the same bytes forever: drop this connection only.
            LOG.log(System.Logger.Level.ERROR, "frame handler failed; closing " + connection, e);
            connection.closeNow(e);
        }
    }

    /** Hands every complete frame in the read buffer to the handler, then compacts. */
    private void parse() {
        MemorySegment seg = readBuf.segment();
        int cap = readBuf.capacity();
        long need = FrameDescriptor.HEADER_LENGTH;
        while (true) {
            long avail = readPos - parsePos;
            long len = FrameDescriptor.check(seg, parsePos, avail, maxFrameLength);
            if (len == FrameDescriptor.INCOMPLETE_HEADER) {
                need = FrameDescriptor.HEADER_LENGTH;
                break;
            }
            if (len < 0) {
                protocolError(len);
                return;
            }
            if (len > avail) {
                if (len > cap && avail == cap) {
                    // a chunk's worth of it arrived: only now take a buffer for the whole frame, so a
                    // header that declares megabytes and stops holds no more than this chunk
                    startLarge(seg, avail, len);
                    return;
                }
                need = Math.min(len, cap);
                break;
            }
            timers.frameDone();
            if (FrameDescriptor.isLiveness(seg.get(ValueLayout.JAVA_BYTE, parsePos + FrameDescriptor.TYPE_OFFSET))) {
                connection.liveness(seg, parsePos); // the transport's own: no handler sees it
            } else {
                handing = readBuf;
                try {
                    connection.handler().onFrame(connection, seg, parsePos, (int) len);
                } finally {
                    handing = null;
                }
            }
            parsePos += len;
            if (!connection.receiving()) {
                return;
            }
        }
        if (readBufHeld && (parsePos == readPos || cap - parsePos < need)) {
            leaveHeldChunk();
        } else if (parsePos == readPos) {
            parsePos = 0;
            readPos = 0;
        } else if (cap - parsePos < need) {
            long rem = readPos - parsePos;
            MemorySegment.copy(seg, parsePos, seg, 0, rem);
            parsePos = 0;
            readPos = rem;
        }
    }

    private void startLarge(MemorySegment seg, long avail, long len) {
        long share = FrameReassembler.shareOf((int) len);
        if (admission != null && !admission.takeFrameBytes(share)) {
            // over its address's share: stop reading, holding this chunk, and try again each tick
            if (!waitingForShare) {
                waitingForShare = true;
                connection.updateOps();
            }
            return;
        }
        if (waitingForShare) {
            waitingForShare = false;
            connection.updateOps();
            connection.resumeReadLater();
        }
        if (!reassembler.start(seg, parsePos, (int) avail, (int) len)) {
            if (admission != null) {
                admission.releaseFrameBytes(share);
            }
            connection.refuse(new ResourceExhaustedException(
                    "server buffer pool exhausted: no buffer for a frame of " + len + " bytes"));
            return;
        }
        frameShare = admission != null ? share : 0;
        parsePos = 0;
        readPos = 0;
        if (readBufHeld) {
            leaveHeldChunk(); // the chunk's frames are held: the next chunk read into is another
        }
    }

    /**
     * A frame of the read chunk is held and the chunk would be reused now: it is left to its holds (the last
     * release gives it back), and what was read past the frames handled goes on in a fresh chunk.
     */
    private void leaveHeldChunk() {
        PooledBuffer old = readBuf;
        long rem = readPos - parsePos;
        readBufHeld = false;
        readBuf = null;
        if (rem > 0) {
            PooledBuffer fresh = pool.acquire();
            if (fresh == null) {
                old.release();
                connection.refuse(new ResourceExhaustedException(
                        "buffer pool exhausted: no receive buffer to go on with while frames are held"));
                return;
            }
            MemorySegment.copy(old.segment(), parsePos, fresh.segment(), 0, rem);
            readBuf = fresh;
        }
        parsePos = 0;
        readPos = rem;
        old.release();
    }

    /** The large frame arrived whole or was dropped: its address's share is free again. */
    private void releaseShare() {
        if (frameShare > 0) {
            admission.releaseFrameBytes(frameShare);
            frameShare = 0;
        }
    }

    /** @return true when the large frame completed (and reading may go on) */
    private boolean readLarge() throws IOException {
        if (!reassembler.ensureRoom(1)) {
            connection.refuse(new ResourceExhaustedException("server buffer pool exhausted: no buffer to go on with a frame of "
                    + reassembler.frameLength() + " bytes past its first " + reassembler.room()));
            return false;
        }
        int n = wire.read(reassembler.readTarget());
        if (n < 0) {
            connection.closeNow(new EOFException("peer closed the connection inside a frame"));
            return false;
        }
        if (n > 0) {
            timers.received();
        }
        if (!reassembler.advance(n)) {
            return false;
        }
        timers.frameDone();
        releaseShare();
        int frameLength = reassembler.frameLength();
        PooledBuffer b = reassembler.take();
        dispatching = b;
        handing = b;
        try {
            connection.handler().onFrame(connection, b.segment(), 0, frameLength);
        } finally {
            dispatching = null;
            handing = null;
            b.release(); // responses sending from it hold it until they are written
        }
        return connection.receiving();
    }

    private void protocolError(long code) {
        String msg = "protocol error from " + connection.remoteAddress() + ": " + FrameDescriptor.describe(code);
        if (code == FrameDescriptor.BAD_MAGIC) {
            if (tlsHello(readBuf.segment(), parsePos, readPos - parsePos)) {
                // a TLS client at a server without TLS: told in plain (its TLS client reads that as such)
                connection.refuse(new ProtocolException("a TLS client connected to this server, which has no TLS:"
                        + " turn TLS off for the client, or on for the server (TcpConfig.tls)"));
                return;
            }
            // not this protocol at all (HTTP, a port scanner): nothing it could read is sent
            LOG.log(System.Logger.Level.WARNING, "closing connection: " + msg);
            connection.closeNow(new ProtocolException(msg));
            return;
        }
        connection.refuse(new ProtocolException(msg));
    }

    /** @return true when the bytes at {@code at} begin a TLS handshake record (content type 22, version 3.x) */
    private static boolean tlsHello(MemorySegment seg, long at, long available) {
        return available >= 2 && seg.get(ValueLayout.JAVA_BYTE, at) == 0x16 && seg.get(ValueLayout.JAVA_BYTE, at + 1) == 0x03;
    }

    /** The large buffer whose frame the handler is being given, or null. */
    PooledBuffer dispatching() {
        return dispatching;
    }

    boolean waitingForShare() {
        return waitingForShare;
    }

    /** Tries again to reserve the waiting frame's share (on the tick): the frame's buffer may fit now. */
    void retryShare() {
        if (waitingForShare) {
            parse();
        }
    }

    /** @return true while part of a frame has arrived */
    boolean hasPartialFrame() {
        return reassembler.active() || (readBuf != null && readPos > parsePos);
    }

    /** @return the bytes of the frame being received that have arrived */
    long partialBytes() {
        return reassembler.active() ? reassembler.frameLength() - reassembler.missing() : readBuf == null ? 0 : readPos - parsePos;
    }

    /** Gives the receive chunk back to the pool if it holds nothing. @return true if no chunk is held now */
    boolean releaseEmptyChunk() {
        if (readBuf == null) {
            return true;
        }
        if (readPos != 0) {
            return false;
        }
        readBuf.release();
        readBuf = null;
        readBufHeld = false;
        return true;
    }

    /** Gives back every buffer and share held; reading stops for good. */
    void release() {
        if (readBuf != null) {
            readBuf.release(); // a held frame's chunk stays out until its last hold goes
            readBuf = null;
            readBufHeld = false;
        }
        reassembler.release();
        releaseShare();
        waitingForShare = false;
    }
}
