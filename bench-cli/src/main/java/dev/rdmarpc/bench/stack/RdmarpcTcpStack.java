package dev.rdmarpc.bench.stack;

import dev.rdmarpc.bench.load.CallListener;
import dev.rdmarpc.bench.load.EchoCaller;
import dev.rdmarpc.bench.load.EchoConnection;
import dev.rdmarpc.bench.load.EchoProtocol;
import dev.rdmarpc.bench.load.EchoServer;
import dev.rdmarpc.bench.load.EchoStack;
import dev.rdmarpc.bench.load.RdmaSettings;
import dev.rdmarpc.bench.load.StackOptions;
import dev.rdmarpc.bench.load.StreamCall;
import dev.rdmarpc.bench.load.StreamListener;
import dev.rdmarpc.bench.load.TlsSettings;
import dev.rdmarpc.bench.load.Workload;
import dev.rdmarpc.rpc.CallContext;
import dev.rdmarpc.rpc.ClientStream;
import dev.rdmarpc.rpc.Method;
import dev.rdmarpc.rpc.RawCall;
import dev.rdmarpc.rpc.ResponseListener;
import dev.rdmarpc.rpc.ResponseView;
import dev.rdmarpc.rpc.RpcClient;
import dev.rdmarpc.rpc.RpcException;
import dev.rdmarpc.rpc.RpcServer;
import dev.rdmarpc.rpc.ServerStream;
import dev.rdmarpc.rpc.Status;
import dev.rdmarpc.rpc.codec.Codecs;
import dev.rdmarpc.rpc.protocol.FrameDescriptor;
import dev.rdmarpc.rpc.transport.Transport;
import dev.rdmarpc.rpc.transport.rdma.RdmaConfig;
import dev.rdmarpc.rpc.transport.rdma.RdmaTransport;
import dev.rdmarpc.rpc.transport.tcp.TcpConfig;
import dev.rdmarpc.rpc.transport.tcp.TcpTransport;
import dev.rdmarpc.rpc.transport.tls.TlsConfig;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetSocketAddress;
import java.nio.ByteOrder;
import java.time.Duration;
import javax.net.ssl.SSLSession;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;

/**
 * rdmarpc over its TCP transport (or, constructed with {@code rdma}, its RDMA transport), measured
 * on its zero-allocation paths: the server answers with a
 * {@link dev.rdmarpc.rpc.RawHandler} inline on the I/O thread (the request's bytes copied straight into
 * the response frame), the client calls {@link RpcClient#sendInPlace} with an off-heap request segment
 * (written from there, not copied, from 16 KiB on over TCP) and a preallocated {@link ResponseListener},
 * and re-sends from that listener on the I/O thread.
 *
 * <p>The streaming workload uses rdmarpc's streaming API as its documentation shows it, the same over TCP
 * and RDMA: the server's {@link dev.rdmarpc.rpc.StreamHandler} (on its own virtual thread) reads the
 * opening request and calls {@link ServerStream#send} with one preallocated {@code byte[]} payload until the
 * client cancels (send waits while the client's window is used up); the client opens the stream with
 * {@link RpcClient#openStream}, sends the request, half-closes and reads with {@link ClientStream#receive}
 * on a virtual thread of its own, and cancels with {@link ClientStream#cancel}. Messages are
 * {@link Codecs#BYTES} both ways, so each received message is a {@code byte[]} of its own, as gRPC's
 * {@code byte[]} marshaller gives it.
 *
 * <p>All client connections of one stack share one {@link TcpTransport} with {@code ioThreads} event
 * loops, so both sides run the same number of I/O threads. A send refused by back-pressure
 * ({@code send} returning false) waits in its client's {@link SendQueue} and is sent, oldest first, when
 * a response of that client arrives (on the I/O thread, before the next call of the caller just
 * answered, which joins the end of the queue while anyone waits): callers are answered in turn, none
 * starves behind callers re-sending straight from the I/O thread. A helper thread retries every
 * millisecond while some caller waits, in case no response is left to trigger it. The time a caller
 * waits counts in its call's latency.
 *
 * <p>With {@link StackOptions#tls()}, both sides run TLS {@value TlsSettings#PROTOCOL} with the JDK's
 * {@code SSLEngine} ({@link TlsConfig} on {@link TcpConfig#tls}; over RDMA on
 * {@link RdmaConfig#tls}, which puts each connection's TCP setup channel behind TLS while the queue pair's
 * data stays unencrypted). The server's echo handler notes what the first TLS call's connection
 * negotiated ({@link #tlsNegotiated()}).
 */
