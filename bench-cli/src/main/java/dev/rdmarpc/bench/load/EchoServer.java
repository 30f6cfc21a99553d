package dev.rdmarpc.bench.load;

import java.net.InetSocketAddress;

/** A running echo server of some {@link EchoStack}; the caller that started it owns it and closes it once. */
public interface EchoServer extends AutoCloseable {

    /** The address the server listens on (the real port when it was started on port 0). */
    InetSocketAddress address();

    /** Stops the server and frees what it holds; idempotent. */
    @Override
    void close();
}
