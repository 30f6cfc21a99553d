package dev.rdmarpc.bench.netty;

import dev.rdmarpc.bench.load.CallListener;
import dev.rdmarpc.bench.load.EchoCaller;
import dev.rdmarpc.bench.load.EchoConnection;
import dev.rdmarpc.bench.load.EchoProtocol;
import dev.rdmarpc.bench.load.EchoServer;
import dev.rdmarpc.bench.load.EchoStack;
import dev.rdmarpc.bench.load.StackOptions;
import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.handler.codec.LengthFieldBasedFrameDecoder;
import io.netty.handler.flush.FlushConsolidationHandler;
import io.netty.util.Version;
import io.netty.util.concurrent.DefaultThreadFactory;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.ArrayDeque;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The Netty baseline: a plain length-prefixed echo on Netty 4.1's NIO transport, written as a competent
 * Netty user would write it, with no RPC layer on top. It shows the ceiling of plain Java NIO on the
 * machine, next to which rdmarpc's TCP transport (also {@code java.nio} selectors) can be read.
 *
 * <p>Wire format: each message is a 4-byte big-endian length (Netty's default byte order) followed by
 * that many payload bytes, the payload following {@link EchoProtocol}. The server's pipeline is a
 * {@link LengthFieldBasedFrameDecoder} then a handler that writes the frame (prefix included, a retained
 * slice of the read buffer, no copy) straight back; when the request asks for another response size it
 * answers with a 4-byte prefix and a slice of a shared zero-filled buffer. A request asking for a size
 * above the server's limit closes the connection (the format has no error status).
 *
 * <p>Client: all connections of one stack share one {@link NioEventLoopGroup} of {@code ioThreads}
 * threads, as rdmarpc's client transport does. Each connection is an in-order echo, so a FIFO of the
 * callers waiting on it matches responses to calls; the FIFO is touched only on the connection's event
 * loop (a call made from another thread is handed to the loop first, so that queue order and write order
 * agree). Each caller owns a pooled direct buffer holding its framed request, and a call writes a
 * retained duplicate of it (no copy).
 *
 * <p>Flushes: both pipelines start with Netty's {@link FlushConsolidationHandler} (its defaults: at most
 * 256 flushes consolidated, none outside a read). A write made while a read is in progress, which is a
 * server's every echo and a closed-loop client's every next call, is flushed once at the end of that read
 * ({@code channelReadComplete}); a write made outside a read (a caller's first call, an open loop's paced
 * calls) is flushed at once. This is the closest Netty idiom to rdmarpc's flush once per loop iteration.
 *
 * <p>Plain text only: it refuses {@link StackOptions#tls()} (its frames would need an {@code SslHandler} on
 * both pipelines, which it does not have); the gRPC baseline runs over TLS.
 *
 * <p>Loaded by the bench at run time from {@code target/netty-lib} with a class loader of its own, so
 * Netty's jars never join the bench's module graph.
 */
public final class NettyEchoStack implements EchoStack {
    /** Bytes of the length prefix in front of every message. */
    static final int PREFIX_BYTES = 4;

    private EventLoopGroup clientGroup;

    public NettyEchoStack() {
    }

    @Override
    public String name() {
        return "netty-nio";
    }

    @Override
    public String describe(StackOptions options) {
        Version v = Version.identify(NettyEchoStack.class.getClassLoader()).get("netty-transport");
        return "Netty " + (v == null ? "(unknown version)" : v.artifactVersion())
                + " NIO, plain echo of 4-byte length-prefixed frames (LengthFieldBasedFrameDecoder), pooled direct "
                + "buffers, flushes consolidated per read (FlushConsolidationHandler), "
                + options.ioThreads() + " event-loop thread(s) per side";
    }

