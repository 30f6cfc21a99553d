package dev.rdmarpc.grpc.internal;

import dev.rdmarpc.grpc.MessageCopies;
import dev.rdmarpc.rpc.RpcException;
import dev.rdmarpc.rpc.ServerStream;
import io.grpc.Attributes;
import io.grpc.Codec;
import io.grpc.Compressor;
import io.grpc.Decompressor;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.internal.ServerStreamListener;
import io.grpc.internal.StatsTraceContext;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;

/**
 * The server's end of one gRPC call, on the rdmarpc stream handler's thread: that thread sends what
 * gRPC queued (headers, messages, then the close, whose trailers end the stream) and a second
 * (virtual) thread receives while the application asks for messages.
 */
final class ServerStreamImpl implements io.grpc.internal.ServerStream {
    /** The call's end as gRPC gave it; the last item of the send queue. */
    private record Close(Status status, Metadata trailers) {
    }

    private final ServerStream<Object, Object> stream;
    private final StatsTraceContext stats;
    private final Attributes attributes;
    private final String authority;
    private final int streamId;
    private final int maxInbound;
    private final StreamQueue queue;
    private volatile ServerStreamListener listener;
    private volatile Compressor compressor = Codec.Identity.NONE;
    private volatile boolean messageCompression = true;
    private volatile Decompressor decompressor = Codec.Identity.NONE;
    private boolean reported;
    private volatile boolean closing;
    private int outSeq;
    private int inSeq;

    ServerStreamImpl(ServerStream<Object, Object> stream, StatsTraceContext stats, Attributes attributes, String authority,
                     int maxInbound) {
        this.stream = stream;
        this.stats = stats;
        this.attributes = attributes;
        this.authority = authority;
        this.streamId = (int) stream.requestId();
        this.maxInbound = maxInbound;
        this.queue = new StreamQueue(this::fireReady);
    }

    /** Runs the call on the handler's thread until it ends; the stream ends when this returns. */
    void run() {
        stream.onCancel(() -> {
            Status s = stream.remainingNanos() <= 0 ? Status.DEADLINE_EXCEEDED.withDescription("the call's deadline passed")
                    : Status.CANCELLED.withDescription("the client cancelled the call or went away");
            report(s);
        });
        Thread reader = Thread.ofVirtual().name("rdmarpc-grpc-receive").start(this::receive);
        queue.opened();
        try {
            while (true) {
                Object item = queue.take();
                if (item == StreamQueue.STOP) {
                    return;
                }
                if (item instanceof Close c) {
                    stream.responseMetadata(Headers.trailers(c.status(), c.trailers()));
                    report(Status.OK);
                    return;
                }
                Wire.Out out = (Wire.Out) item;
                stream.send(out);
                if (out.kind != Wire.HEADERS) {
                    MessageCopies.sentMessage();
                }
                queue.sent(out.length);
            }
        } catch (RpcException e) {
            report(Headers.statusOf(e));
        } catch (InterruptedException e) {
            // the client cancelled (it hears nothing more) or the server is stopping now (shutdownNow): say so
            Status s = Status.UNAVAILABLE.withDescription("the server stopped the call (shutdownNow)");
            stream.responseMetadata(Headers.trailers(s, new Metadata()));
            report(Status.CANCELLED.withDescription("the call was stopped"));
        } catch (RuntimeException e) {
            Status s = Status.INTERNAL.withDescription("sending failed: " + e).withCause(e);
            stream.responseMetadata(Headers.trailers(s, new Metadata()));
            report(s);
        } finally {
            closing = true;
            queue.stop();
            reader.interrupt();
        }
    }

    private void receive() {
        try {
            while (!closing) {
                if (!queue.awaitDemand() || closing) {
                    return;
                }
                Object m = stream.receive();
                if (closing) {
                    return;
                }
                if (m == null) {
                    synchronized (this) {
                        if (!reported) {
                            listener.halfClosed();
                        }
                    }
                    return;
                }
                if (m instanceof Wire.TooLarge tl) {
                    Status s = Status.RESOURCE_EXHAUSTED.withDescription("gRPC message exceeds maximum size " + maxInbound
                            + ": " + tl.length());
                    cancel(s);
                    return;
                }
                Wire.In in = (Wire.In) m;
                if (in.kind() == Wire.HEADERS) {
                    throw new IllegalArgumentException("a client sent headers inside its stream");
                }
                deliver(in);
            }
        } catch (RpcException e) {
            if (!closing) {
                report(Headers.statusOf(e));
                queue.stop();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (RuntimeException e) {
            if (!closing) {
                cancel(Status.INTERNAL.withDescription("receiving failed: " + e).withCause(e));
            }
        }
    }

    private void deliver(Wire.In in) {
        InputStream body = new ByteArrayInputStream(in.body());
        if (in.kind() == Wire.COMPRESSED) {
            Decompressor d = decompressor;
            if (d == Codec.Identity.NONE) {
                cancel(Status.INTERNAL.withDescription("a compressed message came without a grpc-encoding"));
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
            if (!reported) {
                listener.messagesAvailable(new SingleMessage(message));
            }
        }
    }

    private void fireReady() {
        synchronized (this) {
            if (!reported && listener != null) {
                listener.onReady();
            }
        }
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
        listener.closed(status);
    }

    @Override
    public void setListener(ServerStreamListener listener) {
        this.listener = listener;
    }

    @Override
    public void writeHeaders(Metadata headers, boolean flush) {
        queue.put(Wire.Out.headers(Headers.block(headers)));
    }

    @Override
    public void writeMessage(InputStream message) {
        Wire.Out out = Wire.Out.message(message, messageCompression && compressor != Codec.Identity.NONE ? compressor : null);
        int seq = outSeq++;
        stats.outboundMessage(seq);
        stats.outboundMessageSent(seq, out.length, -1);
        queue.put(out);
    }

    @Override
    public void close(Status status, Metadata trailers) {
        queue.putLast(new Close(status, trailers));
    }

    @Override
    public void cancel(Status status) {
        synchronized (this) {
            if (reported) {
                return;
            }
        }
        report(status); // first: the sender, once it has sent the close, must not report it as a success
        queue.putLast(new Close(status, new Metadata()));
    }

    @Override
    public void request(int numMessages) {
        queue.request(numMessages);
    }

    @Override
    public boolean isReady() {
        return queue.isReady();
    }

    @Override
    public void setOnReadyThreshold(int numBytes) {
        queue.readyThreshold(numBytes);
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
