package dev.rdmarpc.rpc.transport.rdma;

import dev.rdmarpc.rpc.transport.Connection;
import dev.rdmarpc.rpc.transport.ZeroCopySend;
import java.lang.foreign.MemorySegment;

/**
 * The send side of the {@link Connection} and {@link ZeroCopySend} contracts as an
 * {@link RdmaConnection} answers them: every claim and commit is its {@link RdmaSender}'s. Of the
 * zero-copy ways RDMA offers one, a tail sent from registered memory ({@link #claimWithTail}); it
 * sends no tail in place with a way out, none from a received frame, and no partial frame. Kept apart
 * so that the connection class holds its states, completions and closing.
 */
abstract class SenderConnection implements Connection, ZeroCopySend {
    /** @return the connection's sender */
    abstract RdmaSender sender();

    @Override
    public long claim(int frameLength) {
        return sender().claim(frameLength, Long.MAX_VALUE);
    }

    @Override
    public long claim(int frameLength, long unsentLimit) {
        return sender().claim(frameLength, unsentLimit);
    }

    @Override
    public long claimWithTail(int frameLength, MemorySegment tail, long unsentLimit) {
        return sender().claimWithTail(frameLength, tail, unsentLimit);
    }

    @Override
    public long claimInPlace(int frameLength, MemorySegment tail, long unsentLimit, long token) {
        return UNSUPPORTED;
    }

    @Override
    public void detachInPlace(long token) {
        // nothing is ever sent in place with a way out
    }

    @Override
    public long claimFromReceived(int frameLength, MemorySegment src, long offset, int length) {
        return UNSUPPORTED;
    }

    @Override
    public long commitPartial(int writtenLength) {
        return -1;
    }

    @Override
    public void partialWritten(long token, int writtenLength) {
        // no partial frame is ever committed
    }

    @Override
    public void abandonPartial(long token, Throwable cause) {
        close(cause);
    }

    @Override
    public MemorySegment claimBuffer() {
        return sender().claimBuffer();
    }

    @Override
    public void commit() {
        sender().commit();
    }

    @Override
    public void abort() {
        sender().abort();
    }

    @Override
    public long pendingBytes() {
        return sender().unsentBytes();
    }
}