public final class RdmarpcTcpStack implements EchoStack {
    /** The echo method: raw bytes both ways. */
    static final Method<MemorySegment, MemorySegment> ECHO = Method.raw("rdmarpc.bench.echo");
    /** The streaming method: one request ({@link EchoProtocol#streamRequest}), then messages of its size. */
    static final Method<byte[], byte[]> STREAM = Method.of("rdmarpc.bench.stream", Codecs.BYTES, Codecs.BYTES);
    private static final ValueLayout.OfInt INT_LE = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    private final boolean rdma;
    private Transport clientTransport;
    private Resender resender;
    /** What the first TLS call to a server of this stack arrived over; written once by an I/O thread. */
    private volatile String tlsNegotiated;
    /** The SDK behind {@link StackOptions#telemetry()}, made by the first server or connection that asks; null when off. */
    private BenchTelemetry telemetry;

    /** rdmarpc over TCP. */
    public RdmarpcTcpStack() {
        this(false);
    }

    /** @param rdma true for rdmarpc's RDMA transport (the same handler and calls, {@code rdma()} on both sides) */
    RdmarpcTcpStack(boolean rdma) {
        this.rdma = rdma;
    }

    @Override
    public String name() {
        return rdma ? "rdmarpc-rdma" : "rdmarpc-tcp";
    }

    /** The RDMA settings of both sides: defaults, with the bench's I/O threads, device and GID index. */
    static RdmaConfig rdmaConfig(StackOptions options) {
        return RdmaSettings.apply(options, new RdmaConfig());
    }

    /** A server's TLS: its certificate chain and key from the settings' PEM files, TLS 1.3 only. */
    static TlsConfig serverTls(TlsSettings tls) {
        if (!tls.canServe()) {
            throw new IllegalArgumentException("TLS without a server certificate and key: cannot serve");
        }
        return TlsConfig.forServer(tls.certificateChain(), tls.privateKey()).protocols(TlsSettings.PROTOCOL);
    }

    /** A client's TLS: the settings' trusted issuers (or the JDK's), their host-name rule, TLS 1.3 only. */
    static TlsConfig clientTls(TlsSettings tls) {
        TlsConfig c = TlsConfig.forClient().verifyHostname(tls.verifyHostname()).protocols(TlsSettings.PROTOCOL);
        return tls.trustedCertificates() == null ? c : c.trust(tls.trustedCertificates());
    }

    @Override
    public String tlsNegotiated() {
        return tlsNegotiated;
    }

    @Override
    public String describe(StackOptions options) {
        String version = RpcClient.class.getModule().getDescriptor() != null
                ? RpcClient.class.getModule().getDescriptor().rawVersion().orElse("") : "";
        String transport = rdma ? " RDMA transport (RC SEND/RECV, " + rdmaConfig(options).loop().idleStrategy()
                + " completions, registered pool)" : " TCP transport (java.nio)";
        String tls = options.tls() == null ? "" : rdma ? ", TLS " + TlsSettings.PROTOCOL
                + " (JDK SSLEngine) on each connection's TCP setup channel, queue pair data unencrypted"
                : ", TLS " + TlsSettings.PROTOCOL + " (JDK SSLEngine)";
        return "rdmarpc" + (version.isEmpty() ? "" : " " + version) + transport + tls + ", raw echo handler inline "
                + "on the I/O thread, RpcClient.sendInPlace with a preallocated listener, "
                + options.ioThreads() + " I/O thread(s) per side";
    }

    @Override
    public String describe(StackOptions options, Workload workload) {
        String d = describe(options);
        if (workload != Workload.stream) {
            return d;
        }
        return d.substring(0, d.indexOf(", raw echo handler")) + ", stream handler on a virtual thread sending one "
                + "preallocated byte[] with ServerStream.send, ClientStream.receive on a virtual thread per stream, "
                + "byte[] messages (Codecs.BYTES), the default stream window, " + options.ioThreads()
                + " I/O thread(s) per side";
    }

