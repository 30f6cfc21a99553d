package dev.rdmarpc.rpc;

import dev.rdmarpc.rpc.codec.Codec;
import dev.rdmarpc.rpc.codec.Codecs;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.Objects;

/**
 * The health method every {@link RpcServer} answers, and the client's way of asking it: whether a server
 * serves a given service, for a load balancer, an orchestrator's probe or a {@link RpcClientPool} (which,
 * with {@link RpcClientPool.Builder#healthCheck}, stops sending to an endpoint that does not).
 * {@snippet :
 * Health.ServingStatus s = Health.check(channel, "Greeter", Duration.ofSeconds(1));
 * server.health().set("Greeter", Health.ServingStatus.NOT_SERVING);   // on the server
 * }
 *
 * <p>The request is a service name: the part of method names before their last {@code '/'}
 * ({@code "Greeter"} for {@code "Greeter/hello"}), or {@code ""} for the server as a whole. The server
 * answers (see {@link ServerHealth}) {@link ServingStatus#SERVING} for {@code ""} and for each service it
 * has methods of, unless the application set otherwise; {@link ServingStatus#UNKNOWN} for a service it
 * neither has methods of nor was told about; and {@link ServingStatus#NOT_SERVING} for everything once it
 * is shutting down (then the call itself is refused with {@link Status#SHUTTING_DOWN}, which
 * {@link #check} reads as NOT_SERVING).
 */
public final class Health {
    /** The method's name; a server registers it itself, so an application may not register this name. */
    public static final String METHOD_NAME = "rdmarpc.Health/check";

    /** A service's state, as a server reports it. */
    public enum ServingStatus {
        /** The server does not know the service: no method of it registered, and the application never set it. */
        UNKNOWN,
        /** The service takes calls. */
        SERVING,
        /** The service takes no calls now (set by the application, or the server is shutting down). */
        NOT_SERVING
    }

    /** A {@link ServingStatus} as one byte, its ordinal. */
    static final Codec<ServingStatus> STATUS_CODEC = new Codec<>() {
        private final ServingStatus[] all = ServingStatus.values();

        @Override
        public int encodedSize(ServingStatus value) {
            return 1;
        }

        @Override
        public void encode(ServingStatus value, MemorySegment dst, long offset) {
            dst.set(ValueLayout.JAVA_BYTE, offset, (byte) value.ordinal());
        }

        @Override
        public ServingStatus decode(MemorySegment src, long offset, int length) {
            if (length != 1) {
                throw new IllegalArgumentException("a serving status is 1 byte, not " + length);
            }
            int i = src.get(ValueLayout.JAVA_BYTE, offset);
            if (i < 0 || i >= all.length) {
                throw new IllegalArgumentException("unknown serving status " + i);
            }
            return all[i];
        }
    };

    /** The health method: a service name in, its {@link ServingStatus} out. */
    public static final Method<String, ServingStatus> CHECK = Method.of(METHOD_NAME, Codecs.STRING, STATUS_CODEC);

    private Health() {
    }

    /**
     * Asks the server behind {@code channel} whether it serves {@code service}.
     *
     * @param channel a client, or a pool's channel
     * @param service a service name, {@code ""} for the whole server
     * @param timeout how long to wait for the answer
     * @return the server's answer; {@link ServingStatus#NOT_SERVING} when it refused the call because it is
     *         shutting down
     * @throws RpcException when the call failed otherwise (the server unreachable, the deadline passed, a
     *                      server without the health method: {@link Status#UNKNOWN_METHOD})
     */
    public static ServingStatus check(RpcChannel channel, String service, Duration timeout) {
        Objects.requireNonNull(service, "service");
        try {
            return channel.call(CHECK, service, timeout);
        } catch (RpcException e) {
            if (e.status() == Status.SHUTTING_DOWN) {
                return ServingStatus.NOT_SERVING;
            }
            throw e;
        }
    }

    /** @return the service part of a method name: before its last '/', or "" when it has none */
    static String serviceOf(String methodName) {
        int slash = methodName.lastIndexOf('/');
        return slash > 0 ? methodName.substring(0, slash) : "";
    }
}
