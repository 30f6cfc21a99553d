package dev.rdmarpc.rpc.transport;

import java.lang.foreign.MemorySegment;

/**
 * Receives the events of one {@link Connection}, always on that connection's I/O thread, one at a
 * time. Implementations must not block.
 */
public interface FrameHandler {
    /**
     * A whole frame arrived. Its header has passed {@code FrameDescriptor.check}. The memory is the
     * transport's receive buffer: valid only until this method returns.
     *
     * @param connection the connection
     * @param buffer     memory holding the frame
     * @param offset     where the frame starts
     * @param length     the frame's length (header, payload, attachment)
     */
    void onFrame(Connection connection, MemorySegment buffer, long offset, int length);

    /**
     * Where the attachment of a frame about to be received should land, when the transport can have
     * it written straight into memory of the handler's choosing: asked by the RDMA transport for a
     * rendezvous frame with an attachment, before it reads the frame (the TCP transport never asks).
     * {@code header} holds the frame's header at {@code offset}, checked
     * ({@link dev.rdmarpc.rpc.protocol.FrameHeader} reads it); nothing else of the frame has arrived.
     *
     * <p>The handler answers memory of at least the header's attachment length, or null to receive
     * the frame as usual (the default). Memory the transport can write into (host memory registered
     * with it, {@link dev.rdmarpc.rpc.transport.rdma.RdmaTransport#register}, or device memory
     * registered through its {@link dev.rdmarpc.rpc.transport.rdma.RdmaTransport#nicRegistrar}, named
     * by a segment of its addresses) gets the attachment's
     * bytes from the network, and the frame then comes to
     * {@link #onFrame(Connection, MemorySegment, long, int, MemorySegment)}; any other answer is
     * ignored and the frame comes to {@link #onFrame(Connection, MemorySegment, long, int)}. The
     * memory may be written until that call, or until the connection closes; it is written by the
     * NIC, so the answer commits the handler to leaving it to the transport meanwhile. Must not
     * block.
     *
     * @param connection the connection
     * @param header     memory holding the frame's header (valid only until this method returns)
     * @param offset     where the header starts
     * @return memory for the attachment (its first bytes are used), or null
     */
    default MemorySegment attachmentSink(Connection connection, MemorySegment header, long offset) {
        return null;
    }

    /**
     * A whole frame arrived whose attachment the transport wrote into the memory
     * {@link #attachmentSink} answered for it. {@code buffer} holds the frame from {@code offset} up to
     * its attachment (header, metadata, payload), and {@code length} is the whole frame's, as its
     * header says; the attachment is the first {@code landed.byteSize()} bytes of the answered memory,
     * {@code landed} itself. Handlers that answer {@link #attachmentSink} must implement this; the
     * default throws.
     *
     * @param connection the connection
     * @param buffer     memory holding the frame but its attachment (valid only until this method returns)
     * @param offset     where the frame starts
     * @param length     the frame's length (header, payload, attachment)
     * @param landed     the attachment, in the memory {@link #attachmentSink} answered
     */
    default void onFrame(Connection connection, MemorySegment buffer, long offset, int length, MemorySegment landed) {
        throw new UnsupportedOperationException(getClass().getName() + " answered an attachment sink but takes no"
                + " frames whose attachment landed there");
    }

    /**
     * Periodic tick (about every {@link Connection#tickIntervalNanos()}), for timeouts and idle
     * checks.
     *
     * @param connection the connection
     * @param nowNanos   {@link System#nanoTime()} at the tick
     */
    void onTick(Connection connection, long nowNanos);

    /**
     * Whether {@link #onTick} has something to time now (calls waiting with deadlines, a handshake):
     * while no connection of an I/O thread has, and no traffic came for a while, a transport may tick
     * less often ({@code LoopSettings.idleTickInterval}). Read on the I/O thread; a stale answer
     * costs at most one idle tick interval. Default: true (tick at the full rate).
     *
     * @return true while this handler needs ticks at the full rate
     */
    default boolean hasTimedWork() {
        return true;
    }

    /**
     * Queued bytes left for the network: {@link Connection#pendingBytes()} fell (a TCP write, an RDMA
     * send completion). For producers waiting for room below a limit ({@link Connection#claim(int, long)});
     * it must be cheap. Default: nothing.
     *
     * @param connection the connection
     */
    default void onSendProgress(Connection connection) {
    }

    /**
     * The transport refuses this connection and will close it: the peer sent a header that breaks
     * the protocol ({@link ProtocolException}), started a frame and did not finish it in time (also a
     * {@link ProtocolException}), stayed idle too long ({@link IdleTimeoutException}), or no receive
     * buffer is free for it ({@link ResourceExhaustedException}). Reading has stopped; every frame
     * received before was handed to {@link #onFrame}. The handler may explain itself with
     * {@link Connection#closeAfter} (a server sends the reason as a connection-level error after the
     * responses it still owes); it must close the connection one way or the other. Default: close
     * at once with {@code cause}.
     *
     * @param connection the connection
     * @param cause      why, with a message fit for the peer
     */
    default void onRefused(Connection connection, java.io.IOException cause) {
        connection.close(cause);
    }

    /**
     * @return on a server, calls taken from this connection's frames whose responses are not
     *         committed yet (blocking handlers still running): the transport does not count a
     *         connection with calls in flight as idle, and lets them answer before a
     *         {@link Connection#closeAfter} close. On a client, calls waiting for their responses:
     *         the TCP transport pings a server that stays silent meanwhile. Any thread reads it
     *         (a hint, read without locks); default 0.
     */
    default int callsInFlight() {
        return 0;
    }

    /**
     * On a client connection whose calls travel another way (the TCP connection beside an RDMA
     * connection): whether the peer was heard that way since this was last asked. The TCP transport
     * then takes it as an answer, so a server whose I/O thread is too busy answering calls to answer a
     * ping at once is not given up while its responses arrive. Asked by the connection's I/O thread,
     * while calls wait; default false.
     */
    default boolean heardElsewhere() {
        return false;
    }

    /**
     * After {@link #onClose}: the transport no longer touches any memory of this connection's frames,
     * the memory {@link #attachmentSink} answered included (RDMA: the queue pair is destroyed, so a
     * read into such memory that was under way at the close can no longer write it). A transport whose
     * handlers' {@link #attachmentSink} it asks calls this once; others need not. Default: nothing.
     *
     * @param connection the connection
     */
    default void onReleased(Connection connection) {
    }

    /**
     * The connection closed; called once. No frame follows.
     *
     * @param connection the connection
     * @param cause      why: null for an orderly close by this side, otherwise the error (an
     *                   {@link java.io.EOFException} when the peer closed, a {@link ProtocolException}
     *                   for bad input)
     */
    void onClose(Connection connection, Throwable cause);
}
