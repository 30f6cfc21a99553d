package dev.rdmarpc.bench.grpc;

import dev.rdmarpc.bench.load.CallListener;
import dev.rdmarpc.bench.load.EchoCaller;
import dev.rdmarpc.bench.load.EchoConnection;
import dev.rdmarpc.bench.load.EchoProtocol;
import dev.rdmarpc.bench.load.EchoServer;
import dev.rdmarpc.bench.load.EchoStack;
import dev.rdmarpc.bench.load.StackOptions;
import io.grpc.CallOptions;
import io.grpc.ConnectivityState;
import io.grpc.Drainable;
import io.grpc.KnownLength;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import io.grpc.Server;
import io.grpc.ServerServiceDefinition;
import io.grpc.Status;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.nio.NioEventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.socket.nio.NioServerSocketChannel;
import io.grpc.netty.shaded.io.netty.channel.socket.nio.NioSocketChannel;
import io.grpc.netty.shaded.io.netty.util.concurrent.DefaultThreadFactory;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.ServerCalls;
import io.grpc.stub.StreamObserver;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The gRPC-java baseline: the same echo contract as rdmarpc's, served and called through gRPC-java with
 * grpc-netty-shaded on Netty's NIO transport (the selector mechanism rdmarpc's TCP transport uses too).
 *
 * <p>No protobuf: a hand-made {@link MethodDescriptor} with a {@code byte[]} marshaller whose stream is
 * {@link KnownLength} and {@link Drainable}, as protobuf's own marshaller is, so gRPC frames it without
 * an extra buffer. Calls go through {@link ClientCalls#asyncUnaryCall}, the path of a generated async
 * stub; both sides use {@code directExecutor()} and the same number of event-loop threads as rdmarpc.
 *
 * <p>Loaded by the bench at run time from {@code target/grpc-lib} with a class loader of its own, so
 * gRPC's jars never join the bench's module graph.
 */
public final class GrpcEchoStack implements EchoStack {
    static final String SERVICE = "rdmarpc.bench.Echo";

    static final MethodDescriptor.Marshaller<byte[]> BYTES = new MethodDescriptor.Marshaller<>() {
        @Override
        public InputStream stream(byte[] value) {
            return new BytesStream(value);
        }

        @Override
        public byte[] parse(InputStream stream) {
            try {
                if (stream instanceof KnownLength) {
                    int n = stream.available();
                    byte[] bytes = new byte[n];
                    if (stream.readNBytes(bytes, 0, n) != n) {
                        throw new IOException("short message");
                    }
                    return bytes;
                }
                return stream.readAllBytes();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    };

    static final MethodDescriptor<byte[], byte[]> ECHO = MethodDescriptor.<byte[], byte[]>newBuilder()
            .setType(MethodDescriptor.MethodType.UNARY)
            .setFullMethodName(MethodDescriptor.generateFullMethodName(SERVICE, "Echo"))
            .setRequestMarshaller(BYTES)
            .setResponseMarshaller(BYTES)
            .build();

    private EventLoopGroup clientGroup;

    public GrpcEchoStack() {
    }

    @Override
    public String name() {
        return "grpc-java";
    }

    @Override
    public String describe(StackOptions options) {
        String version = ManagedChannel.class.getPackage().getImplementationVersion();
        return "gRPC-java " + (version == null ? "(unknown version)" : version)
                + ", grpc-netty-shaded on Netty NIO, byte[] marshaller (no protobuf), directExecutor, "
                + options.ioThreads() + " event-loop thread(s) per side, async unary calls";
    }

    @Override
    public EchoServer startServer(InetSocketAddress bindAddress, StackOptions options) throws IOException {
        EventLoopGroup boss = new NioEventLoopGroup(1, new DefaultThreadFactory("grpc-bench-boss", true));
        EventLoopGroup workers = new NioEventLoopGroup(options.ioThreads(),
                new DefaultThreadFactory("grpc-bench-server-io", true));
        int maxMessage = options.maxMessageBytes();
        ServerServiceDefinition service = ServerServiceDefinition.builder(SERVICE)
                .addMethod(ECHO, ServerCalls.asyncUnaryCall((byte[] request, StreamObserver<byte[]> response) -> {
                    int n = EchoProtocol.responseBytes(request);
                    if (n < 0 || n > maxMessage) {
                        response.onError(Status.INVALID_ARGUMENT
                                .withDescription("response size " + n + " out of range").asRuntimeException());
                        return;
                    }
                    response.onNext(n == request.length ? request : new byte[n]);
                    response.onCompleted();
                }))
                .build();
        Server server;
        try {
            server = NettyServerBuilder.forAddress(bindAddress)
                    .channelType(NioServerSocketChannel.class)
                    .bossEventLoopGroup(boss)
                    .workerEventLoopGroup(workers)
                    .directExecutor()
                    .maxInboundMessageSize(maxMessage + EchoProtocol.HEADER_BYTES + 64)
                    .addService(service)
                    .build()
                    .start();
        } catch (IOException | RuntimeException e) {
            boss.shutdownGracefully(0, 1, TimeUnit.SECONDS);
            workers.shutdownGracefully(0, 1, TimeUnit.SECONDS);
            throw new IOException("gRPC server cannot listen on " + bindAddress + ": " + e.getMessage(), e);
        }
        InetSocketAddress bound = (InetSocketAddress) server.getListenSockets().get(0);
        return new GrpcServer(server, boss, workers, bound);
    }

    @Override
    public synchronized EchoConnection connect(InetSocketAddress serverAddress, StackOptions options) throws IOException {
        if (clientGroup == null) {
            clientGroup = new NioEventLoopGroup(options.ioThreads(), new DefaultThreadFactory("grpc-bench-client-io", true));
        }
        ManagedChannel channel = NettyChannelBuilder.forAddress(serverAddress)
                .usePlaintext()
                .channelType(NioSocketChannel.class)
                .eventLoopGroup(clientGroup)
                .directExecutor()
                .maxInboundMessageSize(options.maxMessageBytes() + EchoProtocol.HEADER_BYTES + 64)
                .build();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        ConnectivityState state = channel.getState(true);
        while (state != ConnectivityState.READY) {
            if (state == ConnectivityState.TRANSIENT_FAILURE || System.nanoTime() > deadline) {
                channel.shutdownNow();
                throw new IOException("cannot connect to the gRPC echo server at " + serverAddress
                        + (state == ConnectivityState.TRANSIENT_FAILURE ? " (connection failed)" : " within 10 s"));
            }
            try {
                Thread.sleep(5);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                channel.shutdownNow();
                throw new IOException("interrupted while connecting", e);
            }
            state = channel.getState(true);
        }
        return new GrpcConnection(channel);
    }

    @Override
    public synchronized void close() {
        if (clientGroup != null) {
            clientGroup.shutdownGracefully(0, 2, TimeUnit.SECONDS).awaitUninterruptibly(5, TimeUnit.SECONDS);
            clientGroup = null;
        }
    }

    /** A {@code byte[]} as gRPC likes a message stream: length known, drained in one write. */
    private static final class BytesStream extends ByteArrayInputStream implements KnownLength, Drainable {
        BytesStream(byte[] bytes) {
            super(bytes);
        }

        @Override
        public int drainTo(OutputStream target) throws IOException {
            int n = count - pos;
            target.write(buf, pos, n);
            pos = count;
            return n;
        }
    }

    private static final class GrpcServer implements EchoServer {
        private final Server server;
        private final EventLoopGroup boss;
        private final EventLoopGroup workers;
        private final InetSocketAddress address;
        private final AtomicBoolean closed = new AtomicBoolean();

        GrpcServer(Server server, EventLoopGroup boss, EventLoopGroup workers, InetSocketAddress address) {
            this.server = server;
            this.boss = boss;
            this.workers = workers;
            this.address = address;
        }

        @Override
        public InetSocketAddress address() {
            return address;
        }

        @Override
        public void close() {
            if (!closed.compareAndSet(false, true)) {
                return;
            }
            server.shutdownNow();
            try {
                server.awaitTermination(5, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            workers.shutdownGracefully(0, 2, TimeUnit.SECONDS).awaitUninterruptibly(5, TimeUnit.SECONDS);
            boss.shutdownGracefully(0, 2, TimeUnit.SECONDS).awaitUninterruptibly(5, TimeUnit.SECONDS);
        }
    }

    private static final class GrpcConnection implements EchoConnection {
        private final ManagedChannel channel;
        private final AtomicBoolean closed = new AtomicBoolean();

        GrpcConnection(ManagedChannel channel) {
            this.channel = channel;
        }

        @Override
        public EchoCaller newCaller(int requestBytes, int responseBytes) {
            return new GrpcCaller(channel, EchoProtocol.newRequest(requestBytes, responseBytes), responseBytes);
        }

        @Override
        public void close() {
            if (!closed.compareAndSet(false, true)) {
                return;
            }
            channel.shutdownNow();
            try {
                channel.awaitTermination(5, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** One outstanding call at a time; the caller is its own response observer. */
    private static final class GrpcCaller implements EchoCaller, StreamObserver<byte[]> {
        private final ManagedChannel channel;
        private final byte[] request;
        private final int expected;
        private CallListener listener;
        private int received;

        GrpcCaller(ManagedChannel channel, byte[] request, int expected) {
            this.channel = channel;
            this.request = request;
            this.expected = expected;
        }

        @Override
        public void call(CallListener listener) {
            this.listener = listener;
            this.received = -1;
            ClientCalls.asyncUnaryCall(channel.newCall(ECHO, CallOptions.DEFAULT), request, this);
        }

        @Override
        public void onNext(byte[] value) {
            received = value.length;
        }

        @Override
        public void onError(Throwable t) {
            listener.onFailure(t);
        }

        @Override
        public void onCompleted() {
            if (received == expected) {
                listener.onResponse();
            } else {
                listener.onFailure(new IllegalStateException(
                        "gRPC echo answered " + received + " bytes, expected " + expected));
            }
        }

        @Override
        public void close() {
        }
    }
}
