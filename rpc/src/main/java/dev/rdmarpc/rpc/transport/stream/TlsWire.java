package dev.rdmarpc.rpc.transport.stream;

import dev.rdmarpc.rpc.transport.tls.TlsConfig;
import dev.rdmarpc.rpc.transport.CertificateRefusedException;
import dev.rdmarpc.rpc.transport.PeerRefusedException;
import java.io.EOFException;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ByteChannel;
import java.nio.channels.GatheringByteChannel;
import java.nio.channels.ReadableByteChannel;
import java.util.concurrent.CompletableFuture;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLEngineResult;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLSession;

/**
 * TLS over the socket ({@link StreamSocket}), with the JDK's own {@link SSLEngine}. Records are
 * unwrapped straight into the caller's buffer (a pooled, off-heap receive chunk) when it has room
 * for a whole record, else into a record-sized buffer of this wire's and copied from there; they are
 * wrapped from the send ring's buffers into one off-heap buffer of several records, written to the
 * socket from there. The handshake runs on the loop thread, its delegated tasks too (a few
 * milliseconds of key agreement and certificate checks per connection). Loop thread only.
 */
final class TlsWire implements Wire {
    private static final ByteBuffer EMPTY = ByteBuffer.allocate(0);
    /** Records the outgoing buffer holds: one gathering write of the ring (up to 64 KiB) fits. */
    private static final int OUT_RECORDS = 5;

    /** The socket, seen as a reader and as a (gathering) writer. */
    private final ReadableByteChannel in;
    private final GatheringByteChannel out;
    private final SSLEngine engine;
    private final boolean client;
    /** A server's check of its clients, or null. */
    private final TlsConfig.ClientCheck clientCheck;
    private final Runnable onReady;
    private final InetSocketAddress peer;
    private final long handshakeTimeoutNanos;
    /** When a handshake not done by then is given up (System.nanoTime). */
    private final long handshakeDeadline;
    /** Completes when the handshake is done; fails if the connection closes first. */
    private final CompletableFuture<Void> secured = new CompletableFuture<>();
    /** Bytes from the socket not unwrapped yet; write mode. */
    private ByteBuffer netIn;
    /** Records waiting for the socket; read mode. */
    private ByteBuffer netOut;
    /** Plaintext unwrapped for a caller whose buffer had too little room; read mode. */
    private ByteBuffer appIn;
    private boolean handshakeDone;
    /** The last unwrap needed more bytes than {@link #netIn} holds. */
    private boolean underflow;
    private boolean inboundClosed;
    /** Largest plaintext of one record: a caller's buffer with this much room is unwrapped into directly. */
    private int appBufferSize;
    /** Why the server's {@link TlsConfig.ClientCheck} refused this client, once its handshake is done; else null. */
    private String refusal;
    /** Whether this side wrote any TLS bytes yet: until it has, a server may still answer in plain ({@link #lastWordWire}). */
    private boolean spoke;
    /** The socket without TLS, for a last word to a peer that has no TLS session ({@link #lastWordWire}). */
    private PlainWire plain;
    /** How long a TLS 1.3 client waits after its handshake for the server's verdict on its certificate ({@link TlsConfig#certificateVerdictWait}). */
    private final long verdictWaitNanos;
    /** A client whose handshake is done waits for the server's verdict until then (System.nanoTime); 0 when it does not wait. */
    private long verdictDeadline;

    /**
     * @param client  true for the side that connected
     * @param peer    the other side (a client checks the server's name against it)
     * @param onReady run (on the loop thread) when the handshake completes: what was queued may be
     *                written now
     */
    <C extends ByteChannel & GatheringByteChannel> TlsWire(C channel, TlsConfig config, boolean client, InetSocketAddress peer,
            Runnable onReady) {
        this.in = channel;
        this.out = channel;
        this.engine = config.newEngine(client, peer);
        this.client = client;
        this.clientCheck = client ? null : config.clientCheck();
        this.onReady = onReady;
        this.peer = peer;
        this.handshakeTimeoutNanos = config.handshakeTimeout().toNanos();
        this.handshakeDeadline = System.nanoTime() + handshakeTimeoutNanos;
        this.verdictWaitNanos = config.certificateVerdictWait().toNanos();
        SSLSession s = engine.getSession();
        this.netIn = ByteBuffer.allocateDirect(s.getPacketBufferSize());
        this.netOut = ByteBuffer.allocateDirect(s.getPacketBufferSize() * OUT_RECORDS).flip();
        this.appBufferSize = s.getApplicationBufferSize();
        this.appIn = ByteBuffer.allocateDirect(appBufferSize).flip();
    }

