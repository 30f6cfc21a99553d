package dev.rdmarpc.grpc.internal;

import dev.rdmarpc.grpc.MessageCopies;
import dev.rdmarpc.rpc.ClientStream;
import dev.rdmarpc.rpc.RpcClient;
import dev.rdmarpc.rpc.RpcException;
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
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * The client's end of one gRPC call: one rdmarpc stream. A sender thread (virtual) opens the stream
 * and sends what {@link #writeMessage} queued, waiting on the stream's window; a reader thread
 * (virtual) receives only while the application has asked for messages ({@link #request}), so an
 * application that reads slowly holds messages back in the server's window.
 */
final class ClientStreamImpl implements io.grpc.internal.ClientStream {
    private final ClientTransportImpl transport;
    private final MethodDescriptor<?, ?> method;
    private final Metadata headers;
    private final StatsTraceContext stats;
    private final StreamQueue queue;
    private volatile ClientStreamListener listener;
    private volatile Deadline deadline;
    private volatile String authority;
    private volatile int maxInbound;
    private volatile int maxOutbound = Integer.MAX_VALUE;
    private volatile Compressor compressor = Codec.Identity.NONE;
    private volatile boolean messageCompression = true;
    private volatile DecompressorRegistry decompressors = DecompressorRegistry.getDefaultInstance();
    private volatile Decompressor decompressor;
    private volatile ClientStream<Object, Object> stream;
    private volatile boolean closed;
    private int outSeq;
    private int inSeq;

    ClientStreamImpl(ClientTransportImpl transport, MethodDescriptor<?, ?> method, Metadata headers,
                     CallOptions callOptions, StatsTraceContext stats, int maxInbound) {
        this.maxInbound = maxInbound;
        this.transport = transport;
        this.method = method;
        this.headers = headers;
        this.stats = stats;
        this.queue = new StreamQueue(this::fireReady);
    }

    @Override
    public void start(ClientStreamListener listener) {
        this.listener = listener;
        transport.streamStarted(this);
        stats.clientOutboundHeaders();
        Thread.ofVirtual().name("rdmarpc-grpc-send").start(this::openAndSend);
    }

    private void openAndSend() {
        ClientStream<Object, Object> s;
        try {
            dev.rdmarpc.rpc.Metadata md = Headers.toRdmarpc(headers).with(Headers.PATH, "/" + method.getFullMethodName());
            if (authority != null) {
                md = md.with(Headers.AUTHORITY, authority);
            }
            // a gRPC call without a deadline has none (not rdmarpc's default stream timeout)
            dev.rdmarpc.rpc.CallOptions options = dev.rdmarpc.rpc.CallOptions.DEFAULT.withMetadata(md).withoutDeadline();
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
            s = client.openStream(Wire.method(maxInbound), options);
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
        Thread.ofVirtual().name("rdmarpc-grpc-receive").start(this::receive);
        queue.opened();
        send(s);
    }

    private void send(ClientStream<Object, Object> s) {
        try {
            while (true) {
                Object item = queue.take();
                if (item == StreamQueue.STOP) {
                    return;
                }
                if (item == StreamQueue.HALF_CLOSE) {
                    s.halfClose();
                    continue;
                }
                Wire.Out out = (Wire.Out) item;
                s.send(out);
                MessageCopies.sentMessage();
                queue.sent(out.length);
            }
        } catch (RpcException e) {
            // the reader sees the stream's end and reports it; a message the stream refused is this end's failure
            if (e.status() == dev.rdmarpc.rpc.Status.PAYLOAD_TOO_LARGE) {
                cancel(Headers.statusOf(e));
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (RuntimeException e) {
            cancel(Status.INTERNAL.withDescription("sending failed: " + e).withCause(e));
        }
    }

    private void receive() {
        ClientStream<Object, Object> s = stream;
        boolean first = true;
        try {
            while (!closed) {
                if (!first && !queue.awaitDemand()) {
                    return;
                }
                Object m = s.receive();
                if (m == null) {
                    dev.rdmarpc.rpc.Metadata t = s.trailers();
                    Metadata trailers = Headers.toGrpc(t);
                    stats.clientInboundTrailers(trailers);
                    close(Headers.statusOf(t), RpcProgress.PROCESSED, trailers);
                    return;
                }
                if (m instanceof Wire.TooLarge tl) {
                    cancel(Status.RESOURCE_EXHAUSTED.withDescription("gRPC message exceeds maximum size " + maxInbound
                            + ": " + tl.length()));
                    return;
                }
                Wire.In in = (Wire.In) m;
                if (in.kind() == Wire.HEADERS) {
                    Metadata h = Headers.fromBlock(in.body());
                    String encoding = h.get(GrpcUtil.MESSAGE_ENCODING_KEY);
                    if (encoding != null) {
                        decompressor = decompressors.lookupDecompressor(encoding);
                    }
                    stats.clientInboundHeaders(h);
                    synchronized (this) {
                        if (!closed) {
                            listener.headersRead(h);
                        }
                    }
                    first = false;
                    continue;
                }
                if (first) {
                    first = false;
                    if (!queue.awaitDemand()) {
                        return;
                    }
                }
                deliver(in);
            }
        } catch (RpcException e) {
            Status status = Headers.statusOf(e);
            if (!transport.isOpen()) {
                // the connection is gone (or the server refused it, with a reason): gRPC's UNAVAILABLE
                status = Status.UNAVAILABLE.withDescription(status.getDescription()).withCause(e);
            }
            close(status, RpcProgress.PROCESSED, new Metadata());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (RuntimeException e) {
            cancel(Status.INTERNAL.withDescription("receiving failed: " + e).withCause(e));
        }
    }

    private void deliver(Wire.In in) {
        InputStream body = new ByteArrayInputStream(in.body());
        if (in.kind() == Wire.COMPRESSED) {
            Decompressor d = decompressor;
            if (d == null) {
                cancel(Status.INTERNAL.withDescription("a compressed message came without a known grpc-encoding"));
                return;
            }
            try {
                body = d.decompress(body);
            } catch (IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        }
        MessageCopies.receivedMessage();
        queue.consumed();
        int seq = inSeq++;
        stats.inboundMessage(seq);
        stats.inboundMessageRead(seq, in.body().length, -1);
        InputStream message = body;
        synchronized (this) {
            if (!closed) {
                listener.messagesAvailable(new SingleMessage(message));
            }
        }
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
        queue.stop();
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
        ClientStream<Object, Object> s = stream;
        if (s != null) {
            s.cancel();
        }
    }

    @Override
    public void halfClose() {
        queue.halfClose();
    }

    @Override
    public void request(int numMessages) {
        queue.request(numMessages);
    }

    @Override
    public void writeMessage(InputStream message) {
        if (closed) {
            return;
        }
        Wire.Out out = Wire.Out.message(message, messageCompression && compressor != Codec.Identity.NONE ? compressor : null);
        if (out.length > maxOutbound) {
            cancel(Status.RESOURCE_EXHAUSTED.withDescription("message of " + out.length + " bytes exceeds the maximum "
                    + maxOutbound));
            return;
        }
        int seq = outSeq++;
        stats.outboundMessage(seq);
        stats.outboundMessageSent(seq, out.length, -1);
        queue.put(out);
    }

    @Override
    public boolean isReady() {
        return !closed && queue.isReady();
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
