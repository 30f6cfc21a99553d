package dev.rdmarpc.grpc.internal;

import dev.rdmarpc.grpc.MessageCopies;
import dev.rdmarpc.rpc.transport.FrameHold;
import io.grpc.Detachable;
import io.grpc.Drainable;
import io.grpc.HasByteBuffer;
import io.grpc.KnownLength;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;

/**
 * A received message as gRPC's marshaller reads it, in place: in the transport's receive buffer, which
 * the transport keeps for it ({@link dev.rdmarpc.rpc.transport.Connection#holdFrame}) until it is read
 * and closed, or, where the transport could not keep the frame, in the one array it was copied into. It
 * says its length ({@link KnownLength}), drains into a stream ({@link Drainable}), lends its bytes as a
 * {@link ByteBuffer} ({@link HasByteBuffer}), and detaches ({@link Detachable}): a detached stream owns
 * its bytes, so a message held in the receive buffer is copied out then (counted) and the buffer given back.
 *
 * <p>The receive buffer goes back exactly once: on {@link #close} (gRPC closes every message it parsed,
 * and those it drops), on {@link #detach}, or when the stream drops the message unread ({@link #release}).
 * One thread reads it at a time, as gRPC does.
 */
final class ReceivedMessage extends InputStream
        implements KnownLength, Drainable, HasByteBuffer, Detachable, FrameHold {
    private static final VarHandle HOLD;

    static {
        try {
            HOLD = MethodHandles.lookup().findVarHandle(ReceivedMessage.class, "hold", FrameHold.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** What a message reads from once it was released or detached: nothing. */
    private static final byte[] NO_BYTES = new byte[0];

    /** {@link Wire#MESSAGE} or {@link Wire#COMPRESSED}. */
    final byte kind;
    /** The message's length as it came (what gRPC's tracers are told). */
    final int length;
    /** The receive buffer the message lies in, while held; else null. */
    private MemorySegment segment;
    /** The message's own array, when it was copied; else null. */
    private byte[] bytes;
    private long pos;
    private long end;
    @SuppressWarnings("unused") // through HOLD
    private volatile FrameHold hold;

    private ReceivedMessage(byte kind, MemorySegment segment, byte[] bytes, long pos, long end, FrameHold hold) {
        this.kind = kind;
        this.segment = segment;
        this.bytes = bytes;
        this.pos = pos;
        this.end = end;
        this.length = (int) (end - pos);
        this.hold = hold;
    }

    /** A message read where it lies in the receive buffer, which {@code hold} keeps until it is released. */
    static ReceivedMessage held(byte kind, MemorySegment buffer, long offset, int length, FrameHold hold) {
        return new ReceivedMessage(kind, buffer, null, offset, offset + length, hold);
    }

    /** A message in its own array (copied out of the receive buffer: the caller counted the copy). */
    static ReceivedMessage copied(byte kind, byte[] bytes) {
        return new ReceivedMessage(kind, null, bytes, 0, bytes.length, null);
    }

    /** @return true while the message lies in a receive buffer kept for it */
    boolean isHeld() {
        return segment != null && hold != null;
    }

    @Override
    public int read() {
        if (pos >= end) {
            return -1;
        }
        long at = pos++;
        return (segment != null ? segment.get(ValueLayout.JAVA_BYTE, at) : bytes[(int) at]) & 0xff;
    }

    @Override
    public int read(byte[] b, int off, int len) {
        if (len == 0) {
            return 0;
        }
        int n = (int) Math.min(len, end - pos);
        if (n <= 0) {
            return -1;
        }
        if (segment != null) {
            MemorySegment.copy(segment, ValueLayout.JAVA_BYTE, pos, b, off, n);
        } else {
            System.arraycopy(bytes, (int) pos, b, off, n);
        }
        pos += n;
        return n;
    }

    @Override
    public long skip(long n) {
        long k = Math.max(0, Math.min(n, end - pos));
        pos += k;
        return k;
    }

    @Override
    public int available() {
        return (int) (end - pos);
    }

    @Override
    public int drainTo(OutputStream target) throws IOException {
        int n = available();
        if (segment == null) {
            target.write(bytes, (int) pos, n);
        } else {
            byte[] chunk = new byte[Math.min(n, 8192)];
            for (int left = n; left > 0; ) {
                int k = read(chunk, 0, Math.min(left, chunk.length));
                target.write(chunk, 0, k);
                left -= k;
            }
        }
        pos = end;
        return n;
    }

    @Override
    public boolean byteBufferSupported() {
        return true;
    }

    @Override
    public ByteBuffer getByteBuffer() {
        if (pos >= end) {
            return null;
        }
        if (segment != null) {
            return segment.asSlice(pos, end - pos).asByteBuffer().asReadOnlyBuffer();
        }
        return ByteBuffer.wrap(bytes, (int) pos, (int) (end - pos)).slice();
    }

    /**
     * @return a stream that owns what is left of the message: its array moves there; a message in the
     *         receive buffer is copied into an array of its own (one receive copy) and the buffer given back
     */
    @Override
    public InputStream detach() {
        byte[] own;
        if (segment != null) {
            own = new byte[available()];
            MemorySegment.copy(segment, ValueLayout.JAVA_BYTE, pos, own, 0, own.length);
            MessageCopies.receiveCopy();
            release();
        } else if (pos == 0) {
            own = bytes;
        } else {
            own = java.util.Arrays.copyOfRange(bytes, (int) pos, (int) end);
        }
        bytes = NO_BYTES;
        segment = null;
        pos = 0;
        end = 0;
        return copied(kind, own);
    }

    /** Gives the receive buffer back (once; later calls, and calls on a copied message, do nothing); the message reads as empty after it. */
    @Override
    public void release() {
        FrameHold h = (FrameHold) HOLD.getAndSet(this, (FrameHold) null);
        if (h != null) {
            pos = end;
            segment = null;
            bytes = NO_BYTES;
            h.release();
            MessageCopies.held(-1);
        }
    }

    @Override
    public void close() {
        release();
    }
}
