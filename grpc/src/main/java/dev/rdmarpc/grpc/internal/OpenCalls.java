package dev.rdmarpc.grpc.internal;

import java.util.ArrayList;
import java.util.List;

/**
 * The calls of a transport that are open, so that {@code shutdownNow} can end them: a list linked
 * through the calls themselves ({@link Call}), so that adding and removing a call allocates nothing.
 * Thread-safe.
 *
 * @param <T> the calls
 */
final class OpenCalls<T extends OpenCalls.Call> {
    /** What a call keeps of the list it is on (guarded by the list). */
    abstract static class Call {
        Call prev;
        Call next;
        boolean listed;
    }

    private Call head;
    private int size;

    /** @return whether the list was empty before {@code call} was added */
    synchronized boolean add(T call) {
        if (call.listed) {
            return false;
        }
        call.listed = true;
        call.prev = null;
        call.next = head;
        if (head != null) {
            head.prev = call;
        }
        head = call;
        return size++ == 0;
    }

    /** @return whether {@code call} was on the list */
    synchronized boolean remove(T call) {
        if (!call.listed) {
            return false;
        }
        call.listed = false;
        if (call.prev != null) {
            call.prev.next = call.next;
        } else {
            head = call.next;
        }
        if (call.next != null) {
            call.next.prev = call.prev;
        }
        call.prev = null;
        call.next = null;
        size--;
        return true;
    }

    synchronized boolean isEmpty() {
        return size == 0;
    }

    /** @return the calls open now, a copy */
    @SuppressWarnings("unchecked")
    synchronized List<T> snapshot() {
        List<T> all = new ArrayList<>(size);
        for (Call c = head; c != null; c = c.next) {
            all.add((T) c);
        }
        return all;
    }
}
