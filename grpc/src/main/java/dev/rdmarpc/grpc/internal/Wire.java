package dev.rdmarpc.grpc.internal;

import dev.rdmarpc.grpc.MessageCopies;
import dev.rdmarpc.rpc.Method;
import dev.rdmarpc.rpc.codec.HoldingCodec;
import dev.rdmarpc.rpc.transport.Connection;
import dev.rdmarpc.rpc.transport.FrameHold;
import io.grpc.Compressor;
import io.grpc.Drainable;
import io.grpc.KnownLength;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * What a gRPC call's rdmarpc stream carries: every message of the stream is one byte of kind
 * ({@link #MESSAGE}, {@link #COMPRESSED} or {@link #HEADERS}) and its body. The call's request
 * headers travel with the stream's opening, its trailers (and status) with the stream's end.
 */
final class Wire {
    /** The rdmarpc method every gRPC call is a stream of; the gRPC method travels in {@link Headers#PATH}. */
    static final String METHOD_NAME = "grpc";
    /** A message, as the marshaller wrote it. */
    static final byte MESSAGE = 0;
    /** A message compressed by the encoding named in the headers' {@code grpc-encoding}. */
    static final byte COMPRESSED = 1;
    /** The server's response headers, as an rdmarpc metadata block. */
    static final byte HEADERS = 2;

    private Wire() {
    }

    /**
     * @param maxInbound the largest message body this end accepts; a longer one decodes to {@link TooLarge}
     * @return the stream method with a codec that writes {@link Out}s and drainable message streams and reads {@link In}s
     */
    static Method<Object, Object> method(int maxInbound) {
        Cached c = last;
        if (c != null && c.maxInbound() == maxInbound) {
            return c.method(); // calls of a channel share their limit: one method, not one per call
        }
        FrameCodec codec = new FrameCodec(maxInbound);
        Method<Object, Object> m = Method.of(METHOD_NAME, codec, codec);
        last = new Cached(maxInbound, m);
        return m;
    }

    /** The method of the last limit asked for. */
    private record Cached(int maxInbound, Method<Object, Object> method) {
    }

    private static volatile Cached last;

    /** A message read into an array (compressed, or from a stream that cannot be drained), or headers, to send. */
    static final class Out {
        final byte kind;
        final byte[] bytes;
        final int length;

        private Out(byte kind, byte[] bytes, int length) {
            this.kind = kind;
            this.bytes = bytes;
            this.length = length;
        }

        static Out headers(byte[] block) {
            return new Out(HEADERS, block, block.length);
        }

        /**
         * A message from a marshaller's stream: a {@code Drainable} with a known length is sent as
         * the stream itself, not wrapped (the codec drains it straight into the send buffer, and it
         * is not read before); anything else (or a compressed message) is read into an array first,
         * which counts as a copy, and sent as an {@code Out}.
         *
         * @return the stream, or an {@code Out}: what the stream's {@code send} takes
         */
        static Object message(InputStream message, Compressor compressor) {
            try {
                if (compressor != null) {
                    ByteArrayOutputStream bos = new ByteArrayOutputStream();
                    try (OutputStream c = compressor.compress(bos)) {
                        message.transferTo(c);
                    }
                    MessageCopies.sendCopy();
                    byte[] b = bos.toByteArray();
                    MessageCopies.sendCopy();
                    return new Out(COMPRESSED, b, b.length);
                }
                if (message instanceof Drainable && message instanceof KnownLength) {
                    return message;
                }
                byte[] b = message.readAllBytes();
                MessageCopies.sendCopy();
                return new Out(MESSAGE, b, b.length);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }

    /** @return the body length of what {@link Out#message} gave */
    static int length(Object out) {
        if (out instanceof Out o) {
            return o.length;
        }
        try {
            return ((InputStream) out).available(); // known length, nothing read yet
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * The server's response headers received: the block copied out of the receive buffer, shared by
     * the calls that receive the same bytes (only read).
     */
    record In(byte kind, byte[] body) {
    }

    /** A message longer than the receiver's maximum: its bytes were not copied. */
    record TooLarge(int length) {
    }

    /**
     * Writes {@link Out}s; reads a message as a {@link ReceivedMessage} left in the receive buffer where the
     * connection keeps the frame ({@link Connection#holdFrame}), else copied into an array (counted).
     */
    private static final class FrameCodec implements HoldingCodec<Object> {
        private final int maxInbound;
        /**
         * The last response headers decoded, with their bytes: the same bytes again (a channel's calls
         * mostly get the same response headers) decode to the same immutable {@link In}, not a copy.
         */
        private volatile LastHeaders lastHeaders;

        FrameCodec(int maxInbound) {
            this.maxInbound = maxInbound;
        }

        @Override
        public int encodedSize(Object value) {
            return 1 + length(value);
        }

        @Override
        public void encode(Object value, MemorySegment dst, long offset) {
            if (value instanceof Out out) {
                dst.set(ValueLayout.JAVA_BYTE, offset, out.kind);
                MemorySegment.copy(out.bytes, 0, dst, ValueLayout.JAVA_BYTE, offset + 1, out.length);
                if (out.kind != HEADERS) {
                    MessageCopies.sendCopy();
                }
                return;
            }
            int length = length(value);
            dst.set(ValueLayout.JAVA_BYTE, offset, MESSAGE);
            SegmentOutput target = new SegmentOutput(dst, offset + 1, length);
            try {
                int n = ((Drainable) value).drainTo(target);
                if (n != length) {
                    throw new IllegalStateException("the marshaller's stream gave " + n + " bytes, not the "
                            + length + " it announced");
                }
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            MessageCopies.sendCopy();
        }

        /** @return the headers block at {@code at}: the last one decoded when its bytes are the same, else a copy */
        private In headers(MemorySegment src, long at, int length) {
            LastHeaders last = lastHeaders;
            if (last != null && last.bytes().byteSize() == length
                    && MemorySegment.mismatch(src, at, at + length, last.bytes(), 0, length) < 0) {
                return last.in();
            }
            byte[] body = new byte[length];
            MemorySegment.copy(src, ValueLayout.JAVA_BYTE, at, body, 0, length);
            In in = new In(HEADERS, body); // its array is only read, never changed
            lastHeaders = new LastHeaders(in, MemorySegment.ofArray(body));
            return in;
        }

        @Override
        public Object decode(MemorySegment src, long offset, int length) {
            return decode(src, offset, length, null);
        }

        @Override
        public Object decode(MemorySegment src, long offset, int length, Connection connection) {
            if (length < 1) {
                throw new IllegalArgumentException("an empty stream message: it has no kind byte");
            }
            byte kind = src.get(ValueLayout.JAVA_BYTE, offset);
            if (kind != MESSAGE && kind != COMPRESSED && kind != HEADERS) {
                throw new IllegalArgumentException("unknown message kind " + kind);
            }
            int bodyLength = length - 1;
            if (kind != HEADERS && bodyLength > maxInbound) {
                return new TooLarge(bodyLength);
            }
            if (kind != HEADERS && connection != null) {
                FrameHold hold = connection.holdFrame();
                if (hold != null) {
                    MessageCopies.held(1);
                    return ReceivedMessage.held(kind, src, offset + 1, bodyLength, hold);
                }
            }
            if (kind == HEADERS) {
                return headers(src, offset + 1, bodyLength);
            }
            byte[] body = new byte[bodyLength];
            MemorySegment.copy(src, ValueLayout.JAVA_BYTE, offset + 1, body, 0, bodyLength);
            MessageCopies.receiveCopy();
            return ReceivedMessage.copied(kind, body);
        }
    }

    /** Response headers decoded, and their bytes as a segment to compare with. */
    private record LastHeaders(In in, MemorySegment bytes) {
    }

    /** Writes into a slice of the send buffer; bounded by the announced length. */
    private static final class SegmentOutput extends OutputStream {
        private final MemorySegment dst;
        private final long end;
        private long at;

        SegmentOutput(MemorySegment dst, long at, int length) {
            this.dst = dst;
            this.at = at;
            this.end = at + length;
        }

        @Override
        public void write(int b) throws IOException {
            check(1);
            dst.set(ValueLayout.JAVA_BYTE, at++, (byte) b);
        }

        @Override
        public void write(byte[] b, int off, int len) throws IOException {
            check(len);
            MemorySegment.copy(b, off, dst, ValueLayout.JAVA_BYTE, at, len);
            at += len;
        }

        private void check(int n) throws IOException {
            if (at + n > end) {
                throw new IOException("the marshaller's stream is longer than the length it announced");
            }
        }
    }
}
