package dev.rdmarpc.rpc;

import dev.rdmarpc.rpc.codec.Codec;
import java.lang.foreign.MemorySegment;

/**
 * A raw call its handler took over ({@link RawCall#defer()}): answered later, from any thread, by one
 * of the {@code respond} methods, once. The request's bytes are not part of it: the handler copies
 * what it needs before it returns (the receive buffer is reused then).
 *
 * <p>Allocation-free: the connection keeps these objects and reuses them, so once a {@code respond}
 * method has returned this object may already stand for another call of the connection; a
 * reference kept past that point must not be used. A deferred call is not stopped by a cancel or
 * its deadline (the handler may check {@link #remainingNanos()}); the connection counts it as a call
 * in flight until it is answered (a graceful close waits for it).
 */
public interface DeferredCall {
    /** @return the request id of the call */
    long requestId();

    /** @return the wire id of the called method */
    int methodId();

    /** @return the time left to the call's deadline (0 or less: passed), {@link Long#MAX_VALUE} for none */
    long remainingNanos();

    /**
     * Answers with {@code length} bytes of {@code src} from {@code offset}, copied into the response
     * frame; as {@link RawCall#respond(MemorySegment, long, int)}, without a response attachment.
     *
     * @throws IllegalStateException when the call was answered already
     */
    void respond(MemorySegment src, long offset, int length);

    /**
     * Answers with {@code value}, encoded by {@code codec} into the response frame.
     *
     * @throws IllegalStateException when the call was answered already
     */
    <T> void respond(Codec<T> codec, T value);

    /**
     * Answers with an error status and message.
     *
     * @param status a status that can travel on the wire ({@link Status#isWire()}), not OK
     * @throws IllegalStateException when the call was answered already
     */
    void respondError(Status status, String message);
}
