package dev.rdmarpc.bench.grpc;

import dev.rdmarpc.bench.load.CallListener;
import dev.rdmarpc.bench.load.EchoCaller;
import dev.rdmarpc.bench.load.EchoConnection;
import dev.rdmarpc.bench.load.EchoProtocol;
import dev.rdmarpc.bench.load.EchoServer;
import dev.rdmarpc.bench.load.EchoStack;
import dev.rdmarpc.bench.load.StackOptions;
import dev.rdmarpc.bench.load.StreamCall;
import dev.rdmarpc.bench.load.StreamListener;
import dev.rdmarpc.bench.load.TlsSettings;
import dev.rdmarpc.bench.load.Workload;
import io.grpc.CallOptions;
import io.grpc.ConnectivityState;
import io.grpc.Drainable;
import io.grpc.Grpc;
import io.grpc.KnownLength;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Server;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.ServerInterceptors;
import io.grpc.ServerServiceDefinition;
import io.grpc.Status;
import io.grpc.netty.shaded.io.grpc.netty.GrpcSslContexts;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.netty.shaded.io.netty.handler.ssl.SslContext;
import io.grpc.netty.shaded.io.netty.handler.ssl.SslContextBuilder;
import io.grpc.netty.shaded.io.netty.handler.ssl.SslProvider;
import io.grpc.netty.shaded.io.netty.handler.ssl.SupportedCipherSuiteFilter;
import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.nio.NioEventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.socket.nio.NioServerSocketChannel;
import io.grpc.netty.shaded.io.netty.channel.socket.nio.NioSocketChannel;
import io.grpc.netty.shaded.io.netty.util.concurrent.DefaultThreadFactory;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.ClientResponseObserver;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.ServerCalls;
import io.grpc.stub.StreamObserver;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Files;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLSession;
import javax.net.ssl.TrustManager;
import javax.net.ssl.TrustManagerFactory;
import javax.net.ssl.X509ExtendedTrustManager;
import javax.net.ssl.X509TrustManager;

