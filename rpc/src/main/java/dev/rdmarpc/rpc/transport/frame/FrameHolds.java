package dev.rdmarpc.rpc.transport.frame;

import dev.rdmarpc.rpc.buffer.PooledBuffer;
import dev.rdmarpc.rpc.transport.FrameHold;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.Executor;

/**
 * The frames of one connection kept past their handler ({@link dev.rdmarpc.rpc.transport.Connection#holdFrame}):
 * at most {@link #MAX_HELD} at a time, each one of a fixed set of reusable holds, so holding a frame
 * allocates nothing. A hold is taken on the I/O thread; its release, from any thread, hands it back to
 * the I/O thread (at once when it is made there), which gives the frame's memory back through the
 * connection's {@link Keeper} and frees the hold for another frame.
 */
public final class FrameHolds {
    /** Frames one connection keeps at most; past it, a reader copies what it keeps. */
    public static final int MAX_HELD = 16;

    /** Gives a held frame's memory back; on the I/O thread. */
    public interface Keeper {
        /**
         * @param buffer the buffer the frame lies in, as given to {@link #hold}
         * @param slot   the transport's mark for it, as given to {@link #hold}
         */
        void giveBack(PooledBuffer buffer, int slot);
    }

    private static final VarHandle STATE;

    static {
        try {
            STATE = MethodHandles.lookup().findVarHandle(Hold.class, "state", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private static final int FREE = 0;
    private static final int HELD = 1;
    private static final int RELEASED = 2;

    private final Executor ioThread;
    private final Keeper keeper;
    // the I/O thread's
    private final Hold[] free = new Hold[MAX_HELD];
    private int freeCount;
    private volatile int held;

    /**
     * @param ioThread runs a task on the connection's I/O thread (at once when called there)
     * @param keeper   gives a released frame's memory back
     */
    public FrameHolds(Executor ioThread, Keeper keeper) {
        this.ioThread = ioThread;
        this.keeper = keeper;
        for (int i = 0; i < MAX_HELD; i++) {
            free[freeCount++] = new Hold();
        }
    }

    /**
     * Keeps a frame (I/O thread): the caller has made sure its memory stays as it is until the keeper
     * gets it back.
     *
     * @return the hold, or null when {@link #MAX_HELD} frames are held already
     */
    public FrameHold hold(PooledBuffer buffer, int slot) {
        if (freeCount == 0) {
            return null;
        }
        Hold h = free[--freeCount];
        free[freeCount] = null;
        h.buffer = buffer;
        h.slot = slot;
        STATE.setRelease(h, HELD);
        held = MAX_HELD - freeCount;
        return h;
    }

    /** @return true when a frame can be held now (I/O thread) */
    public boolean canHold() {
        return freeCount > 0;
    }

    /** @return the frames held now (any thread; a snapshot) */
    public int held() {
        return held;
    }

    private final class Hold implements FrameHold, Runnable {
        @SuppressWarnings("unused") // through STATE
        private volatile int state;
        private PooledBuffer buffer;
        private int slot;

        @Override
        public void release() {
            if (STATE.compareAndSet(this, HELD, RELEASED)) {
                ioThread.execute(this);
            }
        }

        /** On the I/O thread: the memory goes back, and the hold is free for another frame. */
        @Override
        public void run() {
            PooledBuffer b = buffer;
            int s = slot;
            buffer = null;
            STATE.setRelease(this, FREE);
            free[freeCount++] = this;
            held = MAX_HELD - freeCount;
            keeper.giveBack(b, s);
        }
    }
}
