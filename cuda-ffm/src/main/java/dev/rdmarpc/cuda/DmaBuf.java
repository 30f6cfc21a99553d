package dev.rdmarpc.cuda;

import dev.rdmarpc.posix.Posix;

import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A dma-buf file descriptor for a range of device memory ({@link CudaContext#exportDmaBuf}), what
 * {@code ibv_reg_dmabuf_mr(pd, offset, length, iova, fd, access)} takes to let a NIC read and write
 * GPU memory. The descriptor is owned by this object and closed once by {@link #close()}; the NIC
 * registration keeps its own reference to the buffer, so the descriptor may be closed right after
 * registering. Thread-safe.
 */
public final class DmaBuf implements AutoCloseable {
    /** The host page size ({@code getpagesize()}); dma-buf ranges are aligned to it. */
    public static final long PAGE_SIZE = Posix.pageSize();

    private final int fd;
    private final long address;
    private final long length;
    private final AtomicBoolean closed = new AtomicBoolean();

    DmaBuf(int fd, long address, long length) {
        this.fd = fd;
        this.address = address;
        this.length = length;
    }

    /** @return the file descriptor */
    public int fd() {
        return fd;
    }

    /** @return the device address of the exported range's first byte (offset 0 of the dma-buf) */
    public long address() {
        return address;
    }

    /** @return the exported length in bytes */
    public long length() {
        return length;
    }

    /**
     * Closes the descriptor (once).
     *
     * @throws IllegalStateException when {@code close(2)} fails, with its errno (the descriptor is
     *                               released all the same)
     */
    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            int errno = Posix.close(fd);
            if (errno != 0) {
                throw new IllegalStateException("close(" + fd + ") of a dma-buf failed: " + Posix.strerror(errno)
                        + " (errno " + errno + ")");
            }
        }
    }

    @Override
    public String toString() {
        return "DmaBuf[fd " + fd + ", 0x" + Long.toHexString(address) + ", " + length + " bytes"
                + (closed.get() ? ", closed" : "") + "]";
    }
}
