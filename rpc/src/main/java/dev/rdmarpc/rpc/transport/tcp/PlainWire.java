package dev.rdmarpc.rpc.transport.tcp;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;

/** The socket itself. */
final class PlainWire implements Wire {
    private final SocketChannel channel;

    PlainWire(SocketChannel channel) {
        this.channel = channel;
    }

    @Override
    public int read(ByteBuffer dst) throws IOException {
        return channel.read(dst);
    }

    @Override
    public long write(ByteBuffer[] srcs, int offset, int length) throws IOException {
        return length == 1 ? channel.write(srcs[offset]) : channel.write(srcs, offset, length);
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
