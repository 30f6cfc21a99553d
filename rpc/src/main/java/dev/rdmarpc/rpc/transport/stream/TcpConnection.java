package dev.rdmarpc.rpc.transport.stream;

import dev.rdmarpc.rpc.buffer.BufferPool;
import dev.rdmarpc.rpc.buffer.PooledBuffer;
import dev.rdmarpc.rpc.transport.FrameHandler;
import dev.rdmarpc.rpc.transport.Refusals;
import dev.rdmarpc.rpc.transport.loop.IoLoop;
import java.io.EOFException;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetSocketAddress;
import java.nio.channels.ClosedChannelException;
import java.util.concurrent.CompletableFuture;
import javax.net.ssl.SSLSession;

/**
 * A TCP connection owned by one I/O thread ({@link SocketGroup}), over a {@link StreamSocket}: a NIO
 * channel on the TCP transport, a polled descriptor for the RDMA transport's hello connections (which
 * serve plain TCP clients too).
 *
 * <p>Receive side (loop thread only): a {@link TcpReceiver}, reading into one pooled chunk and
 * handing every complete frame to the handler in place. Send side: a
 * {@link TcpSendRing} of pooled buffers that producers on any thread append whole frames to
 * (claim/commit), and that the loop writes with one gathering write per iteration (frames sent in
 * place from the caller's memory or from the receive buffer being dispatched included; frames that
 * fit a receive chunk are copied: holding chunks and reading on in fresh ones measured slower at
 * 16 to 64 KiB).
 *
 * <p>Hostile and careless peers: a frame must arrive whole within the frame-read timeout once it has
 * started, an accepted connection is closed after the idle timeout ({@link ReceiveTimers}, checked on
 * the tick); a peer whose frame is refused (bad header, no buffer for it, a timeout) is told through
 * {@link FrameHandler#onRefused}, and a server answers with {@link #closeAfter} ({@link LastWord}).
 */
public final class TcpConnection extends RingConnection implements IoLoop.Flushable {
    private static final System.Logger LOG = System.getLogger(TcpConnection.class.getName());

    private final SocketGroup loop;
    private final StreamSocket channel;
    /** The socket itself, or TLS over it ({@link #tls}, else null). */
    private final Wire wire;
    private final TlsWire tls;
    private final long writeHighWaterMark;
    private final boolean serverSide;
    private final InetSocketAddress remote;
    private final InetSocketAddress local;
    private final TcpSendRing ring;
    private FrameHandler handler;
    private volatile boolean open = true;
    private boolean closing;

    // ---- receive side, loop thread only
    private final TcpReceiver receiver;
    private boolean readEnabled = true;
    private boolean readPausedForWrites;
    private final ReceiveTimers timers;
    /** Non-null while closing with a last word: reading has stopped for good. */
    private LastWord lastWord;
    private final Liveness liveness;
    private final TcpTicks ticks;
    /** An accepted connection's place in its transport's connection counts, given back on close; else null. */
    private ConnectionCounts.Admission admission;

    // ---- loop thread only
    private boolean writeInterest;

    /**
     * @param serverSide true for an accepted connection: it stops reading requests while more than
     *                   {@code writeHighWaterMark} bytes of its responses wait to be written. A client
     *                   connection never stops reading responses (its own sends are bounded by the
     *                   caller, see {@link #claim(int, long)}), so two sides never wait for each other.
     */
    public TcpConnection(SocketGroup loop, StreamSocket channel, int maxFrameLength, boolean serverSide) {
        this.loop = loop;
        this.serverSide = serverSide;
        this.channel = channel;
        BufferPool pool = loop.pool();
        SocketSettings settings = loop.settings();
        this.writeHighWaterMark = settings.writeHighWaterMark();
        this.remote = channel.remoteAddress();
        this.local = channel.localAddress();
        this.ring = new TcpSendRing(this, loop, pool);
        this.liveness = new Liveness(ring);
        this.timers = new ReceiveTimers(settings.frameReadTimeoutNanos(), serverSide ? settings.idleTimeoutNanos() : 0,
                serverSide ? 0 : settings.pingIntervalNanos(), settings.pingTimeoutNanos(), System.nanoTime());
        this.tls = settings.tls() == null ? null : new TlsWire(channel, settings.tls(), !serverSide, remote, this::flush);
        this.wire = tls != null ? tls : new PlainWire(channel);
        this.receiver = new TcpReceiver(this, wire, pool, maxFrameLength, timers, serverSide);
        this.ticks = new TcpTicks(this, receiver, ring, timers, liveness, serverSide, settings.idleTickNanos());
    }

