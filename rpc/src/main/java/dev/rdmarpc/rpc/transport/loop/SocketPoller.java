package dev.rdmarpc.rpc.transport.loop;

import dev.rdmarpc.posix.Posix;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

/**
 * The TCP sockets (listening and connected, {@link PolledSocket}) a loop thread waits on with
 * {@code poll(2)} beside descriptors of its own: the thread writes their {@code struct pollfd}s into
 * its own array after its descriptors ({@link #fill}), polls the whole array, and hands the results
 * back ({@link #dispatch}), which calls each ready socket's {@link Handler}. A handler may change
 * interests, register sockets and cancel any registration (its own too) while it runs; a
 * registration made during a dispatch is polled from the next fill.
 *
 * <p>Loop thread only.
 */
public final class SocketPoller {
    /** What a registration's owner does when its descriptor is ready. */
    @FunctionalInterface
    public interface Handler {
        /**
         * @param key     the registration
         * @param revents what {@code poll} reported: {@link Posix#POLLIN}, {@code Sockets.POLLOUT},
         *                {@link Posix#POLLERR}, {@link Posix#POLLHUP} (a reader then reads the end of the
         *                stream or the error), {@link Posix#POLLNVAL} (the descriptor was closed while
         *                registered: the owner's bug)
         */
        void ready(Key key, int revents);
    }

    /** One descriptor's registration: what it waits for and who is told. */
    public static final class Key {
        private final int fd;
        private final Handler handler;
        private int interest;
        private boolean cancelled;
        /** Its pollfd's index in the last fill, or -1 when it was not polled then. */
        private int slot = -1;
        /** Whatever its owner keeps with it. */
        public Object attachment;

        private Key(int fd, int interest, Handler handler) {
            this.fd = fd;
            this.interest = interest;
            this.handler = handler;
        }

        /** @return the descriptor */
        public int fd() {
            return fd;
        }

        /** @return the events it waits for */
        public int interest() {
            return interest;
        }

        /** Waits for {@code events} from the next fill on (0: for nothing but errors and hang-ups). */
        public void interest(int events) {
            this.interest = events;
        }

        /** @return whether {@link SocketPoller#cancel} removed it */
        public boolean isCancelled() {
            return cancelled;
        }
    }

    private final List<Key> keys = new ArrayList<>();
    /** Run after each handler (the loop's flush of what it committed), or null. */
    private final Runnable afterEach;
    /** The registrations a dispatch walks, copied from {@link #keys} when it starts (handlers may change that list). */
    private Key[] walking = new Key[8];

    /** A poller that runs nothing between handlers. */
    public SocketPoller() {
        this(null);
    }

    /** @param afterEach run after each handler called, e.g. to flush what it committed before the next socket is read */
    public SocketPoller(Runnable afterEach) {
        this.afterEach = afterEach;
    }

    /**
     * Registers {@code fd} (which its owner keeps open until it cancels this).
     *
     * @param events what to wait for: {@link Posix#POLLIN}, {@code Sockets.POLLOUT} or both
     */
    public Key register(int fd, int events, Handler handler) {
        Key k = new Key(fd, events, handler);
        keys.add(k);
        return k;
    }

    /** Stops polling {@code key}'s descriptor; its handler is not called again. Idempotent. */
    public void cancel(Key key) {
        if (!key.cancelled) {
            key.cancelled = true;
            keys.remove(key);
        }
    }

    /** @return the registrations (a fill writes this many pollfds) */
    public int size() {
        return keys.size();
    }

    /** @return the registrations now, for closing them all */
    public List<Key> keys() {
        return List.copyOf(keys);
    }

    /**
     * Writes one {@code struct pollfd} per registration into {@code fds} from index {@code from}.
     *
     * @param fds room for at least {@code from + size()} pollfds
     * @return the number written ({@link #size()})
     */
    public int fill(MemorySegment fds, int from) {
        int n = keys.size();
        for (int i = 0; i < n; i++) {
            Key k = keys.get(i);
            k.slot = from + i;
            // a descriptor that waits for nothing is left out (-1): a hung-up socket would report
            // POLLHUP on every poll, its interests notwithstanding, and the thread would spin
            Posix.pollfd(fds, from + i, k.interest == 0 ? -1 : k.fd, k.interest);
        }
        return n;
    }

    /**
     * Calls the handler of each registration the last {@link #fill} wrote and {@code poll} found
     * ready, unless it was cancelled meanwhile. Allocates nothing but, when the registrations
     * outgrew it, a bigger array to walk them.
     *
     * @return the number of handlers called
     */
    public int dispatch(MemorySegment fds) {
        int n = keys.size();
        if (walking.length < n) {
            walking = new Key[Math.max(n, 2 * walking.length)];
        }
        for (int i = 0; i < n; i++) {
            walking[i] = keys.get(i);
        }
        int called = 0;
        for (int i = 0; i < n; i++) {
            Key k = walking[i];
            walking[i] = null;
            if (k.cancelled || k.slot < 0) {
                continue;
            }
            int revents = Posix.revents(fds, k.slot) & 0xffff;
            k.slot = -1;
            if (revents != 0) {
                called++;
                k.handler.ready(k, revents);
                if (afterEach != null) {
                    afterEach.run();
                }
            }
        }
        return called;
    }
}