    static int maxFrameLength(StackOptions options) {
        long needed = (long) FrameDescriptor.HEADER_LENGTH + options.maxMessageBytes();
        return (int) Math.min(FrameDescriptor.MAX_FRAME_LENGTH_LIMIT,
                Math.max(FrameDescriptor.DEFAULT_MAX_FRAME_LENGTH, needed));
    }

    @Override
    public EchoServer startServer(InetSocketAddress bindAddress, StackOptions options) {
        TlsConfig tls = options.tls() == null ? null : serverTls(options.tls());
        EchoHandler handler = new EchoHandler(options.maxMessageBytes(), tls == null ? null : this);
        RpcServer server;
        try {
            RpcServer.Builder b = RpcServer.builder()
                    .bind(bindAddress)
                    .maxFrameLength(maxFrameLength(options))
                    .registerRaw(ECHO, handler::handle)
                    .registerStream(STREAM, handler::stream);
            BenchTelemetry t = telemetry(options);
            if (t != null) {
                b.intercept(t.telemetry().serverInterceptor());
            }
            if (rdma) {
                b.rdma(rdmaConfig(options).threadNamePrefix("rdmarpc-bench-server").tls(tls));
            } else {
                b.tcp(cfg -> cfg.loop(l -> l.ioThreads(options.ioThreads())).tls(tls));
            }
            server = b.start();
            if (t != null) {
                t.telemetry().observe(server);
            }
        } catch (RuntimeException e) {
            handler.close();
            throw e;
        }
        return new EchoServer() {
            private final AtomicBoolean closed = new AtomicBoolean();

            @Override
            public InetSocketAddress address() {
                return server.address();
            }

            @Override
            public void close() {
                if (closed.compareAndSet(false, true)) {
                    server.shutdown(Duration.ofSeconds(5));
                    handler.close();
                }
            }
        };
    }

    @Override
    public synchronized EchoConnection connect(InetSocketAddress serverAddress, StackOptions options) {
        if (clientTransport == null) {
            TlsConfig tls = options.tls() == null ? null : clientTls(options.tls());
            clientTransport = rdma
                    ? RdmaTransport.create(rdmaConfig(options).threadNamePrefix("rdmarpc-bench-client").tls(tls))
                    : TcpTransport.create(new TcpConfig()
                            .loop(l -> l.ioThreads(options.ioThreads()))
                            .threadNamePrefix("rdmarpc-bench-client")
                            .tls(tls));
            resender = new Resender();
        }
        RpcClient.Builder cb = RpcClient.builder()
                .address(serverAddress)
                .transport(clientTransport)
                .maxFrameLength(maxFrameLength(options))
                .maxOutstanding(65536);
        BenchTelemetry t = telemetry(options);
        if (t != null) {
            cb.intercept(t.telemetry().clientInterceptor()); // typed calls only: the stream workload's, not sendInPlace
        }
        RpcClient client = cb.connect();
        if (t != null) {
            t.telemetry().observe(client);
        }
        SendQueue queue = resender.register();
        return new EchoConnection() {
            @Override
            public EchoCaller newCaller(int requestBytes, int responseBytes) {
                return new Caller(client, queue, requestBytes, responseBytes);
            }

            @Override
            public StreamCall openStream(int messageBytes, StreamListener listener) {
                StreamReader reader = new StreamReader(client, messageBytes, listener);
                Thread.ofVirtual().name("rdmarpc-bench-stream").start(reader);
                return reader;
            }

            @Override
            public void close() {
                client.close();
            }
        };
    }

    private synchronized BenchTelemetry telemetry(StackOptions options) {
        if (telemetry == null && !"off".equals(options.telemetry())) {
            telemetry = new BenchTelemetry(options.telemetry(), options.telemetryFile());
        }
        return telemetry;
    }

    @Override
    public synchronized void close() {
        if (telemetry != null) {
            telemetry.close();
            telemetry = null;
        }
        if (resender != null) {
            resender.close();
            resender = null;
        }
        if (clientTransport != null) {
            clientTransport.close();
            clientTransport = null;
        }
    }

