package dev.rdmarpc.rpc.transport.stream;

import dev.rdmarpc.rpc.buffer.PooledBuffer;
import dev.rdmarpc.rpc.transport.Connection;
import dev.rdmarpc.rpc.transport.ZeroCopySend;
import java.io.IOException;
import java.lang.foreign.MemorySegment;

/**
 * The send side of the {@link Connection} and {@link ZeroCopySend} contracts as a {@link TcpConnection}
 * answers them: every claim, commit and partial frame is its {@link TcpSendRing}'s. Kept apart so that the connection
 * class holds its lifecycle, reading and ticks.
 */
abstract class RingConnection implements Connection, ZeroCopySend {
    /** @return the connection's send ring */
    abstract TcpSendRing ring();

    /** @return the receive buffer whose frame is being handed to the handler now, or null (loop thread) */
    abstract PooledBuffer dispatching();

    /** Closes at once, on the loop thread. */
    abstract void closeNow(Throwable cause);

    @Override
    public long claim(int frameLength) {
        return ring().claim(frameLength, Long.MAX_VALUE, 0);
    }

    @Override
    public long claim(int frameLength, long unsentLimit) {
        return ring().claim(frameLength, unsentLimit, 0);
    }

    @Override
    public long claimInPlace(int frameLength, MemorySegment tail, long unsentLimit, long token) {
        return ring().claimInPlace(frameLength, tail, unsentLimit, token);
    }

    @Override
    public long claimFromReceived(int frameLength, MemorySegment src, long offset, int length) {
        if (!inEventLoop()) {
            return UNSUPPORTED;
        }
        return ring().claimFromReceived(frameLength, src, offset, length, dispatching());
    }

    @Override
    public void detachInPlace(long token) {
        long rest = ring().detachInPlace(token);
        if (rest >= 0) {
            closeNow(new IOException("buffer pool exhausted: no buffer for the unsent " + rest
                    + " bytes of an in-place payload whose call ended"));
        }
    }

    @Override
    public MemorySegment claimBuffer() {
        return ring().claimBuffer();
    }

    @Override
    public void commit() {
        ring().commit();
    }

    @Override
    public void abort() {
        ring().abort();
    }

    @Override
    public long claimWithTail(int frameLength, MemorySegment tail, long unsentLimit) {
        return UNSUPPORTED; // a tail that must stay unchanged until answered: TCP sends in place, with a way out
    }

    @Override
    public long pendingBytes() {
        return ring().unsentBytes();
    }

    @Override
    public long commitPartial(int writtenLength) {
        return ring().commitPartial(writtenLength);
    }

    @Override
    public void partialWritten(long token, int writtenLength) {
        ring().partialWritten(token, writtenLength);
    }

    @Override
    public void abandonPartial(long token, Throwable cause) {
        ring().abandonPartial(token);
        close(cause);
    }
}
