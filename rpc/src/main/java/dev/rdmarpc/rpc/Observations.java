package dev.rdmarpc.rpc;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

/**
 * The registrations a server, client or pool made with its builder's {@link Observability}s, closed once, in
 * the reverse order of their making.
 */
final class Observations {
    private static final System.Logger LOG = System.getLogger(Observations.class.getName());
    static final Observations NONE = new Observations(List.of());

    private final List<AutoCloseable> registrations;
    private boolean closed;

    private Observations(List<AutoCloseable> registrations) {
        this.registrations = registrations;
    }

    /**
     * Registers {@code owner} (a server, client or pool just made) with each observability; when one
     * throws, closes the registrations made, then the owner, and rethrows.
     *
     * @param observers  the builder's observabilities, in order
     * @param register   how one registers the owner
     * @param closeOwner closes the owner
     * @return the registrations
     */
    static Observations register(List<Observability> observers, Function<Observability, AutoCloseable> register,
                                 Runnable closeOwner) {
        if (observers.isEmpty()) {
            return NONE;
        }
        Observations made = new Observations(new ArrayList<>(observers.size()));
        try {
            for (Observability o : observers) {
                made.registrations.add(java.util.Objects.requireNonNull(register.apply(o), "observe returned null"));
            }
        } catch (RuntimeException e) {
            made.close();
            closeOwner.run();
            throw e;
        }
        return made;
    }

    /** Closes every registration once, the last made first; a failure is logged and the others still closed. */
    synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        for (int i = registrations.size() - 1; i >= 0; i--) {
            try {
                registrations.get(i).close();
            } catch (Exception e) {
                LOG.log(System.Logger.Level.WARNING, "closing an observability registration failed", e);
            }
        }
    }
}