    /** Starts the handshake: a client sends its hello now, a server waits for the client's. */
    void begin() throws IOException {
        engine.beginHandshake();
        step(engine.getHandshakeStatus());
    }

    /** @return the session: the peer's identity once the handshake is done */
    SSLSession session() {
        return engine.getSession();
    }

    @Override
    public boolean ready() {
        return handshakeDone;
    }

    @Override
    public boolean hasPendingOutput() {
        return netOut.hasRemaining();
    }

    @Override
    public boolean hasBufferedInput() {
        return appIn.hasRemaining() || (netIn.position() > 0 && !underflow);
    }

    @Override
    public boolean flushPending() throws IOException {
        spoke |= netOut.hasRemaining();
        while (netOut.hasRemaining()) {
            if (out.write(netOut) == 0) {
                return false;
            }
        }
        return true;
    }

    @Override
    public int read(ByteBuffer dst) throws IOException {
        int n;
        try {
            n = readRecords(dst);
        } catch (SSLException e) {
            sendAlert(); // the peer learns why (its log names it): the engine has the alert ready
            if (client && handshakeDone && CertificateRefusal.isOne(e)) {
                // a TLS 1.3 server's refusal of this client's certificate: it fails the connect within the
                // wait for its verdict, closes the connection after it; either way it says the same
                throw new CertificateRefusedException(CertificateRefusal.describe(e), e);
            }
            // after the handshake the connection closes with this: name the cause as a failed connect would
            throw handshakeDone ? new TlsConfig.Described(e) : e;
        }
        if (refusal != null) {
            // the server's check refused the client: what this read unwrapped after the handshake is
            // dropped, never handled; the connection tells the client why, inside TLS, and closes
            throw new PeerRefusedException(refusal);
        }
        return n;
    }

    /**
     * @return the wire a last word ({@link LastWord}) goes on: this, once the handshake is done; on a
     *         server that has sent no TLS bytes yet (a client without TLS, or one refused as soon as
     *         it connected), the plain socket, so that a client of either kind reads why; else null
     *         (mid-handshake nothing can be said)
     */
    Wire lastWordWire() {
        if (handshakeDone) {
            return this;
        }
        if (client || spoke) {
            return null;
        }
        if (plain == null) {
            plain = new PlainWire(in, out);
        }
        return plain;
    }

    private int readRecords(ByteBuffer dst) throws IOException {
        int total = drainAppIn(dst);
        while (dst.hasRemaining()) {
            int got = unwrap(dst);
            if (got < 0) {
                return total > 0 ? total : -1;
            }
            total += got;
            if (!dst.hasRemaining() || !underflow) {
                continue; // full, or more records may wait in netIn
            }
            if (!netIn.hasRemaining()) {
                growNetIn();
            }
            int n = in.read(netIn);
            if (n < 0) {
                if (!handshakeDone) {
                    throw new EOFException("the peer closed the connection during the TLS handshake"
                            + " (it may not trust this side's certificate, or not speak TLS)");
                }
                return total > 0 ? total : -1;
            }
            if (n == 0) {
                break;
            }
            underflow = false;
        }
        return total;
    }

    private int drainAppIn(ByteBuffer dst) {
        int n = Math.min(appIn.remaining(), dst.remaining());
        if (n == 0) {
            return 0;
        }
        int lim = appIn.limit();
        appIn.limit(appIn.position() + n);
        dst.put(appIn);
        appIn.limit(lim);
        return n;
    }

