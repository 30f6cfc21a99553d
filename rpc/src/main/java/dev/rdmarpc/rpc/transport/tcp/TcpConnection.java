package dev.rdmarpc.rpc.transport.tcp;

import dev.rdmarpc.rpc.buffer.BufferPool;
import dev.rdmarpc.rpc.buffer.PooledBuffer;
import dev.rdmarpc.rpc.protocol.FrameDescriptor;
import dev.rdmarpc.rpc.transport.Connection;
import dev.rdmarpc.rpc.transport.FrameHandler;
import dev.rdmarpc.rpc.transport.ProtocolException;
import dev.rdmarpc.rpc.transport.frame.FrameReassembler;
import dev.rdmarpc.rpc.transport.loop.IoLoop;
import java.io.EOFException;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;

/**
 * A TCP connection owned by one {@link TcpLoop}.
 *
 * <p>Receive side (loop thread only): one pooled chunk; each readiness event reads as much as fits
 * and hands every complete frame to the handler in place. A frame longer than a chunk is completed
 * in the {@link FrameReassembler}, read from the socket straight into its buffer. Send side: a
 * {@link TcpSendRing} of pooled buffers that producers on any thread append whole frames to
 * (claim/commit), and that the loop writes with one gathering write per iteration (frames sent in
 * place from the caller's memory or from the receive buffer being dispatched included; frames that
 * fit a receive chunk are copied: holding chunks and reading on in fresh ones measured slower at
 * 16 to 64 KiB).
 */
final class TcpConnection implements Connection, IoLoop.Flushable {
    private static final System.Logger LOG = System.getLogger(TcpConnection.class.getName());
    private static final int MAX_READS_PER_EVENT = 16;

    private final TcpLoop loop;
    private final SocketChannel channel;
    private final BufferPool pool;
    private final int maxFrameLength;
    private final long writeHighWaterMark;
    private final boolean serverSide;
    private final InetSocketAddress remote;
    private final InetSocketAddress local;
    private final TcpSendRing ring;
    private FrameHandler handler;
    private SelectionKey key;
    private volatile boolean open = true;
    private boolean closing;

    // ---- receive side, loop thread only
    private PooledBuffer readBuf;
    private long readPos;
    private long parsePos;
    private final FrameReassembler reassembler;
    // the large receive buffer whose frame is being handed to the handler: claimFromReceived may hold it
    private PooledBuffer dispatching;
    private boolean readEnabled = true;
    private boolean readPausedForWrites;

    // ---- loop thread only
    private boolean writeInterest;

    /**
     * @param serverSide true for an accepted connection: it stops reading requests while more than
     *                   {@code writeHighWaterMark} bytes of its responses wait to be written. A client
     *                   connection never stops reading responses (its own sends are bounded by the
     *                   caller, see {@link #claim(int, long)}), so two sides never wait for each other.
     */
    TcpConnection(TcpLoop loop, SocketChannel channel, int maxFrameLength, long writeHighWaterMark, boolean serverSide)
            throws IOException {
        this.loop = loop;
        this.serverSide = serverSide;
        this.channel = channel;
        this.pool = loop.transport().bufferPool();
        this.maxFrameLength = maxFrameLength;
        this.writeHighWaterMark = writeHighWaterMark;
        this.remote = (InetSocketAddress) channel.getRemoteAddress();
        this.local = (InetSocketAddress) channel.getLocalAddress();
        this.ring = new TcpSendRing(this, loop, pool);
        this.reassembler = new FrameReassembler(pool);
    }

    /** Registers with the loop's selector; on the loop thread. */
    void register(FrameHandler frameHandler) throws IOException {
        this.handler = frameHandler;
        this.key = channel.register(loop.selector(), SelectionKey.OP_READ, this);
        loop.added(this);
    }

    /** @return the socket (tests read its options) */
    SocketChannel channel() {
        return channel;
    }

    void setHandler(FrameHandler frameHandler) {
        this.handler = frameHandler;
    }

    // =========================================================== receive

    void onReady(SelectionKey k) {
        if (!k.isValid()) {
            return;
        }
        int ops = k.readyOps();
        if ((ops & SelectionKey.OP_WRITE) != 0) {
            flush();
        }
        if ((ops & SelectionKey.OP_READ) != 0 && open) {
            read();
        }
    }

