package dev.rdmarpc.rpc.transport.tcp;

import dev.rdmarpc.rpc.transport.stream.StreamSocket;
import dev.rdmarpc.rpc.transport.stream.TcpConnection;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;

/** A connection's socket on the TCP transport: a non-blocking {@code SocketChannel} under its loop's selector. */
final class NioSocket implements StreamSocket {
    private final SocketChannel channel;
    private final Selector selector;
    private final InetSocketAddress remote;
    private final InetSocketAddress local;
    private SelectionKey key;

    /** @param channel connected and configured ({@link TcpTransport#configure}) */
    NioSocket(SocketChannel channel, Selector selector) throws IOException {
        this.channel = channel;
        this.selector = selector;
        this.remote = (InetSocketAddress) channel.getRemoteAddress();
        this.local = (InetSocketAddress) channel.getLocalAddress();
    }

    /** @return the channel (tests read its options) */
    SocketChannel channel() {
        return channel;
    }

    @Override
    public void register(TcpConnection connection) throws IOException {
        key = channel.register(selector, SelectionKey.OP_READ, connection);
    }

    @Override
    public void interest(boolean read, boolean write) {
        key.interestOps((read ? SelectionKey.OP_READ : 0) | (write ? SelectionKey.OP_WRITE : 0));
    }

    @Override
    public boolean registered() {
        return key != null && key.isValid();
    }

    @Override
    public InetSocketAddress remoteAddress() {
        return remote;
    }

    @Override
    public InetSocketAddress localAddress() {
        return local;
    }

    @Override
    public int read(ByteBuffer dst) throws IOException {
        return channel.read(dst);
    }

    @Override
    public int write(ByteBuffer src) throws IOException {
        return channel.write(src);
    }

    @Override
    public long write(ByteBuffer[] srcs, int offset, int length) throws IOException {
        return channel.write(srcs, offset, length);
    }

    @Override
    public long write(ByteBuffer[] srcs) throws IOException {
        return channel.write(srcs);
    }

    @Override
    public void shutdownOutput() throws IOException {
        channel.shutdownOutput();
    }

    @Override
    public boolean isOpen() {
        return channel.isOpen();
    }

    @Override
    public void close() throws IOException {
        if (key != null) {
            key.cancel();
        }
        channel.close();
    }

    /** Hands what the selector found ready to the connection. */
    static void ready(SelectionKey key, TcpConnection c) {
        if (key.isValid()) {
            int ops = key.readyOps();
            c.onReady((ops & SelectionKey.OP_WRITE) != 0, (ops & SelectionKey.OP_READ) != 0);
        }
    }
}
