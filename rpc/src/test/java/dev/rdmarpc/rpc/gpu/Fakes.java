package dev.rdmarpc.rpc.gpu;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.text.MessageFormat;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.ResourceBundle;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.LongPredicate;

/** Test doubles for GPU-direct registration: a NIC, a dma-buf exporter, a memory source, a logger. */
final class Fakes {
    private Fakes() {
    }

    /** Records what happens, in order, across the fakes of one test. */
    static final class Journal {
        final List<String> events = new ArrayList<>();

        synchronized void add(String e) {
            events.add(e);
        }

        synchronized List<String> events() {
            return List.copyOf(events);
        }
    }

    static final class Nic implements NicRegistrar {
        final Journal journal;
        RuntimeException dmaBufFailure;
        LinkageError dmaBufLinkageError;
        /** Which addresses registerMemory refuses (device memory without peer-memory, say). */
        LongPredicate memoryRefused = a -> false;
        String memoryFailure = "ibv_reg_mr failed: Bad address (errno 14)";
        int nextKey = 0x100;
        int open;

        Nic(Journal journal) {
            this.journal = journal;
        }

        @Override
        public String name() {
            return "fake_nic0";
        }

        @Override
        public Registration registerDmaBuf(int fd, long offset, long length, long iova, int access) {
            if (dmaBufLinkageError != null) {
                throw dmaBufLinkageError;
            }
            if (dmaBufFailure != null) {
                throw dmaBufFailure;
            }
            journal.add("reg dmabuf fd " + fd + " iova 0x" + Long.toHexString(iova) + " len " + length + " access " + access);
            return reg("dmabuf 0x" + Long.toHexString(iova));
        }

        @Override
        public Registration registerMemory(long address, long length, int access) {
            if (memoryRefused.test(address)) {
                throw new IllegalStateException(memoryFailure);
            }
            journal.add("reg mr 0x" + Long.toHexString(address) + " len " + length);
            return reg("mr 0x" + Long.toHexString(address));
        }

        private Registration reg(String what) {
            int key = nextKey++;
            open++;
            AtomicBoolean closed = new AtomicBoolean();
            return new Registration() {
                @Override
                public int lkey() {
                    return key;
                }

                @Override
                public int rkey() {
                    return key + 0x10000;
                }

                @Override
                public void close() {
                    if (closed.compareAndSet(false, true)) {
                        open--;
                        journal.add("dereg " + what);
                    }
                }
            };
        }
    }

    static final class Exporter implements GpuDirectSelector.DmaBufExporter {
        final Journal journal;
        RuntimeException failure;
        int nextFd = 40;
        int open;

        Exporter(Journal journal) {
            this.journal = journal;
        }

        @Override
        public GpuDirectSelector.ExportedDmaBuf export(long address, long length) {
            if (failure != null) {
                throw failure;
            }
            int fd = nextFd++;
            open++;
            journal.add("export fd " + fd + " 0x" + Long.toHexString(address));
            AtomicBoolean closed = new AtomicBoolean();
            return new GpuDirectSelector.ExportedDmaBuf() {
                @Override
                public int fd() {
                    return fd;
                }

                @Override
                public void close() {
                    if (closed.compareAndSet(false, true)) {
                        open--;
                        journal.add("close fd " + fd);
                    }
                }
            };
        }
    }

    /** Host memory posing as a GPU's memory. */
    static final class Memory implements GpuBufferPool.MemorySource, AutoCloseable {
        final Journal journal;
        final GpuFacts facts;
        final Exporter exporter;
        private final Arena arena = Arena.ofShared();
        final Map<Long, MemorySegment> device = new HashMap<>();
        final Map<Long, MemorySegment> host = new HashMap<>();
        int deviceAllocations;
        int maxDeviceAllocations = Integer.MAX_VALUE;

        Memory(Journal journal, GpuFacts facts) {
            this.journal = journal;
            this.facts = facts;
            this.exporter = new Exporter(journal);
        }

        @Override
        public GpuFacts facts() {
            return facts;
        }

        @Override
        public long allocateDevice(long bytes) {
            if (deviceAllocations >= maxDeviceAllocations) {
                throw new IllegalStateException("cuMemAlloc_v2 failed: CUDA_ERROR_OUT_OF_MEMORY (2): out of memory");
            }
            deviceAllocations++;
            MemorySegment s = arena.allocate(bytes, dev.rdmarpc.cuda.DmaBuf.PAGE_SIZE);
            device.put(s.address(), s);
            journal.add("alloc device 0x" + Long.toHexString(s.address()));
            return s.address();
        }

        @Override
        public void freeDevice(long address) {
            if (device.remove(address) == null) {
                throw new AssertionError("double free of device 0x" + Long.toHexString(address));
            }
            journal.add("free device 0x" + Long.toHexString(address));
        }

        @Override
        public MemorySegment allocatePinnedHost(long bytes) {
            MemorySegment s = arena.allocate(bytes, 4096);
            host.put(s.address(), s);
            journal.add("alloc host 0x" + Long.toHexString(s.address()));
            return s;
        }

        @Override
        public void freePinnedHost(MemorySegment memory) {
            if (host.remove(memory.address()) == null) {
                throw new AssertionError("double free of host 0x" + Long.toHexString(memory.address()));
            }
            journal.add("free host 0x" + Long.toHexString(memory.address()));
        }

        @Override
        public GpuDirectSelector.ExportedDmaBuf exportDmaBuf(long address, long length) {
            return exporter.export(address, length);
        }

        @Override
        public void close() {
            arena.close();
        }
    }

    /** A System.Logger that keeps formatted messages. */
    static final class Log implements System.Logger {
        final List<String> lines = new ArrayList<>();

        @Override
        public String getName() {
            return "test";
        }

        @Override
        public boolean isLoggable(Level level) {
            return true;
        }

        @Override
        public synchronized void log(Level level, ResourceBundle bundle, String msg, Throwable thrown) {
            lines.add(level + " " + msg);
        }

        @Override
        public synchronized void log(Level level, ResourceBundle bundle, String format, Object... params) {
            lines.add(level + " " + (params == null || params.length == 0 ? format : MessageFormat.format(format, params)));
        }

        synchronized List<String> lines() {
            return List.copyOf(lines);
        }
    }
}
