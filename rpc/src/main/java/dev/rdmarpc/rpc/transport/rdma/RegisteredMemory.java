package dev.rdmarpc.rpc.transport.rdma;

import java.lang.foreign.MemorySegment;
import java.time.Duration;

/**
 * Memory of the application registered with every device of an {@link RdmaTransport}
 * ({@link RdmaTransport#register}), so that attachments inside it move without a copy: sent, the
 * work request's scatter-gather entry points at this memory (or, for a rendezvous frame, the peer
 * reads it under a key for the attachment alone: a memory window bound to it, or on Soft-RoCE a
 * region registered on it for the transfer), and only the frame's header and
 * payload are written into the transport's own buffers; received, a response attachment read by
 * rendezvous is written by the NIC straight into the caller's target here.
 * {@snippet :
 * RegisteredMemory blob = transport.register(arena.allocate(64 << 20));
 * client.call(PUT, key, CallOptions.DEFAULT.withAttachment(Attachment.of(blob.segment().asSlice(0, n))));
 * Reply<String> r = client.exchange(GET, key, CallOptions.DEFAULT
 *         .withResponseAttachment(Attachment.of(blob.segment().asSlice(n, 8 << 20))));
 * }
 *
 * <p>Applies to attachments of at least 4 KiB sent by clients (requests) and servers (responses) on
 * this transport, and to response attachments received by rendezvous into a target here
 * ({@link dev.rdmarpc.rpc.CallOptions#withResponseAttachment}).
 *
 * <h2>When the memory may change</h2>
 * Since the NIC reads an attachment where it lies, the attachment must stay unchanged while the
 * transport sends it, which can outlast the call:
 * <ul>
 * <li>Request attachments: once the call's response has arrived (whatever its status, as long as the
 *     server sent it), the server has received the whole request: the memory may change. The
 *     transport may still hold it for a moment (a send not yet acknowledged, a window not yet
 *     invalidated); only what {@link #close()} does waits for that.</li>
 * <li>A call that ended on this side (its deadline, a cancel, a closed connection) may leave its
 *     frame queued or being read: the NIC can still read the memory. Change it only once
 *     {@link #transfersInFlight()} is 0, or after {@link #close()} returned.</li>
 * <li>Response targets here: the NIC writes a target only while its call has not completed. Once
 *     the write started, a cancel or the deadline does not end the call before it, and a connection
 *     that fails meanwhile fails the call once its queue pair is destroyed; so a target is the
 *     caller's again as soon as its call completed.</li>
 * <li>Response attachments a server's handler set: the NIC reads them after the handler returned,
 *     until the client has them. Change the memory only once {@link #transfersInFlight()} is 0, or
 *     after {@link #close()} returned.</li>
 * </ul>
 *
 * <p>Ownership: the caller owns the memory and this registration. {@link #close()} refuses the memory
 * to new frames (their attachments are then copied), waits until no frame uses it any more (each is
 * sent and acknowledged, or read by the peer and its window invalidated, or dropped with its
 * connection once the queue pair is destroyed), then deregisters it: the memory may be freed once it
 * returns, and the NIC never touches it again. The wait is bounded: {@link #CLOSE_TIMEOUT} for
 * {@code close()}, or the caller's time for {@link #close(Duration)}. Frames still using the memory
 * then (queued behind a peer that stopped reading, or one that answers pings but never reads its
 * rendezvous frame) are not waited for: the connections that carry them are closed, with a reason
 * that says so (their calls fail with {@code CONNECTION_CLOSED}), their queue pairs destroyed, and
 * close returns once that is done. Closing the transport closes the registration too. Thread-safe.
 */
public final class RegisteredMemory implements AutoCloseable {
    /**
     * How long {@link #close()} waits for the frames that use the memory before it closes their
     * connections: 30 s, as a frame may take to arrive ({@code timeouts.frameRead}'s default).
     */
    public static final Duration CLOSE_TIMEOUT = Duration.ofSeconds(30);

    private final DeviceTable table;
    private final MemorySegment segment;
    final DeviceTable.UserRegion region;

    RegisteredMemory(DeviceTable table, MemorySegment segment, DeviceTable.UserRegion region) {
        this.table = table;
        this.segment = segment;
        this.region = region;
    }

    /** @return the registered memory */
    public MemorySegment segment() {
        return segment;
    }

    /**
     * @return frames whose attachment lies in this memory and that the transport has not finished
     *         with, sent or being received into it (see the class comment); 0 means the NIC touches
     *         none of it
     */
    public int transfersInFlight() {
        return region.inUse();
    }

    /**
     * Refuses the memory to new frames, waits until no frame uses it, at most {@link #CLOSE_TIMEOUT},
     * then deregisters it from every device; frames that still use it then are dropped with their
     * connections, which are closed (see the class comment). Idempotent; an interrupt does not end
     * the wait, and stays set.
     */
    @Override
    public void close() {
        close(CLOSE_TIMEOUT);
    }

    /**
     * As {@link #close()}, waiting at most {@code timeout} for the frames that use the memory before
     * their connections are closed. When close returns, the memory is deregistered and the NIC never
     * touches it again.
     *
     * @param timeout how long frames may go on using the memory; positive
     * @throws IllegalArgumentException when {@code timeout} is not positive
     */
    public void close(Duration timeout) {
        if (timeout.isNegative() || timeout.isZero()) {
            throw new IllegalArgumentException("timeout must be positive: " + timeout);
        }
        table.deregisterUser(region, timeout);
    }

    @Override
    public String toString() {
        return "RegisteredMemory[" + segment.byteSize() + " bytes at 0x" + Long.toHexString(segment.address()) + "]";
    }
}
