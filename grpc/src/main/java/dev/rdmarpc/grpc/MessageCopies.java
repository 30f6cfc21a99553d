package dev.rdmarpc.grpc;

import java.util.concurrent.atomic.LongAdder;

/**
 * Counts, for this JVM, the gRPC messages this transport sent and received and the copies of
 * their bytes it made on each side. A copy is one pass over a message's bytes into other memory:
 * on the send side a protobuf message (a {@code Drainable} with a known length) costs one, its
 * serialization straight into the rdmarpc send buffer; a message from another marshaller two
 * (read into an array, then into the buffer); a compressed message three. On the receive side a
 * message costs none where the transport keeps its frame for it (TCP, and RDMA with its default
 * private receive queues; up to 16 frames per connection at a time): it waits in the receive buffer until the application asks for it, and the marshaller
 * parses it from there through an {@code InputStream}; beyond those 16, or where the transport does not
 * keep frames, or when a marshaller detaches the stream, it costs one copy into an array of its own.
 * What the kernel or the NIC copy is not counted. Thread-safe; the counts but {@link #heldNow} only grow.
 */
public final class MessageCopies {
    private static final LongAdder SENT = new LongAdder();
    private static final LongAdder SEND_COPIES = new LongAdder();
    private static final LongAdder RECEIVED = new LongAdder();
    private static final LongAdder RECEIVE_COPIES = new LongAdder();
    private static final LongAdder HELD = new LongAdder();

    private MessageCopies() {
    }

    /** @return messages sent since the JVM started */
    public static long sent() {
        return SENT.sum();
    }

    /** @return copies made of sent messages' bytes since the JVM started */
    public static long sendCopies() {
        return SEND_COPIES.sum();
    }

    /** @return messages received since the JVM started */
    public static long received() {
        return RECEIVED.sum();
    }

    /** @return copies made of received messages' bytes since the JVM started */
    public static long receiveCopies() {
        return RECEIVE_COPIES.sum();
    }

    /**
     * @return received messages that keep their receive buffer now (not parsed, detached or dropped
     *         yet): 0 once every call is over, whatever way it ended
     */
    public static long heldNow() {
        return HELD.sum();
    }

    /** Counts a received message that keeps its receive buffer, {@code +1}, or gave it back, {@code -1} (transport internal). */
    public static void held(int change) {
        HELD.add(change);
    }

    /** Counts one sent message (transport internal). */
    public static void sentMessage() {
        SENT.increment();
    }

    /** Counts one copy on the send side (transport internal). */
    public static void sendCopy() {
        SEND_COPIES.increment();
    }

    /** Counts one received message (transport internal). */
    public static void receivedMessage() {
        RECEIVED.increment();
    }

    /** Counts one copy on the receive side (transport internal). */
    public static void receiveCopy() {
        RECEIVE_COPIES.increment();
    }
}