    /** @return completes when the connection may carry frames: at once, or when its TLS handshake is done */
    public CompletableFuture<Void> secured() {
        return tls == null ? CompletableFuture.completedFuture(null) : tls.secured();
    }

    @Override
    public SSLSession tlsSession() {
        return tls != null && tls.ready() ? tls.session() : null;
    }

    /** Starts reading, frames going to {@code frameHandler}; on the loop thread. */
    public void register(FrameHandler frameHandler) throws IOException {
        this.handler = frameHandler;
        channel.register(this);
        loop.added(this);
        if (tls != null) {
            tls.begin(); // a client says hello now; a server waits for it
            if (tls.hasPendingOutput()) {
                updateWriteInterest(true);
            }
        }
    }

    /** Counts this (accepted) connection until it closes; before {@link #register}. */
    public void admitted(ConnectionCounts.Admission a) {
        this.admission = a;
        receiver.admitted(a);
    }

    @Override
    public dev.rdmarpc.rpc.transport.FrameHold holdFrame() {
        return loop.inLoop() ? receiver.holdFrame() : null;
    }

    /** @return frames of this connection held past their handler now (tests) */
    public int heldFrames() {
        return receiver.heldFrames();
    }

    @Override
    public boolean takeFrameShare(long bytes) {
        return admission == null || admission.takeFrameBytes(bytes);
    }

    @Override
    public void releaseFrameShare(long bytes) {
        if (admission != null) {
            admission.releaseFrameBytes(bytes);
        }
    }

    /** @return the socket (tests read its options) */
    public StreamSocket channel() {
        return channel;
    }

    void setHandler(FrameHandler frameHandler) {
        this.handler = frameHandler;
    }

    // =========================================================== receive

    /** The socket is ready: for writing, reading or both (an error or the peer's close reads as readable). */
    public void onReady(boolean writable, boolean readable) {
        if (writable) {
            flush();
        }
        if (readable && open) {
            read();
        }
    }

    private void read() {
        if (lastWord != null) {
            if (lastWord.drained(channel, loop.discard())) {
                closeNow(lastWord.cause()); // the peer closed too (or failed)
            }
            return;
        }
        receiver.read();
        if (tls != null && open) {
            if (tls.hasPendingOutput() && !writeInterest) {
                updateWriteInterest(true); // handshake messages the socket did not take yet
            }
            if (tls.hasBufferedInput() && mayRead()) {
                resumeReadLater(); // records already off the socket: it will not say it is readable for them
            }
        }
    }

    /**
     * Whether the receiver may read on: open, reading enabled, no last word, and (on a server)
     * writes not backed up. {@link #writesBackedUp} is the live form of readPausedForWrites (set by
     * flush, the only place the unsent bytes fall).
     */
    boolean mayRead() {
        return open && readEnabled && lastWord == null && !writesBackedUp();
    }

    /** Whether frames may still be handed to the handler: open, no last word. */
    boolean receiving() {
        return open && lastWord == null;
    }

    FrameHandler handler() {
        return handler;
    }

    /** @return whether it is closing (on the loop thread, until closed) */
    boolean closing() {
        return closing;
    }

    /** @return its TLS, or null for plain TCP */
    TlsWire tls() {
        return tls;
    }

    /** @return whether reading is stopped: by the handler, or while responses back up */
    boolean readStopped() {
        return readPausedForWrites || !readEnabled;
    }

