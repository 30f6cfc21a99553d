package dev.rdmarpc.grpc.internal;

import dev.rdmarpc.grpc.MessageCopies;
import dev.rdmarpc.rpc.AsyncServerStream;
import dev.rdmarpc.rpc.RpcException;
import dev.rdmarpc.rpc.StreamListener;
import io.grpc.Attributes;
import io.grpc.Codec;
import io.grpc.Compressor;
import io.grpc.Decompressor;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.internal.ServerStreamListener;
import io.grpc.internal.StatsTraceContext;
import java.io.IOException;
import java.io.InputStream;

/**
 * The server's end of one gRPC call: one asynchronous rdmarpc stream ({@link AsyncServerStream}),
 * with no thread of its own. What gRPC writes (headers, messages, the close with its trailers) is
 * sent or queued in the stream at once, never waiting; the client's messages, its half-close and
 * the stream's end come to {@link #listener()} on the connection's I/O thread, messages only as
 * gRPC {@link #request}s them. gRPC's server moves them onto the application's executor.
 */
final class ServerStreamImpl extends OpenCalls.Call implements io.grpc.internal.ServerStream {
    private final AsyncServerStream<Object, Object> stream;
    private final StatsTraceContext stats;
    private final Attributes attributes;
    private final String authority;
    private final int streamId;
    private final int maxInbound;
    private final ServerTransportImpl transport;
    private volatile ServerStreamListener listener;
    private volatile Compressor compressor = Codec.Identity.NONE;
    private volatile boolean messageCompression = true;
    private volatile Decompressor decompressor = Codec.Identity.NONE;
    private boolean reported;
    private int outSeq;
    private int inSeq;

    /** @param transport told once when the call is over (told to gRPC) */
    ServerStreamImpl(AsyncServerStream<Object, Object> stream, StatsTraceContext stats, Attributes attributes,
                     String authority, int maxInbound, ServerTransportImpl transport) {
        this.stream = stream;
        this.stats = stats;
        this.attributes = attributes;
        this.authority = authority;
        this.streamId = (int) stream.requestId();
        this.maxInbound = maxInbound;
        this.transport = transport;
    }

    /** @return the listener of the rdmarpc stream (its callbacks run one at a time, on the I/O thread) */
    StreamListener<Object> listener() {
        return new StreamListener<>() {
            @Override
            public void onMessage(Object m) {
                received(m);
            }

            @Override
            public void onReady() {
                synchronized (ServerStreamImpl.this) {
                    if (!reported && listener != null) {
                        listener.onReady();
                    }
                }
            }

            @Override
            public void onHalfClose() {
                synchronized (ServerStreamImpl.this) {
                    if (!reported) {
                        listener.halfClosed();
                    }
                }
            }

            @Override
            public void onEnd(RpcException failure, dev.rdmarpc.rpc.Metadata metadata) {
                if (failure == null) {
                    report(Status.OK); // the close went out
                } else if (failure.status() == dev.rdmarpc.rpc.Status.DEADLINE_EXCEEDED) {
                    report(Status.DEADLINE_EXCEEDED.withDescription("the call's deadline passed"));
                } else if (failure.status() == dev.rdmarpc.rpc.Status.CANCELLED) {
                    report(Status.CANCELLED.withDescription("the client cancelled the call or went away"));
                } else {
                    report(Headers.statusOf(failure));
                }
            }
        };
    }

    private void received(Object m) {
        if (m instanceof Wire.TooLarge tl) {
            cancel(Status.RESOURCE_EXHAUSTED.withDescription("gRPC message exceeds maximum size " + maxInbound
                    + ": " + tl.length()));
            return;
        }
        if (!(m instanceof ReceivedMessage received)) {
            cancel(Status.INTERNAL.withDescription("a client sent headers inside its stream"));
            return;
        }
        InputStream body = received;
        if (received.kind == Wire.COMPRESSED) {
            Decompressor d = decompressor;
            if (d == Codec.Identity.NONE) {
                received.release();
                cancel(Status.INTERNAL.withDescription("a compressed message came without a grpc-encoding"));
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
            if (!reported) {
                listener.messagesAvailable(new SingleMessage(body)); // gRPC closes it once parsed, or dropped
                return;
            }
        }
        received.release();
    }

    /** Tells gRPC once that the call ended, and how. */
    private void report(Status status) {
        synchronized (this) {
            if (reported) {
                return;
            }
            reported = true;
        }
        stats.streamClosed(status);
        ServerStreamListener l = listener;
        if (l != null) {
            l.closed(status);
        }
        transport.ended(this);
    }

    /** The server stops now (shutdownNow): the client is told UNAVAILABLE, gRPC that the call was cancelled. */
    void stopNow() {
        Status s = Status.UNAVAILABLE.withDescription("the server stopped the call (shutdownNow)");
        report(Status.CANCELLED.withDescription("the call was stopped"));
        stream.close(Headers.trailers(s, new Metadata()));
    }

    @Override
    public void setListener(ServerStreamListener listener) {
        this.listener = listener;
    }

    @Override
    public void writeHeaders(Metadata headers, boolean flush) {
        send(Headers.headersOut(headers, transport.headersOut));
    }

    @Override
    public void writeMessage(InputStream message) {
        Object out = Wire.Out.message(message, messageCompression && compressor != Codec.Identity.NONE ? compressor : null);
        int length = Wire.length(out);
        int seq = outSeq++;
        stats.outboundMessage(seq);
        stats.outboundMessageSent(seq, length, -1);
        if (send(out)) {
            MessageCopies.sentMessage();
        }
    }

    private boolean send(Object out) {
        try {
            stream.send(out); // written now, or queued in the stream: never waits
            return true;
        } catch (IllegalStateException e) {
            return false; // closed already: gRPC wrote after its close or cancel
        } catch (RpcException e) {
            cancel(Headers.statusOf(e));
            return false;
        }
    }

    @Override
    public void close(Status status, Metadata trailers) {
        stream.close(Headers.trailers(status, trailers)); // after what is queued; onEnd reports it
    }

    @Override
    public void cancel(Status status) {
        synchronized (this) {
            if (reported) {
                return;
            }
        }
        report(status); // first: the stream's end, once sent, must not be reported as a success
        stream.close(Headers.trailers(status, new Metadata()));
    }

    @Override
    public void request(int numMessages) {
        stream.request(numMessages);
    }

    @Override
    public boolean isReady() {
        return stream.isReady();
    }

    @Override
    public void setOnReadyThreshold(int numBytes) {
        // readiness is the client's window: a send is ready while it goes out at once
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
    public void setDecompressor(Decompressor decompressor) {
        this.decompressor = decompressor;
    }

    @Override
    public Attributes getAttributes() {
        return attributes;
    }

    @Override
    public String getAuthority() {
        return authority;
    }

    @Override
    public StatsTraceContext statsTraceContext() {
        return stats;
    }

    @Override
    public int streamId() {
        return streamId;
    }
}
