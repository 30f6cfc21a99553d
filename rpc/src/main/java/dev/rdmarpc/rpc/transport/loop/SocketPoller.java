package dev.rdmarpc.rpc.transport.loop;

import dev.rdmarpc.posix.Epoll;
import dev.rdmarpc.posix.Posix;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

/**
 * The TCP sockets (listening and connected, {@link PolledSocket}) a loop thread waits on beside
 * descriptors of its own, which a {@code Selector} can neither join nor hand its sockets to: they sit
 * in one {@code epoll} descriptor ({@link #fd}), which the thread puts in its own {@code poll(2)} set
 * as one more; when it is readable, {@link #dispatch} takes the ready sockets without waiting and
 * calls each one's {@link Handler}. A wait costs the same with one socket or thousands. Interests
 * and events are {@code poll}'s bits, which are epoll's on Linux. A handler may
 * change interests, register sockets and cancel any registration (its own too) while it runs.
 *
 * <p>Loop thread only, but the constructor. Ownership: its thread {@link #close}s it once, after its
 * sockets' registrations were cancelled (each socket's owner cancels, then closes its descriptor).
 */
public final class SocketPoller implements AutoCloseable {
    /** Most events one {@link #dispatch} takes; more stay ready for the next (level triggered). */
    private static final int BATCH = 64;

    /** What a registration's owner does when its descriptor is ready. */
    @FunctionalInterface
    public interface Handler {
        /**
         * @param key     the registration
         * @param revents what is ready, as {@code poll} says it: {@link Posix#POLLIN},
         *                {@code Sockets.POLLOUT}, {@link Posix#POLLERR}, {@link Posix#POLLHUP} (a reader
         *                then reads the end of the stream or the error)
         */
        void ready(Key key, int revents);
    }

    /** One descriptor's registration: what it waits for and who is told. */
    public final class Key {
        private final int fd;
        private final Handler handler;
        /** Its slot in {@link #bySlot} and that slot's use count: what its epoll events carry. */
        private final long id;
        private int interest;
        private boolean watched;
        private boolean cancelled;
        /** Whatever its owner keeps with it. */
        public Object attachment;

        private Key(int fd, Handler handler, long id) {
            this.fd = fd;
            this.handler = handler;
            this.id = id;
        }

        /** @return the descriptor */
        public int fd() {
            return fd;
        }

        /** @return the events it waits for */
        public int interest() {
            return interest;
        }

        /**
         * Waits for {@code events} from now on. With none, the descriptor leaves the epoll set: a
         * hung-up socket reports a hang-up whatever it waits for, and the thread would spin on it.
         */
        public void interest(int events) {
            if (cancelled || events == interest) {
                return;
            }
            interest = events;
            if (events == 0) {
                Epoll.remove(epfd, fd, scratch);
                watched = false;
            } else if (watched) {
                Epoll.modify(epfd, fd, events, id, scratch);
            } else {
                Epoll.add(epfd, fd, events, id, scratch);
                watched = true;
            }
        }

        /** @return whether {@link SocketPoller#cancel} removed it */
        public boolean isCancelled() {
            return cancelled;
        }
    }

    private final Arena arena = Arena.ofShared();
    private final int epfd;
    private final MemorySegment events = Epoll.events(arena, BATCH);
    private final MemorySegment scratch = Epoll.events(arena, 1);
    private final List<Key> keys = new ArrayList<>();
    /** Registrations by slot (the low 32 bits of an id); null where free. */
    private Key[] bySlot = new Key[16];
    private int[] slotUses = new int[16];
    private final List<Integer> freeSlots = new ArrayList<>();
    private int nextSlot;
    /** Run after each handler (the loop's flush of what it committed), or null. */
    private final Runnable afterEach;
    private boolean closed;

    /** A poller that runs nothing between handlers. */
    public SocketPoller() {
        this(null);
    }

    /** @param afterEach run after each handler called, e.g. to flush what it committed before the next socket is read */
    public SocketPoller(Runnable afterEach) {
        this.afterEach = afterEach;
        this.epfd = Epoll.create();
    }

    /** @return the epoll descriptor: readable while a registered socket is ready, for the thread's {@code poll} */
    public int fd() {
        return epfd;
    }

    /**
     * Registers {@code fd} (which its owner keeps open until it cancels this).
     *
     * @param events what to wait for: {@link Posix#POLLIN}, {@code Sockets.POLLOUT} or both
     */
    public Key register(int fd, int events, Handler handler) {
        int slot = freeSlots.isEmpty() ? nextSlot++ : freeSlots.remove(freeSlots.size() - 1);
        if (slot >= bySlot.length) {
            bySlot = java.util.Arrays.copyOf(bySlot, 2 * bySlot.length);
            slotUses = java.util.Arrays.copyOf(slotUses, 2 * slotUses.length);
        }
        Key k = new Key(fd, handler, (long) ++slotUses[slot] << 32 | slot);
        bySlot[slot] = k;
        keys.add(k);
        k.interest(events);
        return k;
    }

    /** Stops polling {@code key}'s descriptor; its handler is not called again. Idempotent. */
    public void cancel(Key key) {
        if (key.cancelled) {
            return;
        }
        if (key.watched) {
            key.watched = false;
            try {
                Epoll.remove(epfd, key.fd, scratch);
            } catch (dev.rdmarpc.posix.PosixException e) {
                // closed before it was cancelled: the kernel dropped it from the set with its last reference
            }
        }
        key.cancelled = true;
        keys.remove(key);
        int slot = (int) key.id;
        bySlot[slot] = null;
        freeSlots.add(slot);
    }

    /** @return the registrations */
    public int size() {
        return keys.size();
    }

    /** @return the registrations now, in the order they were made */
    public List<Key> keys() {
        return List.copyOf(keys);
    }

    /**
     * Takes the sockets ready now (up to {@value #BATCH}) and calls their handlers, but of those
     * cancelled meanwhile. Allocates nothing.
     *
     * @return the number of handlers called
     */
    public int dispatch() {
        int n = Epoll.await(epfd, events, BATCH, 0);
        int called = 0;
        for (int i = 0; i < n; i++) {
            long id = Epoll.data(events, i);
            Key k = bySlot[(int) id];
            if (k == null || k.id != id || k.cancelled) {
                continue; // cancelled by an earlier handler of this batch (its slot maybe taken again)
            }
            called++;
            k.handler.ready(k, Epoll.mask(events, i) & 0xffff);
            if (afterEach != null) {
                afterEach.run();
            }
        }
        return called;
    }

    /** Closes the epoll descriptor and frees its memory, once; the sockets are their owners' to close. */
    @Override
    public void close() {
        if (!closed) {
            closed = true;
            Posix.close(epfd);
            arena.close();
        }
    }
}
