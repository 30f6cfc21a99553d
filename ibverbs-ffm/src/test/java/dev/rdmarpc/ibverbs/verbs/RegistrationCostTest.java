package dev.rdmarpc.ibverbs.verbs;

import dev.rdmarpc.testsupport.RdmaTest;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Registration of memory of every kind (arena memory, a mapped file, huge pages where the guest has
 * them) and what it costs: the figures printed here are the ones quoted in
 * {@link ProtectionDomain#register(MemorySegment, int)}'s documentation (under emulation they show how
 * the cost grows with the number of pages, not absolute times).
 */
@RdmaTest
class RegistrationCostTest {
    private static final long PAGE = 4096;

    @Test
    void registrationCostGrowsWithThePages() {
        long[] sizes = {4 << 10, 64 << 10, 1 << 20, 16 << 20};
        try (Context ctx = Context.open(RdmaDevices.DEV0); ProtectionDomain pd = ctx.allocateProtectionDomain()) {
            for (long size : sizes) {
                try (Arena arena = Arena.ofConfined()) {
                    MemorySegment memory = arena.allocate(size, PAGE);
                    memory.fill((byte) 1); // fault the pages in first: measure pinning, not page faults
                    int rounds = size >= 16 << 20 ? 5 : 20;
                    long reg = 0;
                    long dereg = 0;
                    for (int i = 0; i < rounds + 2; i++) {
                        long t0 = System.nanoTime();
                        MemoryRegion mr = pd.register(memory, Access.LOCAL_REMOTE_READ_WRITE);
                        long t1 = System.nanoTime();
                        mr.close();
                        long t2 = System.nanoTime();
                        if (i >= 2) { // two warm-up rounds
                            reg += t1 - t0;
                            dereg += t2 - t1;
                        }
                    }
                    long pages = size / PAGE;
                    System.out.printf("register %,d KiB (%d pages): %.1f us, %.3f us/page; deregister %.1f us%n",
                            size >> 10, pages, reg / 1e3 / rounds, reg / 1e3 / rounds / pages, dereg / 1e3 / rounds);
                }
            }
        }
    }

    /**
     * A mapped file registers: writable when it lies in tmpfs (shared memory), read-only anywhere.
     * Writable on a disk file system (here the 9p share of the project's target folder) depends on
     * the kernel: since Linux 6.5 the kernel refuses to pin writable file pages that need dirty
     * tracking for long (FOLL_LONGTERM), and ibv_reg_mr fails with EFAULT; before, it registers.
     * Either way the outcome is defined and the protection domain stays usable.
     */
    @Test
    void mappedFilesAndHugePagesRegisterToo() throws IOException {
        Path shm = Files.createTempFile(Path.of("/dev/shm"), "mapped-mr", ".bin");
        Path file = Files.createTempFile(Path.of("target"), "mapped-mr", ".bin");
        try (Context ctx = Context.open(RdmaDevices.DEV0);
             ProtectionDomain pd = ctx.allocateProtectionDomain();
             FileChannel sc = FileChannel.open(shm, StandardOpenOption.READ, StandardOpenOption.WRITE);
             FileChannel ch = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE);
             Arena arena = Arena.ofShared()) {
            MemorySegment inShm = sc.map(FileChannel.MapMode.READ_WRITE, 0, 1 << 20, arena);
            inShm.set(JAVA_BYTE, 0, (byte) 42);
            try (MemoryRegion mr = pd.register(inShm, Access.LOCAL_REMOTE_READ_WRITE)) {
                assertEquals(inShm.address(), mr.address());
                assertEquals(1 << 20, mr.length());
                assertTrue(mr.lkey() != 0);
            }
            MemorySegment onDisk = ch.map(FileChannel.MapMode.READ_WRITE, 0, 1 << 20, arena);
            onDisk.set(JAVA_BYTE, 0, (byte) 42);
            try (MemoryRegion mr = pd.register(onDisk, Access.flags(java.util.EnumSet.of(Access.REMOTE_READ)))) {
                assertEquals(onDisk.address(), mr.address());
                assertTrue(mr.rkey() != 0);
            }
            try (MemoryRegion mr = pd.register(onDisk, Access.LOCAL_REMOTE_READ_WRITE)) {
                System.out.println("writable disk-file mapping registered (kernel before 6.5): " + mr);
            } catch (dev.rdmarpc.ibverbs.VerbsException e) {
                assertEquals(14, e.errno(), "expected EFAULT, got: " + e.getMessage());
                System.out.println("writable disk-file mapping refused by the kernel, as since 6.5: " + e.getMessage());
            }
            try (MemoryRegion mr = pd.register(inShm, java.util.EnumSet.of(Access.LOCAL_WRITE))) {
                assertTrue(mr.lkey() != 0, "the protection domain still registers after a refusal");
            }
            Path hugetlbfs = Path.of("/dev/hugepages");
            if (Files.isDirectory(hugetlbfs) && Files.isWritable(hugetlbfs) && hugePagesFree() > 0) {
                Path huge = Files.createTempFile(hugetlbfs, "mr", ".huge");
                try (FileChannel hc = FileChannel.open(huge, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
                    MemorySegment h = hc.map(FileChannel.MapMode.READ_WRITE, 0, 2 << 20, arena);
                    try (MemoryRegion mr = pd.register(h, Access.flags(java.util.EnumSet.of(Access.LOCAL_WRITE,
                            Access.HUGETLB)))) {
                        System.out.println("huge-page segment registered: " + mr);
                    }
                } finally {
                    Files.deleteIfExists(huge);
                }
            } else {
                System.out.println("no free huge pages in this guest: huge-page registration not exercised");
            }
        } finally {
            Files.deleteIfExists(file);
            Files.deleteIfExists(shm);
        }
    }

    private static long hugePagesFree() throws IOException {
        for (String line : Files.readAllLines(Path.of("/proc/meminfo"))) {
            if (line.startsWith("HugePages_Free:")) {
                return Long.parseLong(line.substring("HugePages_Free:".length()).trim());
            }
        }
        return 0;
    }
}