    /** A ping or a pong arrived ({@link Liveness}). */
    void liveness(MemorySegment seg, long at) {
        liveness.received(seg, at);
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

    /** Refuses the peer: the handler explains and closes ({@link #closeAfter}), or closes at once. */
    void refuse(IOException cause) {
        Refusals.refuse(LOG, handler, this, cause, this::closeNow);
    }

    /** {@link #refuse} without the log line (the caller logged, e.g. rate-limited); on the loop thread. */
    public void refuseQuietly(IOException cause) {
        Refusals.tell(LOG, handler, this, cause, this::closeNow);
    }

    @Override
    public void closeAfter(MemorySegment lastFrame, Throwable cause) {
        byte[] frame = lastFrame.toArray(ValueLayout.JAVA_BYTE);
        execute(() -> beginLastWord(frame, cause));
    }

    /** Stops reading for good, gives the receive buffers back, and says the last word once the responses owed are out. */
    private void beginLastWord(byte[] frame, Throwable cause) {
        if (!open || closing || lastWord != null) {
            return;
        }
        lastWord = new LastWord(frame, cause, System.nanoTime());
        receiver.release();
        updateOps();
        flush();
    }

    /** Writes the last word once nothing else is owed; on the loop thread. */
    private void sayLastWord() {
        if (!open || closing || lastWord.said()) {
            return;
        }
        if (ring.unsentBytes() > 0 || handler.callsInFlight() > 0) {
            return; // a flush or the tick comes back
        }
        try {
            Wire w = tls != null ? tls.lastWordWire() : wire;
            if (w == null) {
                closeNow(lastWord.cause()); // mid-handshake: no way to say it the peer would read
                return;
            }
            writeInterest = !lastWord.write(w, channel); // once written: read (and drop) until the peer closes
            updateOps();
        } catch (IOException e) {
            closeNow(lastWord.cause());
        }
    }


    // =========================================================== send: the ring (claims and commits: RingConnection)

    @Override
    TcpSendRing ring() {
        return ring;
    }

    @Override
    PooledBuffer dispatching() {
        return receiver.dispatching();
    }

    /** Writes everything committed; on the loop thread. */
    @Override
    public void flush() {
        long written;
        try {
            if (!wire.flushPending()) {
                updateWriteInterest(true); // TLS records from before wait for the socket
                return;
            }
            written = ring.write(wire);
        } catch (IOException e) {
            closeNow(e);
            return;
        }
        if (written >= 0) { // -1: nothing was queued
            // before a TLS handshake is done nothing is taken: its end flushes again
            updateWriteInterest(ring.socketFull() && wire.ready() || wire.hasPendingOutput());
            if (written > 0) {
                handler.onSendProgress(this);
            }
        } else if (tls != null && writeInterest && lastWord == null) {
            updateWriteInterest(false); // the TLS records that waited are out, and nothing more is queued
        }
        if (lastWord != null) {
            sayLastWord();
        }
    }

    private void updateWriteInterest(boolean socketFull) {
        // The socket took less than offered: wait for OP_WRITE. Frames committed meanwhile were
        // scheduled for another flush by their committer.
        if (socketFull != writeInterest && channel.registered()) {
            writeInterest = socketFull;
            updateOps();
        }
        boolean over = writesBackedUp();
        if (over != readPausedForWrites) {
            readPausedForWrites = over;
            updateOps();
            if (!over && open && readEnabled) {
                resumeReadLater();
            }
        }
    }

    /** Reads again on a later turn of the loop, when reading was stopped and may go on. */
    void resumeReadLater() {
        loop.executeLater(this::resumeRead);
    }

    private void resumeRead() {
        if (open && channel.registered()) {
            read();
        }
    }

    void updateOps() {
        if (!channel.registered()) {
            return;
        }
        channel.interest(lastWord != null ? lastWord.said() : readEnabled && !readPausedForWrites && !receiver.waitingForShare(),
                writeInterest);
    }

    // =========================================================== lifecycle and the rest

    /** @return the calls its handler has in flight (0 before the handler is set) */
    int callsInFlight() {
        FrameHandler h = handler;
        return h == null ? 0 : h.callsInFlight();
    }

    /** @return whether this connection needs ticks at the full rate ({@link TcpTicks#hasTimedWork}) */
    boolean hasTimedWork() {
        return ticks.hasTimedWork();
    }

    void tick(long now) {
        if (!open) {
            return;
        }
        if (tls != null && tls.handshakeExpired(now)) {
            closeNow(tls.handshakeTimedOut());
            return;
        }
        if (tls != null) {
            tls.verdictWaitOver(now);
        }
        if (lastWord != null) {
            if (lastWord.expired(now)) {
                LOG.log(System.Logger.Level.DEBUG, "{0}: last word not taken in time, closing", this);
                closeNow(lastWord.cause());
            } else {
                sayLastWord();
            }
            return;
        }
        handler.onTick(this, now);
        if (!open || lastWord != null) {
            return;
        }
        ticks.afterHandler(now);
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
    @Override
    public void closeNow(Throwable cause) {
        if (!open || closing) {
            return;
        }
        closing = true;
        if (cause == null) {
            flush(); // orderly: send what is committed, as far as the socket takes it now
        }
        open = false;
        ring.close();
        if (tls != null) {
            tls.connectionClosed(cause, serverSide ? loop.tlsFailures() : null);
        }
        try {
            channel.close();
        } catch (IOException e) {
            LOG.log(System.Logger.Level.DEBUG, "closing channel failed", e);
        }
        receiver.release();
        if (admission != null) {
            admission.release();
        }
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
