package dev.rdmarpc.ibverbs.verbs;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * What every resource of this layer shares: one native object, one owner, closed exactly once, and
 * never before its dependents.
 *
 * <h2>Ownership</h2>
 * A resource is created by its parent ({@link Context#allocateProtectionDomain()},
 * {@link ProtectionDomain#register}, ...) and depends on it (and on the other resources it was
 * created with: a {@link QueuePair} depends on its protection domain, its completion queues and its
 * shared receive queue). While a resource is open, its parents count it as a dependent and
 * <b>refuse to close</b>: {@link #close()} of a parent with open dependents throws an
 * {@link IllegalStateException} that names how many there are, and leaves the parent open. Close in
 * reverse order of creation (try-with-resources does exactly that).
 *
 * <h2>Closing</h2>
 * {@link #close()} is idempotent: a compare-and-set on the state moves the first caller from open
 * to closing; later (or concurrent) calls return without doing anything. The native object is
 * destroyed once; if libibverbs refuses (a {@link dev.rdmarpc.ibverbs.VerbsException}), the
 * resource stays open and counted, and close may be retried. Using a closed resource throws
 * {@link IllegalStateException}.
 *
 * <h2>Threads</h2>
 * Opening, closing and dependency tracking are thread-safe. Closing a resource while another
 * thread is still using it (posting, polling) is a bug of the caller that this layer does not
 * detect: the native object may be freed under the other thread. Each type says which of its
 * methods may be called concurrently.
 */
public abstract sealed class VerbsResource implements AutoCloseable
        permits Context, ProtectionDomain, MemoryRegion, MemoryWindow, CompletionChannel, CompletionQueue,
        SharedReceiveQueue, QueuePair, AsyncEventMonitor {
    private static final int OPEN = 0;
    private static final int CLOSING = 1;
    private static final int CLOSED = 2;
    private static final VarHandle STATE;

    static {
        try {
            STATE = MethodHandles.lookup().findVarHandle(VerbsResource.class, "state", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final ResourceKind kind;
    private final VerbsResource[] parents;
    private final AtomicInteger dependents = new AtomicInteger();
    private volatile int state;

    /**
     * A resource whose native object exists and whose {@code parents} have already been
     * {@link #acquire(VerbsResource...) acquired}; counts it in {@link VerbsResources}.
     */
    VerbsResource(ResourceKind kind, VerbsResource... parents) {
        this.kind = kind;
        this.parents = parents;
        VerbsResources.onCreated(kind);
    }

    /** The kind of native object this is. */
    public final ResourceKind kind() {
        return kind;
    }

    /** Whether the resource is open (not closing or closed). */
    public final boolean isOpen() {
        return state == OPEN;
    }

    /** How many open resources depend on this one (and keep it from closing). */
    public final int dependents() {
        return dependents.get();
    }

    /**
     * Destroys the native object, once.
     *
     * @throws IllegalStateException when resources that depend on this one are still open; this one
     *                               stays open
     * @throws dev.rdmarpc.ibverbs.VerbsException when libibverbs refuses to destroy it; it stays open
     */
    @Override
    public final void close() {
        if (!STATE.compareAndSet(this, OPEN, CLOSING)) {
            return;
        }
        int open = dependents.get();
        if (open != 0) {
            state = OPEN;
            throw new IllegalStateException("cannot close " + this + ": " + open + " dependent resource"
                    + (open == 1 ? " is" : "s are") + " still open (close them first)");
        }
        try {
            destroy();
        } catch (RuntimeException | Error e) {
            state = OPEN;
            throw e;
        }
        state = CLOSED;
        VerbsResources.onDestroyed(kind);
        for (int i = parents.length - 1; i >= 0; i--) {
            if (parents[i] != null) {
                parents[i].dependents.decrementAndGet();
            }
        }
    }

    /** Destroys the native object; called once, by {@link #close()}, when no dependent is open. */
    abstract void destroy();

    /** Throws when closed: the guard of every operation (one volatile read). */
    final void ensureOpen() {
        if (state != OPEN) {
            throw new IllegalStateException(this + " is closed");
        }
    }

    /**
     * Registers a dependent on each non-null resource, failing (and registering nothing) when one is
     * closed. Pair with {@link #release(VerbsResource...)} when creating the dependent fails.
     */
    static void acquire(VerbsResource... resources) {
        for (int i = 0; i < resources.length; i++) {
            VerbsResource r = resources[i];
            if (r == null) {
                continue;
            }
            r.dependents.incrementAndGet();
            if (r.state != OPEN) {
                r.dependents.decrementAndGet();
                for (int j = i - 1; j >= 0; j--) {
                    if (resources[j] != null) {
                        resources[j].dependents.decrementAndGet();
                    }
                }
                throw new IllegalStateException(r + " is closed");
            }
        }
    }

    /** Undoes {@link #acquire(VerbsResource...)}. */
    static void release(VerbsResource... resources) {
        for (VerbsResource r : resources) {
            if (r != null) {
                r.dependents.decrementAndGet();
            }
        }
    }
}
