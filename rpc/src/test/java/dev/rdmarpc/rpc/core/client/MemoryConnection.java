package dev.rdmarpc.rpc.core.client;

import dev.rdmarpc.rpc.protocol.FrameDescriptor;
import dev.rdmarpc.rpc.protocol.FrameHeader;
import dev.rdmarpc.rpc.transport.Connection;
import dev.rdmarpc.rpc.transport.FrameHandler;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A connection in memory, for the client core's tests without a socket: it keeps a copy of every
 * frame committed to it, and tells its handler (when one is set) of its close.
 */
final class MemoryConnection implements Connection {
    final MemorySegment buffer = Arena.ofAuto().allocate(1 << 16);
    final List<MemorySegment> written = new ArrayList<>();
    FrameHandler handler;
    Throwable closedWith;
    boolean open = true;

    @Override
    public long claim(int frameLength) {
        return open ? 0 : CLOSED;
    }

    @Override
    public long claim(int frameLength, long unsentLimit) {
        return claim(frameLength);
    }

    @Override
    public MemorySegment claimBuffer() {
        return buffer;
    }

    @Override
    public void commit() {
        long length = FrameDescriptor.HEADER_LENGTH + FrameHeader.payloadLength(buffer, 0)
                + FrameHeader.attachmentLength(buffer, 0);
        MemorySegment frame = Arena.ofAuto().allocate(length);
        MemorySegment.copy(buffer, 0, frame, 0, length);
        written.add(frame);
    }

    @Override
    public void abort() {
    }

    @Override
    public boolean isOpen() {
        return open;
    }

    @Override
    public boolean inEventLoop() {
        return false;
    }

    @Override
    public long tickIntervalNanos() {
        return TimeUnit.MILLISECONDS.toNanos(10);
    }

    @Override
    public InetSocketAddress remoteAddress() {
        return new InetSocketAddress("127.0.0.1", 1);
    }

    @Override
    public InetSocketAddress localAddress() {
        return new InetSocketAddress("127.0.0.1", 2);
    }

    @Override
    public long pendingBytes() {
        return 0;
    }

    @Override
    public void close(Throwable cause) {
        if (open) {
            open = false;
            closedWith = cause;
            handler.onClose(this, cause);
        }
    }

    @Override
    public void closeAfter(MemorySegment lastFrame, Throwable cause) {
        close(cause);
    }

    @Override
    public javax.net.ssl.SSLSession tlsSession() {
        return null;
    }

    @Override
    public void setReadEnabled(boolean enabled) {
    }

    @Override
    public void execute(Runnable task) {
        task.run();
    }

    MemorySegment last() {
        return written.get(written.size() - 1);
    }

    long lastId() {
        return FrameHeader.requestId(last(), 0);
    }
}
