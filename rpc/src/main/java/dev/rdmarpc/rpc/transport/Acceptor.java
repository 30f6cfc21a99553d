package dev.rdmarpc.rpc.transport;

/** Gives each accepted connection its {@link FrameHandler}; called on the connection's I/O thread. */
@FunctionalInterface
public interface Acceptor {
    /**
     * @param connection the new connection
     * @return its frame handler
     */
    FrameHandler accept(Connection connection);
}
