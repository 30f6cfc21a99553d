package dev.rdmarpc.cuda;

import dev.rdmarpc.posix.Posix;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@link DmaBuf}'s descriptor handling, on a plain descriptor (no GPU needed). */
class DmaBufTest {

    @Test
    void closeClosesTheDescriptorOnce() {
        int fd = Posix.eventfd();
        DmaBuf buf = new DmaBuf(fd, 0x1000, 4096);
        buf.close();
        buf.close(); // once: the second close does nothing
        assertEquals(Posix.EBADF, Posix.close(fd), "the descriptor was closed");
        assertTrue(buf.toString().endsWith(", closed]"), buf.toString());
    }

    @Test
    void aFailedCloseSaysWhy() {
        int fd = Posix.eventfd();
        assertEquals(0, Posix.close(fd));
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> new DmaBuf(fd, 0x1000, 4096).close());
        assertEquals("close(" + fd + ") of a dma-buf failed: Bad file descriptor (errno 9)", e.getMessage());
    }

    @Test
    void pageSizeIsTheHosts() {
        assertEquals(Posix.pageSize(), DmaBuf.PAGE_SIZE);
        assertTrue(DmaBuf.PAGE_SIZE >= 4096 && Long.bitCount(DmaBuf.PAGE_SIZE) == 1, "page size " + DmaBuf.PAGE_SIZE);
    }
}
