package dev.rdmarpc.bench.grpc;

import dev.rdmarpc.bench.load.EchoConnection;
import dev.rdmarpc.bench.load.EchoProtocol;
import dev.rdmarpc.bench.load.EchoServer;
import dev.rdmarpc.bench.load.EchoStack;
import dev.rdmarpc.bench.load.RdmaSettings;
import dev.rdmarpc.bench.load.StackOptions;
import dev.rdmarpc.bench.load.Workload;
import dev.rdmarpc.grpc.RdmarpcChannelBuilder;
import dev.rdmarpc.grpc.RdmarpcServerBuilder;
import dev.rdmarpc.rpc.transport.rdma.RdmaConfig;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * gRPC-java over rdmarpc's gRPC transport ({@link RdmarpcServerBuilder}, {@link RdmarpcChannelBuilder}) on
 * TCP or RDMA: the gRPC baseline's echo service, method descriptors, {@code byte[]} marshaller and calls
 * ({@link GrpcEchoStack}), with rdmarpc's frames on the wire instead of grpc-netty's HTTP/2. Both sides use
 * {@code directExecutor()} and the bench's number of I/O threads; each connection (a gRPC channel) has a
 * transport of its own, as {@link RdmarpcChannelBuilder} makes it. Over RDMA both sides take the settings
 * of native rdmarpc's RDMA stack ({@link RdmaSettings}: device, GID index, completion mode).
 *
 * <p>Loaded with the gRPC baseline from {@code target/grpc-lib}, where the {@code rdmarpc-grpc} jar sits
 * beside gRPC's; rdmarpc's own classes come from the bench's loader.
 */
public final class GrpcRdmarpcEchoStack implements EchoStack {

    private final boolean rdma;

    /** Over TCP. */
    public GrpcRdmarpcEchoStack() {
        this(false);
    }

    /** @param rdma true for rdmarpc's RDMA transport beneath gRPC ({@code rdma(...)} on both builders) */
    public GrpcRdmarpcEchoStack(boolean rdma) {
        this.rdma = rdma;
    }

    @Override
    public String name() {
        return rdma ? "grpc-rdmarpc-rdma" : "grpc-rdmarpc";
    }

    @Override
    public String describe(StackOptions options) {
        String version = ManagedChannel.class.getPackage().getImplementationVersion();
        return "gRPC-java " + (version == null ? "(unknown version)" : version)
                + " over rdmarpc's gRPC transport on " + (rdma ? "RDMA (RC SEND/RECV, "
                + RdmaSettings.apply(options, new RdmaConfig()).loop().idleStrategy() + " completions)" : "TCP")
                + " (RdmarpcServerBuilder, RdmarpcChannelBuilder), byte[] "
                + "marshaller (no protobuf), directExecutor, " + options.ioThreads()
                + " I/O thread(s) per side, async unary calls";
    }

    @Override
    public String describe(StackOptions options, Workload workload) {
        String d = describe(options);
        if (workload != Workload.stream) {
            return d;
        }
        return d.replace(", async unary calls", ", server streaming: onNext of one preallocated byte[] while isReady() "
                + "(setOnReadyHandler), client asyncServerStreamingCall with automatic inbound flow control");
    }

    private static int maxInbound(StackOptions options) {
        return options.maxMessageBytes() + EchoProtocol.HEADER_BYTES + 64;
    }

    @Override
    public EchoServer startServer(InetSocketAddress bindAddress, StackOptions options) throws IOException {
        if (options.tls() != null) {
            throw new IllegalArgumentException("the grpc-rdmarpc stack of the bench runs without TLS");
        }
        Server server;
        try {
            RdmarpcServerBuilder b = RdmarpcServerBuilder.forAddress(bindAddress);
            if (rdma) {
                b.rdma(cfg -> RdmaSettings.apply(options, cfg).threadNamePrefix("grpc-rdmarpc-bench-server"));
            } else {
                b.tcp(cfg -> cfg.loop(l -> l.ioThreads(options.ioThreads())).threadNamePrefix("grpc-rdmarpc-bench-server"));
            }
            server = b.directExecutor()
                    .maxInboundMessageSize(maxInbound(options))
                    .addService(GrpcEchoStack.echoService(options.maxMessageBytes()))
                    .build()
                    .start();
        } catch (IOException | RuntimeException e) {
            throw new IOException("gRPC-over-rdmarpc server cannot listen on " + bindAddress + ": " + e.getMessage(), e);
        }
        InetSocketAddress bound = (InetSocketAddress) server.getListenSockets().get(0);
        return new EchoServer() {
            private final AtomicBoolean closed = new AtomicBoolean();

            @Override
            public InetSocketAddress address() {
                return bound;
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
            }
        };
    }

    @Override
    public EchoConnection connect(InetSocketAddress serverAddress, StackOptions options) throws IOException {
        if (options.tls() != null) {
            throw new IllegalArgumentException("the grpc-rdmarpc stack of the bench runs without TLS");
        }
        RdmarpcChannelBuilder b = RdmarpcChannelBuilder
                .forAddress(serverAddress.getAddress().getHostAddress(), serverAddress.getPort());
        if (rdma) {
            b.rdma(cfg -> RdmaSettings.apply(options, cfg).threadNamePrefix("grpc-rdmarpc-bench-client"));
        } else {
            b.tcp(cfg -> cfg.loop(l -> l.ioThreads(options.ioThreads())).threadNamePrefix("grpc-rdmarpc-bench-client"));
        }
        ManagedChannel channel = b
                .usePlaintext()
                .directExecutor()
                .maxInboundMessageSize(maxInbound(options))
                .build();
        GrpcEchoStack.awaitReady(channel, serverAddress, false);
        return new GrpcEchoStack.GrpcConnection(channel);
    }
}