    private void read() {
        try {
            // writesBackedUp() is the live form of readPausedForWrites (set by flush, the only place pending falls)
            for (int i = 0; i < MAX_READS_PER_EVENT && open && readEnabled && !writesBackedUp(); i++) {
                if (reassembler.active()) {
                    if (!readLarge()) {
                        return;
                    }
                    continue;
                }
                if (readBuf == null) {
                    readBuf = pool.acquire();
                    if (readBuf == null) {
                        closeNow(new IOException("buffer pool exhausted: no receive buffer"));
                        return;
                    }
                    readPos = 0;
                    parsePos = 0;
                }
                ByteBuffer bb = readBuf.byteBuffer();
                int cap = readBuf.capacity();
                long space = cap - readPos;
                bb.limit(cap).position((int) readPos);
                int n = channel.read(bb);
                if (n < 0) {
                    closeNow(new EOFException("peer closed the connection"));
                    return;
                }
                if (n == 0) {
                    return;
                }
                readPos += n;
                parse();
                if (n < space) {
                    return; // drained the socket: the read did not fill the space offered
                }
            }
        } catch (IOException e) {
            closeNow(e);
        } catch (RuntimeException e) {
            // A handler bug must not re-dispatch the same bytes forever: drop this connection only.
            LOG.log(System.Logger.Level.ERROR, "frame handler failed; closing " + this, e);
            closeNow(e);
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
                protocolError(FrameDescriptor.describe(len));
                return;
            }
            if (len > avail) {
                if (len > cap) {
                    startLarge(seg, avail, len);
                    return;
                }
                need = len;
                break;
            }
            handler.onFrame(this, seg, parsePos, (int) len);
            parsePos += len;
            if (!open) {
                return;
            }
        }
        if (parsePos == readPos) {
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
        if (!reassembler.start(seg, parsePos, (int) avail, (int) len)) {
            closeNow(new IOException("buffer pool exhausted: no buffer for a frame of " + len + " bytes"));
            return;
        }
        parsePos = 0;
        readPos = 0;
    }

    /** @return true when the large frame completed (and reading may go on) */
    private boolean readLarge() throws IOException {
        int n = channel.read(reassembler.readTarget());
        if (n < 0) {
            closeNow(new EOFException("peer closed the connection inside a frame"));
            return false;
        }
        if (!reassembler.advance(n)) {
            return false;
        }
        int frameLength = reassembler.frameLength();
        PooledBuffer b = reassembler.take();
        dispatching = b;
        try {
            handler.onFrame(this, b.segment(), 0, frameLength);
        } finally {
            dispatching = null;
            b.release(); // responses sending from it hold it until they are written
        }
        return open;
    }

    /**
     * True on a server connection whose unwritten responses exceed the write high-water mark, or
     * fill half its send ring (many mid-size responses sent in place take two entries each): it
     * reads no more requests until they drain (checked before every read, so at most the responses
     * to one read's frames go over).
     */
    private boolean writesBackedUp() {
        return serverSide && (ring.unsentBytes() > writeHighWaterMark || ring.overHalfFull());
    }

    private void protocolError(String reason) {
        String msg = "protocol error from " + remote + ": " + reason;
        LOG.log(System.Logger.Level.WARNING, "closing connection: " + msg);
        closeNow(new ProtocolException(msg));
    }

    // =========================================================== send: the ring

    @Override
    public long claim(int frameLength) {
        return ring.claim(frameLength, Long.MAX_VALUE, 0);
    }

    @Override
    public long claim(int frameLength, long unsentLimit) {
        return ring.claim(frameLength, unsentLimit, 0);
    }

    @Override
    public long claimInPlace(int frameLength, MemorySegment tail, long unsentLimit, long token) {
        return ring.claimInPlace(frameLength, tail, unsentLimit, token);
    }

    @Override
    public long claimFromReceived(int frameLength, MemorySegment src, long offset, int length) {
        if (!loop.inLoop()) {
            return UNSUPPORTED;
        }
        return ring.claimFromReceived(frameLength, src, offset, length, dispatching);
    }

    @Override
    public MemorySegment claimBuffer() {
        return ring.claimBuffer();
    }

    @Override
    public void commit() {
        ring.commit();
    }

