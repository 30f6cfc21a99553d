package dev.rdmarpc.cuda;

import org.junit.jupiter.api.Test;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.invoke.MethodHandle;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The parts of the CUDA layer that need no driver: pointer ranges, page size, dma-buf descriptor lifetime. */
class CudaValuesTest {

    @Test
    void pointerInfoCoversOnlyRangesInsideTheAllocation() {
        PointerInfo p = new PointerInfo(0x1000 + 16, PointerInfo.DEVICE_MEMORY, 0, 0x1000, 256);
        assertTrue(p.isDevice());
        assertTrue(p.covers(0));
        assertTrue(p.covers(240));
        assertFalse(p.covers(241));
        assertFalse(p.covers(-1));
        assertFalse(p.covers(Long.MAX_VALUE));
        PointerInfo unknown = new PointerInfo(0x5000, PointerInfo.UNKNOWN_MEMORY, -1, 0, 0);
        assertFalse(unknown.isDevice());
        assertFalse(unknown.covers(0));
    }

    @Test
    void pageSizeIsThePlatformsAndAPowerOfTwo() {
        assertTrue(DmaBuf.PAGE_SIZE >= 4096, "page size " + DmaBuf.PAGE_SIZE);
        assertEquals(0, DmaBuf.PAGE_SIZE & (DmaBuf.PAGE_SIZE - 1), "page size " + DmaBuf.PAGE_SIZE);
    }

    @Test
    void dmaBufClosesItsDescriptorExactlyOnce() throws Throwable {
        Linker linker = Linker.nativeLinker();
        MethodHandle dup = linker.downcallHandle(linker.defaultLookup().find("dup").orElseThrow(),
                FunctionDescriptor.of(JAVA_INT, JAVA_INT));
        MethodHandle fcntl = linker.downcallHandle(linker.defaultLookup().find("fcntl").orElseThrow(),
                FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT), Linker.Option.firstVariadicArg(2));
        int fd = (int) dup.invokeExact(1);
        assertTrue(fd > 2, "dup: " + fd);
        DmaBuf buf = new DmaBuf(fd, 0x200000, 0x200000);
        assertTrue((int) fcntl.invokeExact(fd, 1 /* F_GETFD */) >= 0, "open before close");
        buf.close();
        assertEquals(-1, (int) fcntl.invokeExact(fd, 1), "closed");
        buf.close(); // once only: a second close must not close a descriptor number reused meanwhile
        assertTrue(buf.toString().contains("closed"), buf.toString());
    }
}
