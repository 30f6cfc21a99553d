package dev.rdmarpc.ibverbs.verbs;

import dev.rdmarpc.ibverbs.VerbsException;
import dev.rdmarpc.ibverbs.VerbsNative;
import dev.rdmarpc.ibverbs.raw.ibv_async_event;
import dev.rdmarpc.ibverbs.raw.ibverbs_h;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * A daemon thread that reads a device's asynchronous events and hands them to a listener
 * ({@link Context#startAsyncEvents}). Events are port state changes
 * ({@link AsyncEventType#PORT_ACTIVE}, {@link AsyncEventType#PORT_ERR}), queue pair faults
 * ({@link AsyncEventType#QP_FATAL}, ...), CQ errors and SRQ limits.
 *
 * <h2>How it works</h2>
 * The context's async fd is made non-blocking; the thread waits in {@code poll(2)} on it and on an
 * eventfd of its own, reads every pending event with {@code ibv_get_async_event} (until EAGAIN),
 * calls the listener and acknowledges each with {@code ibv_ack_async_event}. {@link #close()}
 * signals the eventfd and joins the thread (at most the listener's running time), then closes the
 * eventfd: no timeouts or interrupts involved.
 *
 * <p>Depends on its {@link Context}. One monitor per context (two would steal each other's events).
 * {@link #close()} is thread-safe but must not be called from the listener.
 */
public final class AsyncEventMonitor extends VerbsResource {
    private static final System.Logger LOG = System.getLogger(AsyncEventMonitor.class.getName());

    private final Context context;
    private final AsyncEventListener listener;
    private final int wakeFd;
    private final int asyncFd;
    private final Arena arena = Arena.ofShared();
    private final MemorySegment wakeScratch;
    private final Thread thread;
    private final CountDownLatch stopped = new CountDownLatch(1);
    private volatile boolean stopping;
    private volatile Throwable failure;

    AsyncEventMonitor(Context context, AsyncEventListener listener) {
        super(ResourceKind.ASYNC_EVENT_MONITOR, context);
        this.context = context;
        this.listener = listener;
        this.wakeScratch = arena.allocate(8);
        this.asyncFd = context.asyncFd();
        int fd;
        try {
            Posix.setNonBlocking(asyncFd);
            fd = Posix.eventfd();
        } catch (RuntimeException e) {
            arena.close();
            VerbsResources.onDestroyed(ResourceKind.ASYNC_EVENT_MONITOR);
            throw e;
        }
        this.wakeFd = fd;
        this.thread = Thread.ofPlatform().daemon().name("rdmarpc-verbs-async-" + context.name()).unstarted(this::run);
        thread.start();
    }

    /** The device. */
    public Context context() {
        return context;
    }

    private void run() {
        try (Arena local = Arena.ofConfined()) {
            MemorySegment fds = local.allocate(Posix.POLLFD_BYTES * 2);
            MemorySegment event = ibv_async_event.allocate(local);
            MemorySegment scratch = local.allocate(8);
            while (!stopping) {
                Posix.pollfd(fds, 0, asyncFd, Posix.POLLIN);
                Posix.pollfd(fds, 1, wakeFd, Posix.POLLIN);
                Posix.poll(fds, 2, -1);
                if ((Posix.revents(fds, 1) & Posix.POLLIN) != 0) {
                    Posix.drain(wakeFd, scratch);
                }
                if (stopping) {
                    break;
                }
                if (Posix.revents(fds, 0) == 0) {
                    continue;
                }
                while (!stopping && next(event)) {
                    deliver(event);
                }
            }
        } catch (Throwable t) {
            failure = t;
            LOG.log(System.Logger.Level.ERROR, "async event monitor of " + context.name() + " failed", t);
        } finally {
            stopped.countDown();
        }
    }

    private boolean next(MemorySegment event) {
        try {
            VerbsNative.ibv_get_async_event(context.segment(), event);
            return true;
        } catch (VerbsException e) {
            if (e.errno() == Posix.EAGAIN) {
                return false;
            }
            throw e;
        }
    }

    private void deliver(MemorySegment event) {
        try {
            AsyncEventType type = AsyncEventType.of(ibv_async_event.event_type(event));
            MemorySegment element = ibv_async_event.element(event);
            int port = 0;
            long address = 0;
            if (type.element() == AsyncEventType.Element.PORT) {
                port = ibv_async_event.element.port_num(element);
            } else if (type.element() != AsyncEventType.Element.DEVICE) {
                address = ibv_async_event.element.qp(element).address(); // a union of pointers
            }
            AsyncEvent e = new AsyncEvent(context, type, port, address, address == 0 ? null : context.element(address));
            try {
                listener.onEvent(e);
            } catch (RuntimeException | Error ex) {
                LOG.log(System.Logger.Level.WARNING, "async event listener failed on " + e, ex);
            }
        } finally {
            ibverbs_h.ibv_ack_async_event(event);
        }
    }

    /** What stopped the thread other than {@link #close()} (logged too), or {@code null}. */
    public Throwable failure() {
        return failure;
    }

    /** Whether the thread is still running. */
    public boolean isRunning() {
        return stopped.getCount() != 0;
    }

    @Override
    void destroy() {
        if (Thread.currentThread() == thread) {
            throw new IllegalStateException("an async event listener cannot close its own monitor");
        }
        stopping = true;
        Posix.signal(wakeFd, wakeScratch);
        try {
            if (!stopped.await(30, TimeUnit.SECONDS)) {
                throw new IllegalStateException("async event listener of " + context.name() + " did not return in 30 s");
            }
            thread.join();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while stopping the async event monitor", e);
        }
        Posix.close(wakeFd);
        arena.close();
    }

    @Override
    public String toString() {
        return "AsyncEventMonitor[" + context.name() + "]";
    }
}