    /**
     * The server's echo: the request's bytes back, or as many bytes as the request's header asks for. Over
     * TLS it first notes, once, what the call's connection negotiated.
     */
    private static final class EchoHandler {
        private final int maxMessage;
        private final Arena arena = Arena.ofShared();
        private volatile MemorySegment filler;
        /** The stack to tell what TLS negotiated, or null without TLS (then nothing is looked at). */
        private final RdmarpcTcpStack tlsWatcher;

        EchoHandler(int maxMessage, RdmarpcTcpStack tlsWatcher) {
            this.maxMessage = maxMessage;
            this.tlsWatcher = tlsWatcher;
        }

        /** Over TLS, notes once what the call's connection negotiated. */
        private void noteTls(CallContext call) {
            if (tlsWatcher != null && tlsWatcher.tlsNegotiated == null) {
                SSLSession session = call.tlsSession();
                if (session != null) {
                    tlsWatcher.tlsNegotiated = session.getProtocol() + " " + session.getCipherSuite();
                }
            }
        }

        /**
         * Server streaming: reads the opening request (the message size), then sends one payload, allocated
         * once, as fast as the client's window allows, until the client cancels (then {@code send} throws
         * CANCELLED, which ends the handler).
         */
        void stream(ServerStream<byte[], byte[]> stream) {
            noteTls(stream);
            byte[] request = stream.receive();
            if (request == null) {
                throw new RpcException(Status.HANDLER_FAILED, "the stream half-closed without its request");
            }
            int size = EchoProtocol.responseBytes(request);
            if (size < 0 || size > maxMessage) {
                throw new RpcException(Status.HANDLER_FAILED, "message size " + size + " out of range");
            }
            byte[] payload = new byte[size];
            while (true) {
                stream.send(payload);
            }
        }

        void handle(RawCall call) {
            noteTls(call);
            int length = call.payloadLength();
            int wanted = length >= EchoProtocol.HEADER_BYTES ? call.buffer().get(INT_LE, call.payloadOffset()) : length;
            if (wanted == length) {
                call.respond(call.buffer(), call.payloadOffset(), length);
            } else if (wanted < 0 || wanted > maxMessage) {
                call.respondError(Status.HANDLER_FAILED, "response size " + wanted + " out of range");
            } else {
                call.respond(filler(), 0, wanted);
            }
        }

        private MemorySegment filler() {
            MemorySegment f = filler;
            if (f == null) {
                synchronized (this) {
                    f = filler;
                    if (f == null) {
                        f = arena.allocate(maxMessage);
                        filler = f;
                    }
                }
            }
            return f;
        }

        void close() {
            arena.close();
        }
    }

    /** One call at a time over one client; the caller is its own response listener. */
    private static final class Caller implements EchoCaller, ResponseListener {
        private final RpcClient client;
        private final SendQueue queue;
        private final Arena arena = Arena.ofShared();
        private final MemorySegment request;
        private final int expected;
        private CallListener listener;

        Caller(RpcClient client, SendQueue queue, int requestBytes, int responseBytes) {
            this.client = client;
            this.queue = queue;
            this.request = arena.allocate(requestBytes, 64);
            this.expected = responseBytes;
            EchoProtocol.fillRequest(request, responseBytes);
        }

        @Override
        public void call(CallListener listener) {
            this.listener = listener;
            queue.submit(this);
        }

        /** Sends the call; false when back-pressured (nothing sent). A call that fails to start fails its listener. */
        boolean trySend() {
            try {
                return client.sendInPlace(ECHO, request, this, 0L);
            } catch (RpcException e) {
                listener.onFailure(e);
                return true;
            }
        }

        @Override
        public void onResponse(long tag, ResponseView response) {
            int length = response.payloadLength();
            queue.drain(); // the callers refused before this one's next call go first
            if (length == expected) {
                listener.onResponse();
            } else {
                listener.onFailure(new IllegalStateException(
                        "rdmarpc echo answered " + length + " bytes, expected " + expected));
            }
        }

        @Override
        public void onError(long tag, RpcException error) {
            queue.drain();
            listener.onFailure(error);
        }

        @Override
        public void close() {
            arena.close();
        }
    }

