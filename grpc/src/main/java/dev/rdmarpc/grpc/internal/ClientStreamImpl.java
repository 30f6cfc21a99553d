package dev.rdmarpc.grpc.internal;

import dev.rdmarpc.grpc.MessageCopies;
import dev.rdmarpc.rpc.AsyncClientStream;
import dev.rdmarpc.rpc.RpcClient;
import dev.rdmarpc.rpc.RpcException;
import dev.rdmarpc.rpc.StreamListener;
import io.grpc.Attributes;
import io.grpc.CallOptions;
import io.grpc.Codec;
import io.grpc.Compressor;
import io.grpc.Deadline;
import io.grpc.Decompressor;
import io.grpc.DecompressorRegistry;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.grpc.internal.ClientStreamListener;
import io.grpc.internal.ClientStreamListener.RpcProgress;
import io.grpc.internal.GrpcUtil;
import io.grpc.internal.InsightBuilder;
import io.grpc.internal.StatsTraceContext;
import java.io.IOException;
import java.io.InputStream;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * The client's end of one gRPC call: one asynchronous rdmarpc stream ({@link AsyncClientStream}),
 * with no thread of its own. {@link #start} opens it on the caller's thread without waiting;
 * {@link #writeMessage} sends or queues in the stream (never waits); the server's headers, messages
 * and end come to the stream's listener on the connection's I/O thread, messages only as gRPC
 * {@link #request}s them, so an application that reads slowly holds messages back in the server's
 * window. gRPC's own call listener moves them onto the application's executor.
 */
final class ClientStreamImpl extends OpenCalls.Call implements io.grpc.internal.ClientStream {
    private final ClientTransportImpl transport;
    private final MethodDescriptor<?, ?> method;
    private final Metadata headers;
    private final StatsTraceContext stats;
    private volatile ClientStreamListener listener;
    private volatile Deadline deadline;
    private volatile String authority;
    private volatile int maxInbound;
    private volatile int maxOutbound = Integer.MAX_VALUE;
    private volatile Compressor compressor = Codec.Identity.NONE;
    private volatile boolean messageCompression = true;
    private volatile DecompressorRegistry decompressors = DecompressorRegistry.getDefaultInstance();
    private volatile Decompressor decompressor;
    private volatile AsyncClientStream<Object, Object> stream;
    private volatile boolean closed;
    private volatile boolean readyBeforeStart;
    private int outSeq;
    /** The I/O thread's: messages delivered. */
    private int inSeq;

    ClientStreamImpl(ClientTransportImpl transport, MethodDescriptor<?, ?> method, Metadata headers,
                     CallOptions callOptions, StatsTraceContext stats, int maxInbound) {
        this.maxInbound = maxInbound;
        this.transport = transport;
        this.method = method;
        this.headers = headers;
        this.stats = stats;
    }

    @Override
    public void start(ClientStreamListener listener) {
        this.listener = listener;
        transport.streamStarted(this);
        stats.clientOutboundHeaders();
        AsyncClientStream<Object, Object> s;
        try {
            dev.rdmarpc.rpc.CallOptions options = Headers.startOptions(headers, method, authority, transport.startOptions);
            Deadline d = deadline;
            if (d != null) {
                long left = d.timeRemaining(TimeUnit.NANOSECONDS);
                if (left <= 0) {
                    close(Status.DEADLINE_EXCEEDED.withDescription("deadline passed before the call started"),
                            RpcProgress.PROCESSED, new Metadata());
                    return;
                }
                options = options.withTimeout(Duration.ofNanos(left));
            }
            RpcClient client = transport.client();
            s = client.openAsyncStream(Wire.method(maxInbound), options, new Listener());
        } catch (RpcException e) {
            close(Headers.statusOf(e), RpcProgress.REFUSED, new Metadata());
            return;
        } catch (RuntimeException e) {
            close(Status.INTERNAL.withDescription("the call could not start: " + e).withCause(e), RpcProgress.PROCESSED,
                    new Metadata());
            return;
        }
        stream = s;
        if (closed) {
            s.cancel();
            return;
        }
        if (readyBeforeStart) {
            fireReady(); // the stream was ready before this had it: gRPC's isReady() said false then
        }
        s.request(1); // the server's headers (or, in a trailers-only answer, nothing): asked for by the transport
    }

    /** What the rdmarpc stream tells, on the I/O thread (one at a time). */
    private final class Listener implements StreamListener<Object> {
        @Override
        public void onMessage(Object m) {
            if (closed) {
                if (m instanceof ReceivedMessage r) {
                    r.release();
                }
                return;
            }
            if (m instanceof Wire.TooLarge tl) {
                cancel(Status.RESOURCE_EXHAUSTED.withDescription("gRPC message exceeds maximum size " + maxInbound
                        + ": " + tl.length()));
                return;
            }
            if (m instanceof ReceivedMessage r) {
                deliver(r);
                return;
            }
            Wire.In in = (Wire.In) m;
            {
                Headers.Received received = Headers.received(in.body(), transport.headersIn);
                Metadata h = received.metadata();
                String encoding = received.encoding(); // as h.get(GrpcUtil.MESSAGE_ENCODING_KEY) reads it
                if (encoding != null) {
                    decompressor = decompressors.lookupDecompressor(encoding);
                }
                stats.clientInboundHeaders(h);
                synchronized (ClientStreamImpl.this) {
                    if (!closed) {
                        listener.headersRead(h);
                    }
                }
            }
        }

        @Override
        public void onReady() {
            if (stream == null) {
                readyBeforeStart = true; // told while openAsyncStream runs: start() tells gRPC
                if (stream == null) {
                    return;
                }
            }
            fireReady();
        }

        @Override
        public void onEnd(RpcException failure, dev.rdmarpc.rpc.Metadata md) {
            if (failure == null) {
                Headers.Trailers t = Headers.trailers(md, transport.trailersIn);
                Metadata trailers = Headers.own(t.trailers());
                stats.clientInboundTrailers(trailers);
                close(t.status(), RpcProgress.PROCESSED, trailers);
                return;
            }
            Status status = Headers.statusOf(failure);
            if (!transport.isOpen()) {
                // the connection is gone (or the server refused it, with a reason): gRPC's UNAVAILABLE
                status = Status.UNAVAILABLE.withDescription(status.getDescription()).withCause(failure);
            }
            // SHUTTING_DOWN: the server says it did not handle the call, so gRPC may send it again
            // (to another server) without a retry policy, as after an HTTP/2 GOAWAY
            RpcProgress progress = failure.status() == dev.rdmarpc.rpc.Status.SHUTTING_DOWN
                    ? RpcProgress.REFUSED : RpcProgress.PROCESSED;
            close(status, progress, new Metadata());
        }
    }

    /** Hands a message to gRPC, which closes it once parsed (the receive buffer goes back then). */
    private void deliver(ReceivedMessage received) {
        InputStream body = received;
        if (received.kind == Wire.COMPRESSED) {
            Decompressor d = decompressor;
            if (d == null) {
                received.release();
                cancel(Status.INTERNAL.withDescription("a compressed message came without a known grpc-encoding"));
                return;
            }
            try {
                body = d.decompress(received);
            } catch (IOException | RuntimeException e) {
                received.release();
                cancel(Status.INTERNAL.withDescription("the message could not be decompressed: " + e).withCause(e));
                return;
            }
        }
        MessageCopies.receivedMessage();
        int seq = inSeq++;
        stats.inboundMessage(seq);
        stats.inboundMessageRead(seq, received.length, -1);
        synchronized (this) {
            if (!closed) {
                listener.messagesAvailable(new SingleMessage(body));
                return;
            }
        }
        received.release();
    }

    private void fireReady() {
        ClientStreamListener l = listener;
        if (l != null && !closed) {
            synchronized (this) {
                l.onReady();
            }
        }
    }

    /** Ends the call here once: tells the listener, the tracers and the transport. */
    void close(Status status, RpcProgress progress, Metadata trailers) {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
        }
        stats.streamClosed(status);
        transport.streamEnded(this);
        synchronized (this) {
            listener.closed(status, progress, trailers);
        }
    }

    /**
     * Ends the call with {@code reason}, then cancels its rdmarpc stream: in that order, so that the
     * reader, which sees the stream's cancellation, cannot report it first.
     */
    @Override
    public void cancel(Status reason) {
        if (listener == null) {
            closed = true;
        } else {
            close(reason, RpcProgress.PROCESSED, new Metadata());
        }
        AsyncClientStream<Object, Object> s = stream;
        if (s != null) {
            s.cancel();
        }
    }

    @Override
    public void halfClose() {
        AsyncClientStream<Object, Object> s = stream;
        if (s != null && !closed) {
            s.halfClose();
        }
    }

    @Override
    public void request(int numMessages) {
        AsyncClientStream<Object, Object> s = stream;
        if (s != null) {
            s.request(numMessages);
        }
    }

    @Override
    public void writeMessage(InputStream message) {
        if (closed) {
            return;
        }
        Object out = Wire.Out.message(message, messageCompression && compressor != Codec.Identity.NONE ? compressor : null);
        int length = Wire.length(out);
        if (length > maxOutbound) {
            cancel(Status.RESOURCE_EXHAUSTED.withDescription("message of " + length + " bytes exceeds the maximum "
                    + maxOutbound));
            return;
        }
        AsyncClientStream<Object, Object> s = stream;
        if (s == null) {
            return;
        }
        int seq = outSeq++;
        stats.outboundMessage(seq);
        stats.outboundMessageSent(seq, length, -1);
        try {
            s.send(out); // written now, or queued in the stream: never waits
        } catch (RpcException e) {
            cancel(Headers.statusOf(e)); // over the maximum frame length
            return;
        }
        MessageCopies.sentMessage();
    }

    @Override
    public boolean isReady() {
        AsyncClientStream<Object, Object> s = stream;
        return !closed && s != null && s.isReady();
    }

    @Override
    public void flush() {
    }

    @Override
    public void optimizeForDirectExecutor() {
    }

    @Override
    public void setCompressor(Compressor compressor) {
        this.compressor = compressor;
    }

    @Override
    public void setMessageCompression(boolean enable) {
        this.messageCompression = enable;
    }

    @Override
    public void setAuthority(String authority) {
        this.authority = authority;
    }

    @Override
    public void setFullStreamDecompression(boolean fullStreamDecompression) {
    }

    @Override
    public void setDecompressorRegistry(DecompressorRegistry registry) {
        this.decompressors = registry;
    }

    @Override
    public void setMaxInboundMessageSize(int maxSize) {
        this.maxInbound = maxSize;
    }

    @Override
    public void setMaxOutboundMessageSize(int maxSize) {
        this.maxOutbound = maxSize;
    }

    @Override
    public void setDeadline(Deadline deadline) {
        this.deadline = deadline;
    }

    @Override
    public Attributes getAttributes() {
        return transport.getAttributes();
    }

    @Override
    public void appendTimeoutInsight(InsightBuilder insight) {
        insight.appendKeyValue("transport", "rdmarpc");
        insight.appendKeyValue("remote_addr", transport.address());
    }
}