/**
 * The gRPC-java baseline: the same echo contract as rdmarpc's, served and called through gRPC-java with
 * grpc-netty-shaded on Netty's NIO transport (the selector mechanism rdmarpc's TCP transport uses too).
 *
 * <p>No protobuf: a hand-made {@link MethodDescriptor} with a {@code byte[]} marshaller whose stream is
 * {@link KnownLength} and {@link Drainable}, as protobuf's own marshaller is, so gRPC frames it without
 * an extra buffer. Calls go through {@link ClientCalls#asyncUnaryCall}, the path of a generated async
 * stub; both sides use {@code directExecutor()} and the same number of event-loop threads as rdmarpc.
 *
 * <p>The streaming workload is a server-streaming method with the same {@code byte[]} marshaller, written
 * the way gRPC-java's manual flow-control example writes a server stream: the method keeps one
 * preallocated payload and, from {@link ServerCallStreamObserver#setOnReadyHandler}, calls {@code onNext}
 * while {@link ServerCallStreamObserver#isReady()} and the call is not cancelled, so it never queues more
 * than gRPC's flow control lets it (no unbounded {@code onNext}). The client reads through
 * {@link ClientCalls#asyncServerStreamingCall}, the path of a generated async stub, with a
 * {@link ClientResponseObserver} on the event loop ({@code directExecutor}): gRPC's automatic inbound flow
 * control asks for the next message as each is delivered, inline, while HTTP/2's window (gRPC's default,
 * auto-tuned) bounds what is in flight. Chosen over the blocking iterator
 * ({@code blockingServerStreamingCall}), which hands every message from the event loop to the reading
 * thread through a queue and a wake-up: the callback path does less work per message, as the unary
 * workload's async calls do. It cancels with {@link ClientCallStreamObserver#cancel}.
 *
 * <p>With {@link StackOptions#tls()}, both sides run TLS {@value TlsSettings#PROTOCOL} with Netty's JDK
 * provider ({@link SslProvider#JDK}, the JDK's {@code SSLEngine}, as rdmarpc uses), not the OpenSSL
 * (tcnative) one grpc-netty-shaded would pick by default, and with the JDK's own TLS 1.3 cipher suites in
 * the JDK's order of preference (gRPC's list would prefer AES-128), so both stacks negotiate the same cipher
 * suite with the same code. A server interceptor notes what the first call's connection negotiated.
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

    /** Server streaming: one request ({@link EchoProtocol#streamRequest}), then messages of its size. */
    static final MethodDescriptor<byte[], byte[]> STREAM = MethodDescriptor.<byte[], byte[]>newBuilder()
            .setType(MethodDescriptor.MethodType.SERVER_STREAMING)
            .setFullMethodName(MethodDescriptor.generateFullMethodName(SERVICE, "Stream"))
            .setRequestMarshaller(BYTES)
            .setResponseMarshaller(BYTES)
            .build();

    /**
     * gRPC's server logs a warning with a stack trace for every stream a client cancels while the server
     * has writes queued for it ("Stream closed before write could take place"): at the end of every stream
     * cell, as the bench cancels its streams. This filter drops those records and nothing else; the logger
     * is held so that the filter stays set.
     */
    private static final java.util.logging.Logger SERVER_HANDLER_LOG = quietCancelledWrites(
            java.util.logging.Logger.getLogger("io.grpc.netty.shaded.io.grpc.netty.NettyServerHandler"));

    private static java.util.logging.Logger quietCancelledWrites(java.util.logging.Logger log) {
        log.setFilter(r -> !(r.getThrown() != null && String.valueOf(r.getThrown().getMessage())
                .startsWith("Stream closed before write could take place")));
        return log;
    }

    private EventLoopGroup clientGroup;
    /** The client side's TLS context, made with the client group; null without TLS. */
    private SslContext clientTls;
    /** What the first TLS call to a server of this stack arrived over; written once by an event loop. */
    private volatile String tlsNegotiated;

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
                + options.ioThreads() + " event-loop thread(s) per side, async unary calls"
                + (options.tls() == null ? "" : ", TLS " + TlsSettings.PROTOCOL + " (Netty's JDK provider: the JDK's SSLEngine)");
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

    @Override
    public String tlsNegotiated() {
        return tlsNegotiated;
    }

    /** A server's TLS context: the settings' certificate chain and key, JDK provider, TLS 1.3 only. */
    static SslContext serverTls(TlsSettings tls) throws SSLException {
        if (!tls.canServe()) {
            throw new IllegalArgumentException("TLS without a server certificate and key: cannot serve");
        }
        SslContextBuilder b = SslContextBuilder.forServer(tls.certificateChain().toFile(), tls.privateKey().toFile());
        return GrpcSslContexts.configure(b, SslProvider.JDK).protocols(TlsSettings.PROTOCOL)
                .ciphers(jdkCipherSuites(), SupportedCipherSuiteFilter.INSTANCE).build();
    }

    /** The JDK's default TLS 1.3 cipher suites, in its order of preference (the order rdmarpc's engines use). */
    static List<String> jdkCipherSuites() {
        try {
            return Arrays.stream(SSLContext.getDefault().getDefaultSSLParameters().getCipherSuites())
                    .filter(c -> c.startsWith("TLS_AES_") || c.startsWith("TLS_CHACHA20_"))
                    .toList();
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("the JDK has no default TLS context: " + e.getMessage(), e);
        }
    }

    /**
     * A client's TLS context: the settings' trusted issuers (or the JDK's), JDK provider, TLS 1.3 only.
     * gRPC always asks the engine to check the server's name; without {@code verifyHostname} the trust
     * manager checks the chain only.
     */
    static SslContext clientTls(TlsSettings tls) throws SSLException {
        SslContextBuilder b = GrpcSslContexts.configure(SslContextBuilder.forClient(), SslProvider.JDK)
                .protocols(TlsSettings.PROTOCOL).ciphers(jdkCipherSuites(), SupportedCipherSuiteFilter.INSTANCE);
        if (tls.verifyHostname()) {
            if (tls.trustedCertificates() != null) {
                b.trustManager(tls.trustedCertificates().toFile());
            }
        } else {
            b.trustManager(new ChainOnlyTrustManager(trustManager(tls)));
        }
        return b.build();
    }

    /** The JDK's X.509 trust manager over the settings' trusted issuers, or over its default ones. */
    private static X509TrustManager trustManager(TlsSettings tls) throws SSLException {
        try {
            KeyStore store = null;
            if (tls.trustedCertificates() != null) {
                store = KeyStore.getInstance("PKCS12");
                store.load(null, null);
                int i = 0;
                try (InputStream in = Files.newInputStream(tls.trustedCertificates())) {
                    for (var c : CertificateFactory.getInstance("X.509").generateCertificates(in)) {
                        store.setCertificateEntry("ca" + i++, c);
                    }
                }
            }
            TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            tmf.init(store);
            for (TrustManager m : tmf.getTrustManagers()) {
                if (m instanceof X509TrustManager x) {
                    return x;
                }
            }
            throw new SSLException("the JDK offers no X.509 trust manager");
        } catch (IOException | GeneralSecurityException e) {
            throw new SSLException("cannot trust the certificates in " + tls.trustedCertificates() + ": " + e.getMessage(), e);
        }
    }

    /**
     * Checks that the peer's chain leads to a trusted issuer and nothing about its name: the engine's
     * endpoint identification (which gRPC turns on) is done by the JDK's trust manager only in the
     * methods that get the engine, and these call the ones that do not.
     */
    private static final class ChainOnlyTrustManager extends X509ExtendedTrustManager {
        private final X509TrustManager chain;

        ChainOnlyTrustManager(X509TrustManager chain) {
            this.chain = chain;
        }

        @Override
        public void checkServerTrusted(X509Certificate[] certs, String authType, SSLEngine engine) throws CertificateException {
            chain.checkServerTrusted(certs, authType);
        }

        @Override
        public void checkServerTrusted(X509Certificate[] certs, String authType, Socket socket) throws CertificateException {
            chain.checkServerTrusted(certs, authType);
        }

        @Override
        public void checkServerTrusted(X509Certificate[] certs, String authType) throws CertificateException {
            chain.checkServerTrusted(certs, authType);
        }

        @Override
        public void checkClientTrusted(X509Certificate[] certs, String authType, SSLEngine engine) throws CertificateException {
            chain.checkClientTrusted(certs, authType);
        }

        @Override
        public void checkClientTrusted(X509Certificate[] certs, String authType, Socket socket) throws CertificateException {
            chain.checkClientTrusted(certs, authType);
        }

        @Override
        public void checkClientTrusted(X509Certificate[] certs, String authType) throws CertificateException {
            chain.checkClientTrusted(certs, authType);
        }

        @Override
        public X509Certificate[] getAcceptedIssuers() {
            return chain.getAcceptedIssuers();
        }
    }

    /** Notes, once, what the first call's TLS connection negotiated; then only passes calls on. */
    private ServerInterceptor tlsWatcher() {
        return new ServerInterceptor() {
            @Override
            public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers,
                    ServerCallHandler<Q, R> next) {
                if (tlsNegotiated == null) {
                    SSLSession session = call.getAttributes().get(Grpc.TRANSPORT_ATTR_SSL_SESSION);
                    if (session != null) {
                        tlsNegotiated = session.getProtocol() + " " + session.getCipherSuite();
                    }
                }
                return next.startCall(call, headers);
            }
        };
    }

    /** The echo service of both gRPC stacks: unary echo and the server stream, messages up to {@code maxMessage}. */
    static ServerServiceDefinition echoService(int maxMessage) {
        return ServerServiceDefinition.builder(SERVICE)
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
                .addMethod(STREAM, ServerCalls.asyncServerStreamingCall((byte[] request, StreamObserver<byte[]> response) -> {
                    int n = EchoProtocol.responseBytes(request);
                    if (n < 0 || n > maxMessage) {
                        response.onError(Status.INVALID_ARGUMENT
                                .withDescription("message size " + n + " out of range").asRuntimeException());
                        return;
                    }
                    new StreamSender((ServerCallStreamObserver<byte[]>) response, new byte[n]).start();
                }))
                .build();
    }

    @Override
    public EchoServer startServer(InetSocketAddress bindAddress, StackOptions options) throws IOException {
        EventLoopGroup boss = new NioEventLoopGroup(1, new DefaultThreadFactory("grpc-bench-boss", true));
        EventLoopGroup workers = new NioEventLoopGroup(options.ioThreads(),
                new DefaultThreadFactory("grpc-bench-server-io", true));
        int maxMessage = options.maxMessageBytes();
        ServerServiceDefinition service = echoService(maxMessage);
        Server server;
        try {
            NettyServerBuilder b = NettyServerBuilder.forAddress(bindAddress)
                    .channelType(NioServerSocketChannel.class)
                    .bossEventLoopGroup(boss)
                    .workerEventLoopGroup(workers)
                    .directExecutor()
                    .maxInboundMessageSize(maxMessage + EchoProtocol.HEADER_BYTES + 64);
            if (options.tls() != null) {
                b.sslContext(serverTls(options.tls())).addService(ServerInterceptors.intercept(service, tlsWatcher()));
            } else {
                b.addService(service);
            }
            server = b.build().start();
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
            clientTls = options.tls() == null ? null : clientTls(options.tls());
            clientGroup = new NioEventLoopGroup(options.ioThreads(), new DefaultThreadFactory("grpc-bench-client-io", true));
        }
        NettyChannelBuilder builder = NettyChannelBuilder.forAddress(serverAddress);
        if (clientTls != null) {
            builder.sslContext(clientTls);
        } else {
            builder.usePlaintext();
        }
        ManagedChannel channel = builder
                .channelType(NioSocketChannel.class)
                .eventLoopGroup(clientGroup)
                .directExecutor()
                .maxInboundMessageSize(options.maxMessageBytes() + EchoProtocol.HEADER_BYTES + 64)
                .build();
        awaitReady(channel, serverAddress, clientTls != null);
        return new GrpcConnection(channel);
    }

    /** Waits up to 10 s for {@code channel} to connect; shuts it down and says why if it does not. */
    /** How long a channel may take to become ready before the bench gives up on the server. */
    private static final int CONNECT_SECONDS = 120;

    static void awaitReady(ManagedChannel channel, InetSocketAddress serverAddress, boolean tls) throws IOException {
        // Generous: a server under an emulated CPU (the Soft-RoCE VM) took more than 10 s to take a first channel.
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(CONNECT_SECONDS);
        ConnectivityState state = channel.getState(true);
        while (state != ConnectivityState.READY) {
            if (state == ConnectivityState.TRANSIENT_FAILURE || System.nanoTime() > deadline) {
                channel.shutdownNow();
                throw new IOException("cannot connect to the gRPC echo server at " + serverAddress
                        + (state == ConnectivityState.TRANSIENT_FAILURE
                                ? !tls ? " (connection failed)" : " (connection or TLS handshake failed)"
                                : " within " + CONNECT_SECONDS + " s"));
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
    }

    @Override
    public synchronized void close() {
        if (clientGroup != null) {
            clientGroup.shutdownGracefully(0, 2, TimeUnit.SECONDS).awaitUninterruptibly(5, TimeUnit.SECONDS);
            clientGroup = null;
            clientTls = null;
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

    static final class GrpcConnection implements EchoConnection {
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
        public StreamCall openStream(int messageBytes, StreamListener listener) {
            StreamReader reader = new StreamReader(listener);
            ClientCalls.asyncServerStreamingCall(channel.newCall(STREAM, CallOptions.DEFAULT),
                    EchoProtocol.streamRequest(messageBytes), reader);
            return reader;
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

    /**
     * The server's side of a stream: sends its payload while the call is ready, and again each time gRPC says
     * it is ready once more, until the client cancels. Runs on the event loop (directExecutor).
     */
    private static final class StreamSender implements Runnable {
        private final ServerCallStreamObserver<byte[]> response;
        private final byte[] payload;
        private volatile boolean cancelled;

        StreamSender(ServerCallStreamObserver<byte[]> response, byte[] payload) {
            this.response = response;
            this.payload = payload;
        }

        /** Called from the method, before it returns: the only time gRPC accepts these handlers. */
        void start() {
            response.setOnCancelHandler(() -> cancelled = true);
            response.setOnReadyHandler(this);
        }

        @Override
        public void run() {
            while (!cancelled && response.isReady()) {
                response.onNext(payload);
            }
        }
    }

    /** The client's side of a stream: hands each message's length to the listener; cancels on request. */
    private static final class StreamReader implements ClientResponseObserver<byte[], byte[]>, StreamCall {
        private final StreamListener listener;
        private volatile ClientCallStreamObserver<byte[]> call;

        StreamReader(StreamListener listener) {
            this.listener = listener;
        }

        @Override
        public void beforeStart(ClientCallStreamObserver<byte[]> requestStream) {
            call = requestStream;
        }

        @Override
        public void onNext(byte[] value) {
            listener.onMessage(value.length);
        }

        @Override
        public void onError(Throwable t) {
            listener.onEnd(t);
        }

        @Override
        public void onCompleted() {
            listener.onEnd(null);
        }

        @Override
        public void cancel() {
            call.cancel("the bench's cell is over", null);
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
