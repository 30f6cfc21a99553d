package dev.rdmarpc.rpc;

import java.util.Collection;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;

/**
 * What a server answers to {@link Health#CHECK}, per service: {@link RpcServer#health()}. The application
 * sets a service's state (taking it out of a load balancer's rotation while it warms up or degrades, say);
 * the server reports {@link Health.ServingStatus#NOT_SERVING} for every service once it is shutting down,
 * whatever was set. Thread-safe.
 */
public final class ServerHealth {
    private final Map<String, Health.ServingStatus> statuses = new ConcurrentHashMap<>();
    private volatile boolean shuttingDown;

    /** @param services the services the server has methods of; they and "" start SERVING */
    ServerHealth(Collection<String> services) {
        statuses.put("", Health.ServingStatus.SERVING);
        for (String s : services) {
            statuses.put(s, Health.ServingStatus.SERVING);
        }
    }

    /**
     * Sets what the server reports for {@code service}, until set again (or the server shuts down).
     *
     * @param service a service name ({@code ""}: the server as a whole)
     * @param status  {@link Health.ServingStatus#SERVING} or {@link Health.ServingStatus#NOT_SERVING}
     * @throws IllegalArgumentException for {@link Health.ServingStatus#UNKNOWN}: use {@link #clear}
     */
    public void set(String service, Health.ServingStatus status) {
        Objects.requireNonNull(service, "service");
        if (Objects.requireNonNull(status, "status") == Health.ServingStatus.UNKNOWN) {
            throw new IllegalArgumentException("a service is set SERVING or NOT_SERVING; clear(service) forgets it");
        }
        statuses.put(service, status);
    }

    /**
     * Forgets {@code service}: it is then reported {@link Health.ServingStatus#UNKNOWN}.
     *
     * @param service a service name
     */
    public void clear(String service) {
        statuses.remove(Objects.requireNonNull(service, "service"));
    }

    /**
     * @param service a service name ({@code ""}: the server as a whole)
     * @return what a health check of it is answered now
     */
    public Health.ServingStatus check(String service) {
        Health.ServingStatus s = statuses.get(Objects.requireNonNull(service, "service"));
        if (s == null) {
            return Health.ServingStatus.UNKNOWN;
        }
        return shuttingDown ? Health.ServingStatus.NOT_SERVING : s;
    }

    /** The server started shutting down: every known service is NOT_SERVING from now on. */
    void shuttingDown() {
        shuttingDown = true;
    }
}
