package dev.rdmarpc.rpc.transport.stream;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ByteChannel;
import java.nio.channels.GatheringByteChannel;
import java.nio.channels.ReadableByteChannel;

/**
 * The socket itself: a non-blocking {@code SocketChannel}, or any channel that reads and writes as
 * one does (a {@code PolledSocket} of a loop that polls raw descriptors).
 */
final class PlainWire implements Wire {
    private final ReadableByteChannel in;
    private final GatheringByteChannel out;

    <C extends ByteChannel & GatheringByteChannel> PlainWire(C channel) {
        this(channel, channel);
    }

    /** {@code in} and {@code out} are the same socket, seen as a reader and a gathering writer. */
    PlainWire(ReadableByteChannel in, GatheringByteChannel out) {
        this.in = in;
        this.out = out;
    }

    @Override
    public int read(ByteBuffer dst) throws IOException {
        return in.read(dst);
    }

    @Override
    public long write(ByteBuffer[] srcs, int offset, int length) throws IOException {
        return length == 1 ? out.write(srcs[offset]) : out.write(srcs, offset, length);
    }

    @Override
    public boolean flushPending() {
        return true;
    }

    @Override
    public boolean hasPendingOutput() {
        return false;
    }

    @Override
    public boolean ready() {
        return true;
    }

    @Override
    public boolean hasBufferedInput() {
        return false;
    }
}
