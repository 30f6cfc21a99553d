package dev.rdmarpc.rpc.transport.rdma;

import dev.rdmarpc.ibverbs.verbs.QueuePair;
import dev.rdmarpc.ibverbs.verbs.QueuePairInit;
import java.io.IOException;
import java.lang.foreign.MemorySegment;

/**
 * Where one connection's messages arrive: its own receive queue ({@link PrivateReceiveBuffers}) or
 * its loop's shared receive queue ({@link SharedReceiveBuffers}). A receive is named by its slot
 * (the work request id's slot field); {@link RdmaReceiver} handles the message in it and then
 * {@link #repost reposts} it, or {@link #drop drops} it when it will not be handled.
 *
 * <p>Threads: {@link #configure}, {@link #bind}, {@link #postInitial} and (for a connection the loop never attached) {@link #close} on the setup thread before
 * the loop knows the connection; everything else on the loop thread.
 */
interface ReceiveBuffers {
    /** Sets the receive side of the queue pair to create. */
    void configure(QueuePairInit init);

    /** The queue pair was created; {@code wrIdBits} are the connection's work request id bits. */
    void bind(QueuePair qp, long wrIdBits, RdmaConnection owner);

    /** The loop attached the connection (loop thread): its messages may arrive now. */
    void attach();

    /** @return the credits granted to the peer at the start */
    int initialCredits();

    /** @return the most credits the peer can be granted (no growth when equal to {@link #initialCredits}) */
    int maxCredits();

    /** @return the most data messages that can arrive before one is handled (the credits ever granted) */
    int waitingCapacity();

    /** Posts the first receives (the ones the hello announces, and the reserve). */
    void postInitial() throws IOException;

    /** @return the buffer of receive {@code slot} */
    MemorySegment segment(int slot);

    /** A receive of this connection completed. */
    void completed();

    /**
     * @return true when a message can arrive although its sender had no credit (a shared queue had a
     *         buffer for it), so the receiver must check; a private queue refuses it (RNR)
     */
    boolean overrunPossible();

    /**
     * Posts receive {@code slot} again, its message handled.
     *
     * @return false when the device refused (the connection must close)
     */
    boolean repost(int slot);

    /** The message in {@code slot} will not be handled (error, closing): its buffer goes back where it belongs. */
    void drop(int slot);

    /**
     * Posts up to {@code n} more receives (the peer ran out of credits).
     *
     * @return how many were added (fewer when the pool ran dry), or -1 when the device refused one
     */
    int grow(int n);

    /** @return receives posted and not completed, which a closing connection waits for (0 with a shared queue) */
    int outstanding();

    /** After the queue pair is destroyed: gives every buffer back and frees the work requests. */
    void close();
}
