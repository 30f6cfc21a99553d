package dev.rdmarpc.cuda;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.util.concurrent.atomic.AtomicBoolean;

import static java.lang.foreign.ValueLayout.JAVA_INT;

/**
 * A dma-buf file descriptor for a range of device memory ({@link CudaContext#exportDmaBuf}), what
 * {@code ibv_reg_dmabuf_mr(pd, offset, length, iova, fd, access)} takes to let a NIC read and write
 * GPU memory. The descriptor is owned by this object and closed once by {@link #close()}; the NIC
 * registration keeps its own reference to the buffer, so the descriptor may be closed right after
 * registering. Thread-safe.
 */
public final class DmaBuf implements AutoCloseable {
    /** The host page size ({@code getpagesize()}); dma-buf ranges are aligned to it. */
    public static final long PAGE_SIZE = Libc.pageSize();

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
     * @throws IllegalStateException when {@code close(2)} fails
     */
    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            int rc = Libc.close(fd);
            if (rc != 0) {
                throw new IllegalStateException("close(" + fd + ") of a dma-buf failed: " + rc);
            }
        }
    }

    @Override
    public String toString() {
        return "DmaBuf[fd " + fd + ", 0x" + Long.toHexString(address) + ", " + length + " bytes"
                + (closed.get() ? ", closed" : "") + "]";
    }

    /** The two libc functions this needs, bound on first use. */
    private static final class Libc {
        private static final Linker LINKER = Linker.nativeLinker();
        private static final MethodHandle CLOSE = handle("close", FunctionDescriptor.of(JAVA_INT, JAVA_INT));
        private static final MethodHandle GETPAGESIZE = handle("getpagesize", FunctionDescriptor.of(JAVA_INT));

        private static MethodHandle handle(String name, FunctionDescriptor descriptor) {
            MemorySegment symbol = LINKER.defaultLookup().find(name)
                    .orElseThrow(() -> new UnsatisfiedLinkError("libc function " + name + " not found"));
            return LINKER.downcallHandle(symbol, descriptor);
        }

        static int close(int fd) {
            try {
                return (int) CLOSE.invokeExact(fd);
            } catch (Throwable t) {
                throw new AssertionError("close", t);
            }
        }

        static long pageSize() {
            try {
                return (int) GETPAGESIZE.invokeExact();
            } catch (Throwable t) {
                throw new AssertionError("getpagesize", t);
            }
        }
    }
}