    /**
     * Unwraps the records {@link #netIn} holds into {@code dst} until it is full or a record is
     * incomplete ({@link #underflow}), stepping the handshake as it asks.
     *
     * @return plaintext bytes given to {@code dst}, -1 when the peer closed TLS
     */
    private int unwrap(ByteBuffer dst) throws IOException {
        int total = 0;
        boolean viaAppIn = false;
        while (dst.hasRemaining()) {
            if (inboundClosed) {
                return total > 0 ? total : -1;
            }
            if (netIn.position() == 0) {
                underflow = true;
                return total;
            }
            if (!handshakeDone && PlainPeer.startsWithFrame(netIn)) {
                IOException plainly = PlainPeer.failure(client, netIn);
                if (plainly == null) {
                    underflow = true; // the rest of the server's plain answer is on its way
                    return total;
                }
                throw plainly;
            }
            boolean direct = !viaAppIn && dst.remaining() >= appBufferSize;
            ByteBuffer target = direct ? dst : appIn.clear();
            SSLEngineResult r;
            boolean awaited = awaitingVerdict();
            netIn.flip();
            try {
                r = engine.unwrap(netIn, target);
            } finally {
                netIn.compact();
                if (!direct) {
                    appIn.flip();
                }
            }
            total += direct ? r.bytesProduced() : drainAppIn(dst);
            switch (r.getStatus()) {
                case BUFFER_UNDERFLOW -> {
                    underflow = true;
                    return total;
                }
                case BUFFER_OVERFLOW -> {
                    if (direct) {
                        viaAppIn = true; // dst's room was not enough after all: go through appIn
                    } else {
                        appBufferSize = engine.getSession().getApplicationBufferSize();
                        appIn = ByteBuffer.allocateDirect(2 * appBufferSize).flip();
                    }
                    continue;
                }
                case CLOSED -> {
                    inboundClosed = true;
                    step(r.getHandshakeStatus()); // our close_notify in answer
                    return total > 0 ? total : -1;
                }
                case OK -> {
                    if (awaited && r.bytesConsumed() > 0) {
                        verdictCame(); // the server's first record after our Finished: it took our certificate
                    }
                }
            }
            underflow = false;
            step(r.getHandshakeStatus());
            if (r.bytesConsumed() == 0 && r.bytesProduced() == 0
                    && engine.getHandshakeStatus() != SSLEngineResult.HandshakeStatus.NEED_UNWRAP) {
                underflow = true; // nothing moved: wait for the socket
                return total;
            }
            if (!direct && appIn.hasRemaining()) {
                return total; // dst is full; the rest waits in appIn
            }
        }
        return total;
    }

    private void growNetIn() {
        ByteBuffer bigger = ByteBuffer.allocateDirect(Math.max(netIn.capacity() * 2, engine.getSession().getPacketBufferSize()));
        netIn.flip();
        bigger.put(netIn);
        netIn = bigger;
    }

    /** Does what the handshake asks: run its tasks, send its messages; tells the connection when it is done. */
    private void step(SSLEngineResult.HandshakeStatus hs) throws IOException {
        while (true) {
            switch (hs) {
                case NEED_TASK -> {
                    Runnable task;
                    while ((task = engine.getDelegatedTask()) != null) {
                        task.run();
                    }
                    hs = engine.getHandshakeStatus();
                }
                case NEED_WRAP -> {
                    SSLEngineResult r = wrap(EMPTY);
                    if (r.getStatus() == SSLEngineResult.Status.CLOSED && !netOut.hasRemaining()) {
                        return;
                    }
                    hs = r.getHandshakeStatus();
                }
                case FINISHED -> {
                    finished();
                    return;
                }
                case NOT_HANDSHAKING -> {
                    if (!handshakeDone && engine.getSession().isValid() && !engine.isOutboundDone()) {
                        finished(); // some engines report FINISHED only on the result before this
                    }
                    return;
                }
                default -> {
                    return; // NEED_UNWRAP(_AGAIN): the peer's bytes come with a read
                }
            }
        }
    }

    private void finished() {
        if (handshakeDone) {
            return;
        }
        handshakeDone = true;
        appBufferSize = engine.getSession().getApplicationBufferSize();
        if (clientCheck != null) {
            refusal = CertificateRefusal.byCheck(clientCheck, engine.getSession(), peer);
            if (refusal != null) {
                return; // the read under way refuses the connection
            }
        }
        if (client && verdictWaitNanos > 0 && "TLSv1.3".equals(engine.getSession().getProtocol())) {
            // TLS 1.3: the server judges this client's certificate (or its lack of one) after our
            // Finished; its first record after it (a session ticket, or its alert) says how
            verdictDeadline = System.nanoTime() + verdictWaitNanos;
            onReady.run();
            return;
        }
        secured.complete(null);
        onReady.run();
    }

    /** @return true for a TLS 1.3 client whose handshake is done and who has not heard the server's verdict yet */
    boolean awaitingVerdict() {
        return verdictDeadline != 0 && !secured.isDone();
    }

    /** The server's verdict on this client came (it went on), or the wait for it is over: the connect may go on. */
    private void verdictCame() {
        secured.complete(null);
    }

