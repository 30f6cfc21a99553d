package dev.rdmarpc.rpc.transport.rdma;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.VarHandle;

/**
 * A dma-buf of host pages, made by the Linux udmabuf device ({@code /dev/udmabuf}) from a sealed
 * memfd, and the same pages mapped here: what a test hands to {@code ibv_reg_dmabuf_mr} where no GPU
 * exports one. Tests only; closes the mapping and both descriptors.
 */
final class UdmaBuf implements AutoCloseable {
    private static final Linker LINKER = Linker.nativeLinker();
    private static final StructLayout CALL_STATE = Linker.Option.captureStateLayout();
    private static final VarHandle ERRNO = CALL_STATE.varHandle(java.lang.foreign.MemoryLayout.PathElement.groupElement("errno"));
    private static final Linker.Option CAPTURE = Linker.Option.captureCallState("errno");
    private static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT;
    private static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG;
    private static final MethodHandle MEMFD_CREATE = fn("memfd_create", FunctionDescriptor.of(INT, ValueLayout.ADDRESS, INT));
    private static final MethodHandle FTRUNCATE = fn("ftruncate", FunctionDescriptor.of(INT, INT, LONG));
    private static final MethodHandle FCNTL = fn("fcntl", FunctionDescriptor.of(INT, INT, INT, INT), Linker.Option.firstVariadicArg(2));
    private static final MethodHandle OPEN = fn("open", FunctionDescriptor.of(INT, ValueLayout.ADDRESS, INT, INT), Linker.Option.firstVariadicArg(2));
    private static final MethodHandle IOCTL = fn("ioctl", FunctionDescriptor.of(INT, INT, LONG, ValueLayout.ADDRESS), Linker.Option.firstVariadicArg(2));
    private static final MethodHandle MMAP = fn("mmap", FunctionDescriptor.of(ValueLayout.ADDRESS, ValueLayout.ADDRESS, LONG, INT, INT, INT, LONG));
    private static final MethodHandle MUNMAP = fn("munmap", FunctionDescriptor.of(INT, ValueLayout.ADDRESS, LONG));
    private static final MethodHandle CLOSE = fn("close", FunctionDescriptor.of(INT, INT));
    private static final int MFD_ALLOW_SEALING = 2;
    private static final int F_ADD_SEALS = 1033;
    private static final int F_SEAL_SHRINK = 2;
    private static final int O_RDWR = 2;
    /** {@code _IOW('u', 0x42, struct udmabuf_create)}: {memfd u32, flags u32, offset u64, size u64}. */
    private static final long UDMABUF_CREATE = (1L << 30) | (24L << 16) | ('u' << 8) | 0x42;
    private static final int UDMABUF_FLAGS_CLOEXEC = 1;

    private final int memfd;
    private final int dmaBufFd;
    private final MemorySegment memory;

    private UdmaBuf(int memfd, int dmaBufFd, MemorySegment memory) {
        this.memfd = memfd;
        this.dmaBufFd = dmaBufFd;
        this.memory = memory;
    }

    private static MethodHandle fn(String name, FunctionDescriptor d, Linker.Option... more) {
        Linker.Option[] options = new Linker.Option[more.length + 1];
        options[0] = CAPTURE;
        System.arraycopy(more, 0, options, 1, more.length);
        return LINKER.downcallHandle(LINKER.defaultLookup().find(name).orElseThrow(), d, options);
    }

    /**
     * @param size bytes, a multiple of the page size
     * @throws IOException naming the call and errno when the kernel refuses (no /dev/udmabuf, say)
     */
    static UdmaBuf create(long size) throws IOException {
        try {
            return make(size);
        } catch (IOException | RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new AssertionError(t); // a failed invokeExact
        }
    }

    private static UdmaBuf make(long size) throws Throwable {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment state = a.allocate(CALL_STATE);
            int memfd = (int) MEMFD_CREATE.invokeExact(state, a.allocateFrom("rdmarpc-udmabuf"), MFD_ALLOW_SEALING);
            check("memfd_create", memfd, state);
            int dev = -1;
            try {
                check("ftruncate", (int) FTRUNCATE.invokeExact(state, memfd, size), state);
                check("fcntl(F_ADD_SEALS)", (int) FCNTL.invokeExact(state, memfd, F_ADD_SEALS, F_SEAL_SHRINK), state);
                dev = (int) OPEN.invokeExact(state, a.allocateFrom("/dev/udmabuf"), O_RDWR, 0);
                check("open(/dev/udmabuf)", dev, state);
                MemorySegment create = a.allocate(24, 8);
                create.set(INT, 0, memfd);
                create.set(INT, 4, UDMABUF_FLAGS_CLOEXEC);
                create.set(LONG, 8, 0);
                create.set(LONG, 16, size);
                int dmaBuf = (int) IOCTL.invokeExact(state, dev, UDMABUF_CREATE, create);
                check("ioctl(UDMABUF_CREATE)", dmaBuf, state);
                MemorySegment p = (MemorySegment) MMAP.invokeExact(state, MemorySegment.NULL, size, 3, 1, memfd, 0L);
                if (p.address() == -1L) {
                    check("mmap", -1, state);
                }
                return new UdmaBuf(memfd, dmaBuf, p.reinterpret(size));
            } catch (Throwable t) {
                int ignored = (int) CLOSE.invokeExact(state, memfd);
                throw t;
            } finally {
                if (dev >= 0) {
                    int ignored = (int) CLOSE.invokeExact(state, dev);
                }
            }
        }
    }

    private static void check(String call, int rc, MemorySegment state) throws IOException {
        if (rc < 0) {
            throw new IOException(call + " failed: errno " + (int) ERRNO.get(state, 0L));
        }
    }

    /** @return the dma-buf's file descriptor */
    int dmaBufFd() {
        return dmaBufFd;
    }

    /** @return the pages, mapped here (shared with the dma-buf) */
    MemorySegment memory() {
        return memory;
    }

    @Override
    public void close() throws Exception {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment state = a.allocate(CALL_STATE);
            int r1 = (int) MUNMAP.invokeExact(state, memory, memory.byteSize());
            int r2 = (int) CLOSE.invokeExact(state, dmaBufFd);
            int r3 = (int) CLOSE.invokeExact(state, memfd);
            if (r1 != 0 || r2 != 0 || r3 != 0) {
                throw new IOException("closing the udmabuf: munmap " + r1 + ", close " + r2 + ", " + r3);
            }
        } catch (Exception e) {
            throw e;
        } catch (Throwable t) {
            throw new AssertionError(t);
        }
    }
}
