package dev.rdmarpc.grpc.internal;

import io.grpc.Detachable;
import io.grpc.Drainable;
import io.grpc.HasByteBuffer;
import io.grpc.KnownLength;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;

/**
 * A received message as gRPC's marshaller reads it: its bytes, copied once out of the receive
 * buffer, read in place. It says its length ({@link KnownLength}), drains into a stream in one write
 * ({@link Drainable}), and lends its bytes as a heap {@link ByteBuffer} ({@link HasByteBuffer},
 * {@link Detachable}), so that protobuf parses straight from this array without copying it again.
 * The array is never reused, so a parsed message may keep referring to it.
 */
final class ReceivedMessage extends InputStream implements KnownLength, Drainable, HasByteBuffer, Detachable {
    private byte[] bytes;
    private int pos;
    private int end;

    ReceivedMessage(byte[] bytes) {
        this.bytes = bytes;
        this.end = bytes.length;
    }

    private ReceivedMessage(byte[] bytes, int pos) {
        this.bytes = bytes;
        this.pos = pos;
        this.end = bytes.length;
    }

    @Override
    public int read() {
        return pos < end ? bytes[pos++] & 0xff : -1;
    }

    @Override
    public int read(byte[] b, int off, int len) {
        if (len == 0) {
            return 0;
        }
        int n = Math.min(len, end - pos);
        if (n <= 0) {
            return -1;
        }
        System.arraycopy(bytes, pos, b, off, n);
        pos += n;
        return n;
    }

    @Override
    public long skip(long n) {
        int k = (int) Math.max(0, Math.min(n, end - pos));
        pos += k;
        return k;
    }

    @Override
    public int available() {
        return end - pos;
    }

    @Override
    public int drainTo(OutputStream target) throws IOException {
        int n = end - pos;
        target.write(bytes, pos, n);
        pos = end;
        return n;
    }

    @Override
    public boolean byteBufferSupported() {
        return true;
    }

    @Override
    public ByteBuffer getByteBuffer() {
        return pos < end ? ByteBuffer.wrap(bytes, pos, end - pos).slice() : null;
    }

    @Override
    public InputStream detach() {
        ReceivedMessage d = new ReceivedMessage(bytes, pos);
        bytes = new byte[0];
        pos = 0;
        end = 0;
        return d;
    }
}
