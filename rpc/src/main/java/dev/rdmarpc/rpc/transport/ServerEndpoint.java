package dev.rdmarpc.rpc.transport;

import java.net.InetSocketAddress;

/** A listening endpoint of a {@link Transport}. Thread-safe. */
public interface ServerEndpoint extends AutoCloseable {
    /** @return the bound address (with the real port when 0 was asked for) */
    InetSocketAddress address();

    /** Stops accepting; connections already accepted stay open. Idempotent. */
    @Override
    void close();
}
