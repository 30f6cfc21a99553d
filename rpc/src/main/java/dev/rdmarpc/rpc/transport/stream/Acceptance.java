package dev.rdmarpc.rpc.transport.stream;

import dev.rdmarpc.rpc.transport.Acceptor;
import dev.rdmarpc.rpc.transport.FrameHandler;
import dev.rdmarpc.rpc.transport.ResourceExhaustedException;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;

/**
 * What a listener does with each connection it accepted, whatever its sockets are: count it against
 * the transport's limits ({@link #admit}), then set it up on its I/O thread ({@link #start}). A
 * connection over a limit is still set up, to be told why; refusals are logged sparsely.
 *
 * <p>Used by the thread that accepts.
 */
public final class Acceptance {
    private static final System.Logger LOG = System.getLogger("dev.rdmarpc.rpc.transport.tcp.TcpListener");

    private final ConnectionCounts counts;
    private final InetSocketAddress listening;
    private final int maxFrameLength;
    private final Acceptor acceptor;
    /** Refusals for a connection limit, logged sparsely. */
    private final SparseLog refusals = new SparseLog();

    /**
     * @param counts         the transport's accepted connections
     * @param listening      the listener's address (for the log)
     * @param maxFrameLength the largest frame a connection takes
     * @param acceptor       who handles each connection's frames
     */
    public Acceptance(ConnectionCounts counts, InetSocketAddress listening, int maxFrameLength, Acceptor acceptor) {
        this.counts = counts;
        this.listening = listening;
        this.maxFrameLength = maxFrameLength;
        this.acceptor = acceptor;
    }

    /**
     * Counts a connection from {@code from}. Over a limit it is still set up, to be told why
     * ({@link TcpConnection#refuseQuietly}); logged at WARNING at most every
     * {@link SparseLog#INTERVAL_NANOS}, with how many were refused meanwhile.
     *
     * @return its admission, or null when it must be closed without a word (too many refused
     *         connections are still being told why)
     */
    public ConnectionCounts.Admission admit(InetAddress from) {
        ConnectionCounts.Admission admission = counts.admit(from);
        if (admission.refusal() == null) {
            return admission;
        }
        long refused = refusals.occurred();
        if (refused > 0) {
            LOG.log(System.Logger.Level.WARNING, "refusing connections on " + listening + ": " + admission.refusal()
                    + " (" + refused + " refused since the last such message)");
        }
        if (counts.tooManyRefusing()) {
            admission.release();
            return null;
        }
        return admission;
    }

    /**
     * Makes {@code socket} a connection of {@code target}'s thread and, there, hands it to the acceptor
     * and starts reading (or tells it why it is refused). The connection owns the socket from here.
     */
    public void start(SocketGroup target, StreamSocket socket, ConnectionCounts.Admission admission) {
        TcpConnection c = new TcpConnection(target, socket, maxFrameLength, true);
        c.admitted(admission);
        target.execute(() -> {
            try {
                FrameHandler h = acceptor.accept(c);
                c.register(h);
                if (admission.refusal() != null) {
                    c.refuseQuietly(new ResourceExhaustedException(admission.refusal()));
                }
            } catch (IOException | RuntimeException e) {
                LOG.log(System.Logger.Level.WARNING, "could not set up accepted connection " + c, e);
                c.closeNow(e);
            }
        });
    }
}