    @Override
    public EchoServer startServer(InetSocketAddress bindAddress, StackOptions options) throws IOException {
        refuseTls(options);
        // One group accepts and serves: the same number of threads as rdmarpc's server.
        EventLoopGroup group = new NioEventLoopGroup(options.ioThreads(),
                new DefaultThreadFactory("netty-bench-server-io", true));
        Filler filler = new Filler(options.maxMessageBytes());
        ServerBootstrap b = new ServerBootstrap()
                .group(group)
                .channel(NioServerSocketChannel.class)
                .childOption(ChannelOption.TCP_NODELAY, true)
                .childOption(ChannelOption.ALLOCATOR, PooledByteBufAllocator.DEFAULT)
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        ch.pipeline().addLast(new FlushConsolidationHandler(),
                                new LengthFieldBasedFrameDecoder(PREFIX_BYTES + options.maxMessageBytes(), 0, PREFIX_BYTES),
                                new EchoHandler(filler));
                    }
                });
        ChannelFuture bound = b.bind(bindAddress).awaitUninterruptibly();
        if (!bound.isSuccess()) {
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly(5, TimeUnit.SECONDS);
            throw new IOException("Netty echo server cannot listen on " + bindAddress + ": " + message(bound.cause()),
                    bound.cause());
        }
        return new NettyServer(bound.channel(), group, filler);
    }

    @Override
    public synchronized EchoConnection connect(InetSocketAddress serverAddress, StackOptions options) throws IOException {
        refuseTls(options);
        if (clientGroup == null) {
            clientGroup = new NioEventLoopGroup(options.ioThreads(), new DefaultThreadFactory("netty-bench-client-io", true));
        }
        NettyConnection connection = new NettyConnection();
        Bootstrap b = new Bootstrap()
                .group(clientGroup)
                .channel(NioSocketChannel.class)
                .option(ChannelOption.TCP_NODELAY, true)
                .option(ChannelOption.ALLOCATOR, PooledByteBufAllocator.DEFAULT)
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, 10_000)
                .handler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        // The client only needs the payload's length: strip the prefix.
                        ch.pipeline().addLast(new FlushConsolidationHandler(),
                                new LengthFieldBasedFrameDecoder(PREFIX_BYTES + options.maxMessageBytes(), 0, PREFIX_BYTES,
                                        0, PREFIX_BYTES),
                                connection);
                    }
                });
        ChannelFuture connected = b.connect(serverAddress);
        if (!connected.awaitUninterruptibly(15, TimeUnit.SECONDS) || !connected.isSuccess()) {
            connected.channel().close();
            throw new IOException("cannot connect to the Netty echo server at " + serverAddress + ": "
                    + (connected.isDone() ? message(connected.cause()) : "no answer within 15 s"), connected.cause());
        }
        connection.channel = connected.channel();
        return connection;
    }

    @Override
    public synchronized void close() {
        if (clientGroup != null) {
            clientGroup.shutdownGracefully(0, 2, TimeUnit.SECONDS).awaitUninterruptibly(5, TimeUnit.SECONDS);
            clientGroup = null;
        }
    }

    /** The Netty baseline is a plain-text echo: TLS asked of it is an error, not silently left out. */
    private static void refuseTls(StackOptions options) {
        if (options.tls() != null) {
            throw new IllegalArgumentException("the Netty baseline has no TLS (use the gRPC baseline to compare over TLS)");
        }
    }

    private static String message(Throwable e) {
        if (e == null) {
            return "unknown cause";
        }
        return e.getMessage() == null || e.getMessage().isBlank() ? e.getClass().getSimpleName() : e.getMessage();
    }

    /**
     * The bytes of responses whose size differs from the request's: one zero-filled direct buffer per
     * server, allocated at its first use (a server may allow large messages that no run asks for) and
     * shared by its event loops through retained slices.
     */
    private static final class Filler {
        private final int size;
        private ByteBuf bytes;
        private boolean released;

        Filler(int size) {
            this.size = size;
        }

        /** A retained slice of {@code length} bytes, or {@code null} once the server has closed. */
        synchronized ByteBuf slice(int length) {
            if (released) {
                return null;
            }
            if (bytes == null) {
                bytes = Unpooled.directBuffer(size, size).writeZero(size);
            }
            return bytes.retainedSlice(0, length);
        }

        synchronized void release() {
            if (!released && bytes != null) {
                bytes.release();
            }
            released = true;
        }
    }

    /** The server's echo, one per connection; runs on the connection's event loop. */
    private static final class EchoHandler extends ChannelInboundHandlerAdapter {
        private final Filler filler;

        EchoHandler(Filler filler) {
            this.filler = filler;
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ByteBuf frame = (ByteBuf) msg;
            int length = frame.readableBytes() - PREFIX_BYTES;
            int wanted = length >= EchoProtocol.HEADER_BYTES ? frame.getIntLE(frame.readerIndex() + PREFIX_BYTES) : length;
            if (wanted == length) {
                ctx.writeAndFlush(frame, ctx.voidPromise());
                return;
            }
            frame.release();
            ByteBuf body = wanted < 0 || wanted > filler.size ? null : filler.slice(wanted);
            if (body == null) {
                ctx.close(); // out of range: the format has no error status
                return;
            }
            ctx.write(ctx.alloc().directBuffer(PREFIX_BYTES).writeInt(wanted), ctx.voidPromise());
            ctx.writeAndFlush(body, ctx.voidPromise());
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            ctx.close(); // a frame above the limit, a reset by the peer: drop the connection
        }
    }

    private static final class NettyServer implements EchoServer {
        private final Channel listener;
        private final EventLoopGroup group;
        private final Filler filler;
        private final AtomicBoolean closed = new AtomicBoolean();

        NettyServer(Channel listener, EventLoopGroup group, Filler filler) {
            this.listener = listener;
            this.group = group;
            this.filler = filler;
        }

        @Override
        public InetSocketAddress address() {
            return (InetSocketAddress) listener.localAddress();
        }

        @Override
        public void close() {
            if (!closed.compareAndSet(false, true)) {
                return;
            }
            listener.close().awaitUninterruptibly(5, TimeUnit.SECONDS);
            // Shutting the group down closes the connections it serves.
            group.shutdownGracefully(0, 2, TimeUnit.SECONDS).awaitUninterruptibly(5, TimeUnit.SECONDS);
            filler.release();
        }
    }

    /**
     * One client connection and the last handler of its pipeline: each response (a frame without its
     * prefix) completes the oldest caller waiting. {@link #pending} is touched only on the channel's event loop.
     */
    private static final class NettyConnection extends ChannelInboundHandlerAdapter implements EchoConnection {
        private final ArrayDeque<NettyCaller> pending = new ArrayDeque<>();
        private final AtomicBoolean closed = new AtomicBoolean();
        private volatile Channel channel;

        @Override
        public EchoCaller newCaller(int requestBytes, int responseBytes) {
            return new NettyCaller(this, requestBytes, responseBytes);
        }

        /** On the event loop: queue the caller, then write its request (queue order is write order). */
        void send(NettyCaller caller) {
            Channel ch = channel;
            if (!ch.isActive()) {
                caller.fail(new IOException("the Netty echo connection is closed"));
                return;
            }
            pending.add(caller);
            ch.writeAndFlush(caller.request.retainedDuplicate(), ch.voidPromise());
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ByteBuf frame = (ByteBuf) msg;
            int length = frame.readableBytes();
            frame.release();
            NettyCaller caller = pending.poll();
            if (caller == null) {
                ctx.close(); // an answer nobody asked for: the echo is broken
                return;
            }
            caller.complete(length);
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            IOException closed = null;
            NettyCaller caller;
            while ((caller = pending.poll()) != null) {
                if (closed == null) {
                    closed = new IOException("the Netty echo server closed the connection");
                }
                caller.fail(closed);
            }
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            ctx.close(); // channelInactive fails the calls waiting
        }

        @Override
        public void close() {
            if (closed.compareAndSet(false, true)) {
                channel.close().awaitUninterruptibly(5, TimeUnit.SECONDS);
            }
        }
    }

    /** One call at a time over one connection; runs itself on the event loop when called from elsewhere. */
    private static final class NettyCaller implements EchoCaller, Runnable {
        private final NettyConnection connection;
        private final ByteBuf request;
        private final int expected;
        private CallListener listener;

        NettyCaller(NettyConnection connection, int requestBytes, int responseBytes) {
            this.connection = connection;
            this.expected = responseBytes;
            this.request = PooledByteBufAllocator.DEFAULT.directBuffer(PREFIX_BYTES + requestBytes)
                    .writeInt(requestBytes)
                    .writeBytes(EchoProtocol.newRequest(requestBytes, responseBytes));
        }

        @Override
        public void call(CallListener listener) {
            this.listener = listener;
            EventLoop loop = connection.channel.eventLoop();
            if (loop.inEventLoop()) {
                connection.send(this);
            } else {
                loop.execute(this);
            }
        }

        /** The hand-off to the event loop of a call made from another thread. */
        @Override
        public void run() {
            connection.send(this);
        }

        void complete(int length) {
            if (length == expected) {
                listener.onResponse();
            } else {
                listener.onFailure(new IllegalStateException("Netty echo answered " + length + " bytes, expected " + expected));
            }
        }

        void fail(Throwable cause) {
            listener.onFailure(cause);
        }

        @Override
        public void close() {
            request.release();
        }
    }
}
