package dev.rdmarpc.rpc.transport.stream;

import java.lang.foreign.MemorySegment;
import java.lang.ref.WeakReference;
import java.nio.ByteBuffer;

/**
 * {@link ByteBuffer} views of callers' in-place payloads ({@link TcpSendRing#claimInPlace}), kept for
 * the next call with the same segment, so that a caller that sends from the same segments again
 * allocates nothing. One view may stand for several queued entries: a write puts each view in its
 * gather list once. Held weakly, so that the cache never keeps a caller's memory (an automatic
 * arena's) alive. Not thread-safe: used under the ring's send lock.
 */
final class InPlaceViews {
    private static final int SIZE = 16;
    @SuppressWarnings("unchecked")
    private final WeakReference<MemorySegment>[] keys = new WeakReference[SIZE];
    @SuppressWarnings("unchecked")
    private final WeakReference<ByteBuffer>[] views = new WeakReference[SIZE];

    /** @return a view of all of {@code segment}: the cached one, or a new one (then cached) */
    ByteBuffer of(MemorySegment segment) {
        int i = (int) (segment.address() >>> 12 ^ segment.address() >>> 20) & (SIZE - 1);
        MemorySegment k = keys[i] == null ? null : keys[i].get();
        ByteBuffer view = k == null ? null : views[i].get();
        if (view == null || k.address() != segment.address() || k.byteSize() != segment.byteSize()
                || !k.scope().equals(segment.scope()) || k.isReadOnly() != segment.isReadOnly()) {
            view = segment.asByteBuffer();
            keys[i] = new WeakReference<>(segment);
            views[i] = new WeakReference<>(view);
        }
        return view;
    }
}
