package dev.rdmarpc.rpc.transport.tcp;

import dev.rdmarpc.rpc.transport.Connection;
import java.lang.foreign.MemorySegment;

/**
 * The send side of the {@link Connection} contract as a {@link TcpConnection} answers it: every
 * claim, commit and held frame is its {@link TcpSendRing}'s. Kept apart so that the connection
 * class holds its lifecycle, reading and ticks.
 */
abstract class RingConnection implements Connection {
    /** @return the connection's send ring */
    abstract TcpSendRing ring();

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
    public long commitHeld(int readyLength) {
        return ring().commitHeld(readyLength);
    }

    @Override
    public void releaseHeld(long token, int readyLength) {
        ring().releaseHeld(token, readyLength);
    }

    @Override
    public void abandonHeld(long token, Throwable cause) {
        ring().abandonHeld(token);
        close(cause);
    }
}
