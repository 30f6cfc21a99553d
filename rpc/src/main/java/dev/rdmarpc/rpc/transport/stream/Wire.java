package dev.rdmarpc.rpc.transport.stream;

import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * What a {@link TcpConnection} reads from and writes to: the socket itself ({@link PlainWire}) or TLS
 * over it ({@link TlsWire}). Loop thread only.
 */
interface Wire {
    /** @return bytes read into {@code dst}, 0 for none now, -1 at the end of the stream */
    int read(ByteBuffer dst) throws IOException;

    /**
     * Writes from {@code srcs[offset .. offset + length)}, advancing their positions.
     *
     * @return bytes of theirs taken (over TLS: encrypted, and perhaps not all on the socket yet:
     *         {@link #hasPendingOutput})
     */
    long write(ByteBuffer[] srcs, int offset, int length) throws IOException;

    /** Writes what earlier calls left for the socket. @return true when nothing is left */
    boolean flushPending() throws IOException;

    /** @return true while bytes this wire owes the socket wait for it to take them */
    boolean hasPendingOutput();

    /** @return true when application bytes may be written (over TLS: once the handshake is done) */
    boolean ready();

    /** @return true when a read could return bytes without the socket being readable (TLS records already in) */
    boolean hasBufferedInput();
}
