package dev.rdmarpc.ibverbs.verbs;

import dev.rdmarpc.ibverbs.VerbsInline;
import dev.rdmarpc.ibverbs.VerbsNative;
import dev.rdmarpc.ibverbs.raw.ibv_mw;

import java.lang.foreign.MemorySegment;

/**
 * A type-2 memory window ({@code struct ibv_mw}, {@link ProtectionDomain#allocateMemoryWindow()}): a
 * remote key for one sub-range of a {@link MemoryRegion}, bound and revoked by work requests on a
 * queue pair's send queue instead of by system calls, so that a peer can be given exactly one buffer
 * for exactly one operation and lose it afterwards.
 *
 * <h2>Life of a binding</h2>
 * <ol>
 * <li>Register the memory with {@link Access#MW_BIND} ({@link Access#LOCAL_WRITE} too when the window
 *     is to allow remote writes). The region itself needs no remote access bits: then its own rkey
 *     reaches nothing, and only the window's key does.</li>
 * <li>Post a {@link SendWorkRequest#bindMemoryWindow(MemoryWindow, int, MemoryRegion, long, long, int)
 *     BIND_MW} work request on an RC queue pair of the same domain, with the new key
 *     {@link #nextRkey(int) nextRkey}{@code (rkey())}, the range and the window's access. When it has
 *     completed successfully, record the key with {@link #bound(int)} and hand the peer the address and
 *     the key. A type-2 window is associated with the queue pair that bound it: the peer reaches it
 *     through that connection only.</li>
 * <li>Revoke the key with a {@link SendWorkRequest#localInvalidate(int) LOCAL_INV} work request, or
 *     let the peer revoke it with {@link SendWorkRequest#sendWithInvalidate SEND_WITH_INV} (the receive
 *     completion reports the key, {@link WorkCompletions#invalidatedRkey(int)}). From then on the key
 *     reaches nothing.</li>
 * <li>Only an invalidated (free) type-2 window may be bound again, and with the next key.</li>
 * </ol>
 *
 * <p>Soft-RoCE (rxe, kernel 6.12) checks an access through a window's key against the bounds of the
 * region the window is bound to, not against the window's own range: there a window opens its whole
 * region (with the window's access), and where the range matters the range must be a region of its own.
 * A bind rxe refuses completes with {@link WcStatus#WR_FLUSH_ERR}, not {@link WcStatus#MW_BIND_ERR}.
 * ({@code MemoryWindowRdmaTest} shows both.)
 *
 * <p>Depends on its {@link ProtectionDomain}, which refuses to close while the window is open.
 * {@link #close()} frees it ({@code ibv_dealloc_mw}) once, bound or not; close windows before the
 * regions they may be bound to (a device may refuse to deregister a region with bound windows).
 * {@link #rkey()} and {@link #bound(int)} read and write the native {@code struct ibv_mw}: call them
 * from the thread that posts this window's binds. The other getters are thread-safe.
 */
public final class MemoryWindow extends VerbsResource {
    private final ProtectionDomain pd;
    private final MemorySegment mw;
    private final int handle;

    MemoryWindow(ProtectionDomain pd, MemorySegment mw) {
        super(ResourceKind.MEMORY_WINDOW, pd);
        this.pd = pd;
        this.mw = mw.reinterpret(ibv_mw.sizeof());
        this.handle = ibv_mw.handle(this.mw);
    }

    /** The domain the window was allocated in (and may be bound to regions of). */
    public ProtectionDomain protectionDomain() {
        return pd;
    }

    /** The native {@code struct ibv_mw *}, what a bind work request names the window by. */
    public MemorySegment segment() {
        return mw;
    }

    /** The kernel's handle of the window ({@code ibv_mw.handle}). */
    public int handle() {
        return handle;
    }

    /**
     * The key as it is now in {@code struct ibv_mw}: the key the provider allocated until a binding is
     * recorded with {@link #bound(int)}, then the key of the last binding. Providers read this field
     * as the window's current key when a bind work request is posted.
     *
     * @throws IllegalStateException when the window is closed
     */
    public int rkey() {
        ensureOpen();
        return ibv_mw.rkey(mw);
    }

    /**
     * Records the key of a bind work request that has completed successfully in {@code struct ibv_mw}
     * ({@code mw->rkey = wr.bind_mw.rkey}, as C code does after a type-2 bind): libibverbs does not
     * update the field for binds posted as work requests, and the next bind is matched against it
     * (Soft-RoCE fails a bind whose window's key is stale, and its queue pair with it).
     *
     * @param rkey the {@code newRkey} the completed bind work request carried
     * @return this window
     * @throws IllegalStateException when the window is closed
     */
    public MemoryWindow bound(int rkey) {
        ensureOpen();
        ibv_mw.rkey(mw, rkey);
        return this;
    }

    /**
     * The key for the next binding of a window whose current key is {@code rkey}, as
     * {@code ibv_inc_rkey} computes it: the upper 24 bits (the window's index) stay, the low 8 bits
     * (the key tag the consumer owns) count up by one, wrapping from 0xff to 0x00. Each bind of a
     * type-2 window must use a new key whose low 8 bits differ, so that a key handed out for an earlier
     * binding can no longer reach the memory; after 256 bindings a tag comes round again.
     */
    public static int nextRkey(int rkey) {
        return (rkey & 0xffffff00) | ((rkey + 1) & 0xff);
    }

    @Override
    void destroy() {
        VerbsNative.check("ibv_dealloc_mw", VerbsInline.ibv_dealloc_mw(mw));
    }

    @Override
    public String toString() {
        return "MemoryWindow[" + pd.context().name() + ", handle " + handle + "]";
    }
}