    @Override
    public void abort() {
        ring.abort();
    }

    @Override
    public long commitHeld(int readyLength) {
        return ring.commitHeld(readyLength);
    }

    @Override
    public void releaseHeld(long token, int readyLength) {
        ring.releaseHeld(token, readyLength);
    }

    @Override
    public void abandonHeld(long token, Throwable cause) {
        ring.abandonHeld(token);
        close(cause);
    }

    /** Writes everything committed; on the loop thread. */
    @Override
    public void flush() {
        long written;
        try {
            written = ring.write(channel);
        } catch (IOException e) {
            closeNow(e);
            return;
        }
        if (written < 0) {
            return;
        }
        updateWriteInterest(ring.socketFull());
        if (written > 0) {
            handler.onSendProgress(this);
        }
    }

    @Override
    public void detachInPlace(long token) {
        long rest = ring.detachInPlace(token);
        if (rest >= 0) {
            closeNow(new IOException("buffer pool exhausted: no buffer for the unsent " + rest
                    + " bytes of an in-place payload whose call ended"));
        }
    }

    private void updateWriteInterest(boolean socketFull) {
        // The socket took less than offered: wait for OP_WRITE. Frames committed meanwhile were
        // scheduled for another flush by their committer.
        if (socketFull != writeInterest && key != null && key.isValid()) {
            writeInterest = socketFull;
            updateOps();
        }
        boolean over = writesBackedUp();
        if (over != readPausedForWrites) {
            readPausedForWrites = over;
            updateOps();
            if (!over && open && readEnabled) {
                loop.executeLater(this::resumeRead);
            }
        }
    }

    private void resumeRead() {
        if (open && key != null && key.isValid()) {
            read();
        }
    }

    private void updateOps() {
        if (key == null || !key.isValid()) {
            return;
        }
        int ops = 0;
        if (readEnabled && !readPausedForWrites) {
            ops |= SelectionKey.OP_READ;
        }
        if (writeInterest) {
            ops |= SelectionKey.OP_WRITE;
        }
        key.interestOps(ops);
    }

    // =========================================================== lifecycle and the rest

    void tick(long now) {
        if (open) {
            handler.onTick(this, now);
        }
    }

    @Override
    public void setReadEnabled(boolean enabled) {
        execute(() -> {
            if (readEnabled != enabled) {
                readEnabled = enabled;
                updateOps();
                if (enabled && open) {
                    loop.executeLater(this::resumeRead);
                }
            }
        });
    }

    @Override
    public boolean isOpen() {
        return open;
    }

    @Override
    public boolean inEventLoop() {
        return loop.inLoop();
    }

    @Override
    public long tickIntervalNanos() {
        return loop.tickIntervalNanos();
    }

    @Override
    public InetSocketAddress remoteAddress() {
        return remote;
    }

    @Override
    public InetSocketAddress localAddress() {
        return local;
    }

    @Override
    public long pendingBytes() {
        return ring.unsentBytes();
    }

    @Override
    public void close(Throwable cause) {
        if (loop.inLoop()) {
            closeNow(cause);
        } else {
            loop.execute(() -> closeNow(cause));
        }
    }

    @Override
    public void execute(Runnable task) {
        loop.execute(task);
    }

    /** Closes on the loop thread: releases every buffer, tells the handler once. */
    void closeNow(Throwable cause) {
        if (!open || closing) {
            return;
        }
        closing = true;
        if (cause == null) {
            flush(); // orderly: send what is committed, as far as the socket takes it now
        }
        open = false;
        ring.close();
        if (key != null) {
            key.cancel();
        }
        try {
            channel.close();
        } catch (IOException e) {
            LOG.log(System.Logger.Level.DEBUG, "closing channel failed", e);
        }
        if (readBuf != null) {
            readBuf.release();
            readBuf = null;
        }
        reassembler.release();
        loop.removed(this);
        if (handler != null) {
            try {
                handler.onClose(this, cause instanceof ClosedChannelException ? new EOFException("channel closed") : cause);
            } catch (RuntimeException e) {
                LOG.log(System.Logger.Level.WARNING, "connection close handler failed", e);
            }
        }
    }

    @Override
    public String toString() {
        return "TcpConnection[" + local + " -> " + remote + (open ? "" : ", closed") + "]";
    }
}
