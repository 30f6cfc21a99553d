package dev.rdmarpc.rpc.transport.stream;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.concurrent.TimeUnit;

/**
 * A {@link TcpConnection}'s close with a last word ({@link dev.rdmarpc.rpc.transport.Connection#closeAfter}):
 * reading has stopped; once the responses owed are written, the last frame follows, then the output
 * is shut (a FIN after it), and whatever the peer still sends is read and dropped until it closes
 * too. Closing with unread bytes would send an RST, which can make the peer's kernel drop the very
 * bytes written last. Everything within {@link #LINGER_NANOS}, then the connection closes anyway.
 * Loop thread only.
 */
final class LastWord {
    /** Most time from the refusal to the close: 5 s. */
    static final long LINGER_NANOS = TimeUnit.SECONDS.toNanos(5);

    private final ByteBuffer frame;
    private final Throwable cause;
    private final long deadline;
    private boolean outputShut;
    /** {@link #frame}, as the wire's gathering write takes it. */
    private final ByteBuffer[] frames;

    LastWord(byte[] frame, Throwable cause, long now) {
        // direct: a polled socket writes from native memory only
        this.frame = ByteBuffer.allocateDirect(frame.length).put(frame).flip();
        this.frames = new ByteBuffer[] {this.frame};
        this.cause = cause;
        this.deadline = now + LINGER_NANOS;
    }

    /** @return the cause the connection closes with */
    Throwable cause() {
        return cause;
    }

    /** @return true once the linger time is over */
    boolean expired(long now) {
        return now - deadline >= 0;
    }
    /** @return true once the last frame is written and the output shut */
    boolean said() {
        return outputShut;
    }

    /**
     * Writes what the socket takes of the last frame; shuts the output once it is all written.
     *
     * @return true when done, false when the socket is full (wait for OP_WRITE)
     */
    boolean write(Wire wire, StreamSocket ch) throws IOException {
        if (!outputShut) {
            if (frame.hasRemaining()) {
                wire.write(frames, 0, 1);
            }
            if (frame.hasRemaining() || !wire.flushPending()) {
                return false;
            }
            ch.shutdownOutput();
            outputShut = true;
        }
        return true;
    }

    /**
     * Reads and drops what the peer still sends.
     *
     * @return true at the peer's end of stream, or when reading failed: close now
     */
    boolean drained(StreamSocket ch, ByteBuffer scratch) {
        try {
            for (int i = 0; i < 16; i++) {
                scratch.clear();
                int n = ch.read(scratch);
                if (n <= 0) {
                    return n < 0;
                }
            }
            return false;
        } catch (IOException e) {
            return true;
        }
    }
}
