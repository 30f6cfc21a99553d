package dev.rdmarpc.bench.load;

import java.net.InetSocketAddress;

/**
 * One RPC stack under test, as the bench sees it: an echo server and client connections to one.
 *
 * <p>The echo contract is the same for every stack: the request's payload follows
 * {@link EchoProtocol} and the server answers with {@link EchoProtocol#responseBytes} bytes. A stack with a
 * streaming workload ({@link Workload#stream}) serves a server-streaming method beside the echo on the same
 * server, and its connections open streams ({@link EchoConnection#openStream}).
 * Implementations must be thread-safe; the bench calls these methods from one thread.
 */
public interface EchoStack extends AutoCloseable {

    /** Short name used in the output, e.g. {@code rdmarpc-tcp} or {@code grpc-java}. */
    String name();

    /** One line on how this stack is set up (version, transport, threads), printed with the results. */
    String describe(StackOptions options);

    /** One line on how this stack runs {@code workload}; by default {@link #describe(StackOptions)}. */
    default String describe(StackOptions options, Workload workload) {
        return describe(options);
    }

    /**
     * Starts an echo server bound to {@code bindAddress} (port 0 picks a free port), serving the streaming
     * method too where the stack has one.
     *
     * @throws Exception when the server cannot start; the message must say why in one sentence
     */
    EchoServer startServer(InetSocketAddress bindAddress, StackOptions options) throws Exception;

    /**
     * Opens one client connection to an echo server of this stack.
     *
     * @throws Exception when the connection cannot be made; the message must say why in one sentence
     */
    EchoConnection connect(InetSocketAddress serverAddress, StackOptions options) throws Exception;

    /**
     * What the first TLS connection to a server of this stack negotiated, its protocol and cipher suite
     * (e.g. {@code TLSv1.3 TLS_AES_256_GCM_SHA384}), as the server saw it; {@code null} without TLS, before
     * a call has reached such a server, or where the stack cannot tell.
     */
    default String tlsNegotiated() {
        return null;
    }

    /** Frees what the stack shares between its connections (client event loops and the like); idempotent. */
    @Override
    default void close() {
    }
}
