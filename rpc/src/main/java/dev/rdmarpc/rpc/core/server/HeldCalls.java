package dev.rdmarpc.rpc.core.server;

/**
 * The calls a connection holds, by request id: an open-addressing table of primitive ids, so that
 * finding the call of each stream frame, and holding and forgetting a call, box no {@code Long}
 * and allocate no entry. Held and found on the I/O thread, forgotten from any thread (a call ends
 * where its handler ends it); all under this object's lock, which is uncontended but for a call
 * ending while its connection's I/O thread looks up another.
 */
final class HeldCalls {
    private static final int INITIAL_CAPACITY = 16;

    /** Ids and calls, a slot free where its call is null; the length a power of two, at most half full. */
    private long[] ids = new long[INITIAL_CAPACITY];
    private HeldCall[] calls = new HeldCall[INITIAL_CAPACITY];
    private volatile int size;

    /** @return whether no call is held (without the lock) */
    boolean isEmpty() {
        return size == 0;
    }

    /** Holds {@code call} under its id, in place of a call held under the same id. */
    synchronized void put(HeldCall call) {
        if (2 * (size + 1) > calls.length) {
            grow();
        }
        int mask = calls.length - 1;
        int i = slot(call.id, mask);
        while (calls[i] != null && ids[i] != call.id) {
            i = (i + 1) & mask;
        }
        if (calls[i] == null) {
            size++;
        }
        ids[i] = call.id;
        calls[i] = call;
    }

    /** @return the call held under {@code id}, or null */
    synchronized HeldCall get(long id) {
        int mask = calls.length - 1;
        for (int i = slot(id, mask); calls[i] != null; i = (i + 1) & mask) {
            if (ids[i] == id) {
                return calls[i];
            }
        }
        return null;
    }

    /** Forgets {@code call} if it is the one held under its id. */
    synchronized void remove(HeldCall call) {
        int mask = calls.length - 1;
        int i = slot(call.id, mask);
        while (calls[i] != null && ids[i] != call.id) {
            i = (i + 1) & mask;
        }
        if (calls[i] != call) {
            return;
        }
        // backward shift: move later entries of the probe run into the gap, so lookups need no tombstones
        int gap = i;
        for (int j = (gap + 1) & mask; calls[j] != null; j = (j + 1) & mask) {
            int home = slot(ids[j], mask);
            if (((j - home) & mask) >= ((j - gap) & mask)) {
                ids[gap] = ids[j];
                calls[gap] = calls[j];
                gap = j;
            }
        }
        calls[gap] = null;
        size--;
    }

    /**
     * Copies the calls held into {@code into}, or into a larger array when they do not fit, so that
     * the caller can act on them without the lock (acting may end them).
     *
     * @return the array holding them, null after the last
     */
    synchronized HeldCall[] snapshot(HeldCall[] into) {
        HeldCall[] out = into.length > size ? into : new HeldCall[Math.max(INITIAL_CAPACITY, Integer.highestOneBit(size) * 2)];
        int n = 0;
        for (HeldCall c : calls) {
            if (c != null) {
                out[n++] = c;
            }
        }
        out[n] = null;
        return out;
    }

    private void grow() {
        long[] oldIds = ids;
        HeldCall[] oldCalls = calls;
        ids = new long[oldIds.length * 2];
        calls = new HeldCall[oldCalls.length * 2];
        int mask = calls.length - 1;
        for (int k = 0; k < oldCalls.length; k++) {
            if (oldCalls[k] != null) {
                int i = slot(oldIds[k], mask);
                while (calls[i] != null) {
                    i = (i + 1) & mask;
                }
                ids[i] = oldIds[k];
                calls[i] = oldCalls[k];
            }
        }
    }

    private static int slot(long id, int mask) {
        long h = id * 0x9E3779B97F4A7C15L; // request ids count up: spread them
        return (int) (h >>> 32) & mask;
    }
}