    /** Ends the wait for the server's verdict when its time is up at {@code now}: no word means the server took this client. */
    void verdictWaitOver(long now) {
        if (awaitingVerdict() && now - verdictDeadline > 0) {
            verdictCame();
        }
    }

    /** @return completes when the handshake is done; fails with the close's cause if the connection closes first */
    CompletableFuture<Void> secured() {
        return secured;
    }

    /** @return true when the handshake is still not done at {@code now} and its time is up */
    boolean handshakeExpired(long now) {
        return !handshakeDone && now - handshakeDeadline > 0;
    }

    /** @return what a connection whose handshake took too long closes with */
    SSLException handshakeTimedOut() {
        return new SSLException("the TLS handshake was not done within " + handshakeTimeoutNanos / 1_000_000
                + " ms (TlsConfig handshakeTimeout)");
    }

    /**
     * The connection closed: an orderly close says close_notify; one before the handshake was done
     * fails {@link #secured} and, on a server ({@code server} not null), is counted and logged there.
     */
    void connectionClosed(Throwable cause, TlsFailures server) {
        if (cause == null && handshakeDone) {
            closeOutbound();
        } else if (!handshakeDone && server != null) {
            server.failed(peer, cause);
        }
        if (cause == null && awaitingVerdict()) {
            cause = new CertificateRefusedException("the server closed the connection right after the TLS handshake,"
                    + " before it accepted this client: it may not accept this client's certificate, or its lack of one", null);
        }
        secured.completeExceptionally(cause != null ? cause : new EOFException("closed before the TLS handshake was done"));
    }

    /** Wraps one record of {@code src} (or a handshake message) into {@link #netOut}, flushing as needed. */
    private SSLEngineResult wrap(ByteBuffer src) throws IOException {
        while (true) {
            netOut.compact();
            SSLEngineResult r;
            try {
                r = engine.wrap(src, netOut);
            } finally {
                netOut.flip();
            }
            if (r.getStatus() != SSLEngineResult.Status.BUFFER_OVERFLOW) {
                flushPending();
                return r;
            }
            if (!flushPending() || netOut.capacity() < engine.getSession().getPacketBufferSize()) {
                ByteBuffer bigger = ByteBuffer.allocateDirect(netOut.capacity() + engine.getSession().getPacketBufferSize());
                bigger.put(netOut).flip();
                netOut = bigger;
            }
        }
    }

    @Override
    public long write(ByteBuffer[] srcs, int offset, int length) throws IOException {
        if (!handshakeDone || !flushPending()) {
            return 0;
        }
        long taken = 0;
        while (true) {
            netOut.compact();
            SSLEngineResult r;
            try {
                r = engine.wrap(srcs, offset, length, netOut);
            } finally {
                netOut.flip();
            }
            taken += r.bytesConsumed();
            if (r.getStatus() == SSLEngineResult.Status.CLOSED) {
                throw new SSLException("TLS is closed for writing on this connection");
            }
            if (r.getHandshakeStatus() != SSLEngineResult.HandshakeStatus.NOT_HANDSHAKING
                    && r.getHandshakeStatus() != SSLEngineResult.HandshakeStatus.FINISHED) {
                step(r.getHandshakeStatus()); // a key update
            }
            if (r.getStatus() == SSLEngineResult.Status.BUFFER_OVERFLOW) {
                if (!flushPending()) {
                    return taken; // the socket is full: the rest with OP_WRITE
                }
                continue;
            }
            if (r.bytesConsumed() == 0 || !anyRemaining(srcs, offset, length)) {
                break;
            }
        }
        flushPending();
        return taken;
    }

    private static boolean anyRemaining(ByteBuffer[] srcs, int offset, int length) {
        for (int i = offset; i < offset + length; i++) {
            if (srcs[i].hasRemaining()) {
                return true;
            }
        }
        return false;
    }

    /** After a failed handshake step: writes the alert the engine prepared, as far as the socket takes it. */
    private void sendAlert() {
        try {
            engine.closeOutbound();
            netOut.compact();
            try {
                engine.wrap(EMPTY, netOut);
            } finally {
                netOut.flip();
            }
            flushPending();
        } catch (IOException | RuntimeException e) {
            // best effort: the connection closes with the first failure anyway
        }
    }

    /** Says close_notify, as far as the socket takes it now; the connection closes the socket after. */
    void closeOutbound() {
        try {
            engine.closeOutbound();
            wrap(EMPTY);
        } catch (IOException | RuntimeException e) {
            // best effort: the socket closes anyway
        }
    }
}