    /**
     * One server-streaming call, read on a virtual thread of its own as the streaming API is meant to be
     * used: it opens the stream (which may wait for a call slot or send room, so not on the bench's thread),
     * sends the request, half-closes, and hands each message's length to the listener until the stream
     * ends; {@link #cancel} cancels it from any thread.
     */
    private static final class StreamReader implements Runnable, StreamCall {
        private final RpcClient client;
        private final byte[] request;
        private final StreamListener listener;
        private volatile ClientStream<byte[], byte[]> stream;
        private volatile boolean cancelled;

        StreamReader(RpcClient client, int messageBytes, StreamListener listener) {
            this.client = client;
            this.request = EchoProtocol.streamRequest(messageBytes);
            this.listener = listener;
        }

        @Override
        public void run() {
            Throwable failure = null;
            try (ClientStream<byte[], byte[]> s = client.openStream(STREAM)) {
                stream = s;
                if (cancelled) {
                    s.cancel(); // cancelled while it was opening
                }
                s.send(request);
                s.halfClose();
                for (byte[] m; (m = s.receive()) != null; ) {
                    listener.onMessage(m.length);
                }
            } catch (RuntimeException e) {
                failure = e;
            }
            listener.onEnd(failure);
        }

        @Override
        public void cancel() {
            cancelled = true;
            ClientStream<byte[], byte[]> s = stream;
            if (s != null) {
                s.cancel();
            }
        }
    }

    /**
     * The callers of one client whose sends were refused by back-pressure, sent in the order they were
     * refused. A caller that finds others waiting joins the end rather than going ahead of them, so no
     * caller starves while others re-send as soon as they are answered. Only this path allocates (a
     * queue node per refused send).
     */
    private static final class SendQueue {
        private final ConcurrentLinkedQueue<Caller> waiting = new ConcurrentLinkedQueue<>();
        private final AtomicBoolean draining = new AtomicBoolean();
        private final Resender resender;

        SendQueue(Resender resender) {
            this.resender = resender;
        }

        /** Sends {@code c}'s call now, or after the callers already waiting. */
        void submit(Caller c) {
            if (waiting.isEmpty() && c.trySend()) {
                return;
            }
            waiting.add(c);
            resender.wake();
            drain(); // room may have come between the refusal and the add, with no response left to say so
        }

        /**
         * Sends the waiting callers, oldest first, until one is refused. Only one thread drains at a time:
         * a caller is peeked, sent, then removed, so no other thread may send it meanwhile.
         *
         * @return true when no caller waits (as far as this thread can tell)
         */
        boolean drain() {
            if (waiting.isEmpty()) {
                return true;
            }
            if (!draining.compareAndSet(false, true)) {
                return false;
            }
            try {
                Caller head;
                while ((head = waiting.peek()) != null) {
                    if (!head.trySend()) {
                        return false;
                    }
                    waiting.poll(); // head, even if it was answered and queued again meanwhile (then at the end too)
                }
                return true;
            } finally {
                draining.set(false);
            }
        }
    }

    /**
     * The safety net behind {@link SendQueue}: while any caller waits it drains every queue once a
     * millisecond, for the case where no response is left to trigger a drain (over RDMA the send queue
     * counts bytes until their completions are polled, which may come after the last response). With no
     * caller waiting it parks until {@link #wake}: on the VM's 2 vCPUs each needless wake-up took a vCPU
     * from a busy-polling I/O thread or from rxe's work.
     */
    private static final class Resender implements Runnable {
        private static final long RETRY_NANOS = 1_000_000;
        private final List<SendQueue> queues = new CopyOnWriteArrayList<>();
        private final Thread thread;
        private volatile boolean running = true;

        Resender() {
            thread = Thread.ofPlatform().daemon().name("rdmarpc-bench-resend").start(this);
        }

        SendQueue register() {
            SendQueue q = new SendQueue(this);
            queues.add(q);
            return q;
        }

        /** A caller was queued: drain soon. */
        void wake() {
            LockSupport.unpark(thread);
        }

        @Override
        public void run() {
            while (running) {
                boolean anyWaiting = false;
                for (SendQueue q : queues) {
                    anyWaiting |= !q.drain();
                }
                if (anyWaiting) {
                    LockSupport.parkNanos(RETRY_NANOS);
                } else {
                    LockSupport.park(); // wake() and close() unpark after their write: no caller is missed
                }
            }
        }

        void close() {
            running = false;
            LockSupport.unpark(thread);
            try {
                thread.join(2000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
