package dev.rdmarpc.rpc.gpu;

import dev.rdmarpc.ibverbs.verbs.SendWorkRequest;
import java.lang.foreign.MemorySegment;

/**
 * One attachment buffer of a {@link GpuBufferPool}: {@link #capacity()} bytes of GPU memory and how
 * the NIC reaches them. In a direct mode ({@link GpuDirectMode#DMABUF}, {@link GpuDirectMode#PEER_MEMORY})
 * the NIC reads and writes the GPU memory itself; {@link GpuDirectMode#STAGED STAGED} pairs it with
 * pinned host memory the NIC registered ({@link #hostStaging()}), which the transport fills from the
 * GPU before a send and copies to the GPU after a receive.
 *
 * <p>Ownership: whoever acquired it calls {@link #release()} once. Not thread-safe; hand it over with
 * a happens-before edge.
 */
public final class GpuBuffer {
    private final GpuBufferPool pool;
    private final long deviceAddress;
    private final int capacity;
    private final long nicAddress;
    private final int lkey;
    private final int rkey;
    private final MemorySegment hostStaging;
    boolean inUse;

    GpuBuffer(GpuBufferPool pool, long deviceAddress, int capacity, long nicAddress, int lkey, int rkey,
              MemorySegment hostStaging) {
        this.pool = pool;
        this.deviceAddress = deviceAddress;
        this.capacity = capacity;
        this.nicAddress = nicAddress;
        this.lkey = lkey;
        this.rkey = rkey;
        this.hostStaging = hostStaging;
    }

    /** @return the GPU's ordinal */
    public int deviceOrdinal() {
        return pool.deviceOrdinal();
    }

    /** @return the device address of the first byte */
    public long deviceAddress() {
        return deviceAddress;
    }

    /** @return the size in bytes */
    public int capacity() {
        return capacity;
    }

    /** @return how the NIC reaches this buffer */
    public GpuDirectMode mode() {
        return pool.decision().mode();
    }

    /** @return the address the NIC uses: the device address in a direct mode, the host staging address when staged */
    public long nicAddress() {
        return nicAddress;
    }

    /** @return the local key of the region holding {@link #nicAddress()} */
    public int lkey() {
        return lkey;
    }

    /** @return the remote key of that region */
    public int rkey() {
        return rkey;
    }

    /** @return the pinned, NIC-registered host memory paired with this buffer when staged; {@link MemorySegment#NULL} otherwise */
    public MemorySegment hostStaging() {
        return hostStaging;
    }

    /**
     * Points a send work request at a message whose attachment is in this buffer: SGE 0 is the header
     * and payload in registered host memory, SGE 1 the attachment where the NIC reaches it (GPU memory,
     * or its host staging), and the SGE count 2. Headers never leave host memory, so they never need a
     * copy from the GPU. Writes the transport's preallocated work request in place; allocates nothing.
     *
     * @param wr               the entry being filled, of a batch with at least two SGEs per work request
     * @param hostAddress      the header's address in registered host memory
     * @param hostLength       header and payload bytes
     * @param hostLkey         the local key of the host region
     * @param attachmentLength bytes of this buffer to send, at most {@link #capacity()}
     * @return {@code wr}
     */
    public SendWorkRequest writeSges(SendWorkRequest wr, long hostAddress, int hostLength, int hostLkey,
                                     int attachmentLength) {
        if (attachmentLength < 0 || attachmentLength > capacity) {
            throw new IndexOutOfBoundsException("attachment of " + attachmentLength + " bytes in a " + capacity + "-byte GPU buffer");
        }
        return wr.sge(0, hostAddress, hostLength, hostLkey).sge(1, nicAddress, attachmentLength, lkey).sgeCount(2);
    }

    /** Returns the buffer to its pool; once. */
    public void release() {
        pool.release(this);
    }

    @Override
    public String toString() {
        return "GpuBuffer[GPU " + deviceOrdinal() + ", 0x" + Long.toHexString(deviceAddress) + ", " + capacity + " bytes, "
                + pool.decision().mode().label() + "]";
    }
}
