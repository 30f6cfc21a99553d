package dev.rdmarpc.rdmacm;

import dev.rdmarpc.ibverbs.NativeCallException;
import dev.rdmarpc.ibverbs.VerbsException;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Both libraries' exceptions share one base, and stay apart from each other. */
class NativeCallExceptionTest {
    @Test
    void bothLibrariesReportOperationAndErrnoTheSameWay() {
        NativeCallException verbs = new VerbsException("ibv_create_qp", 12);
        NativeCallException cm = new RdmaCmException("rdma_resolve_addr", 12);
        assertEquals("ibv_create_qp", verbs.operation());
        assertEquals("rdma_resolve_addr", cm.operation());
        assertEquals(12, verbs.errno());
        assertEquals(12, cm.errno());
        assertTrue(verbs.getMessage().startsWith("ibv_create_qp failed: "), verbs.getMessage());
        assertTrue(cm.getMessage().endsWith("(errno 12)"), cm.getMessage());
        assertEquals(verbs.getMessage().substring("ibv_create_qp".length()),
                cm.getMessage().substring("rdma_resolve_addr".length()));
    }

    @Test
    void theTwoLibrariesStayDistinctTypes() {
        RuntimeException cm = new RdmaCmException("rdma_listen", 98);
        RuntimeException verbs = new VerbsException("ibv_open_device", 19);
        assertFalse(cm instanceof VerbsException);
        assertFalse(verbs instanceof RdmaCmException);
        assertInstanceOf(NativeCallException.class, cm);
        assertInstanceOf(NativeCallException.class, verbs);
    }

    @Test
    void aFailureThatIsNoNativeCallHasNoOperationNorErrno() {
        Throwable cause = new IllegalStateException("x");
        RdmaCmException e = new RdmaCmException("not loadable", cause);
        assertNull(e.operation());
        assertEquals(0, e.errno());
        assertSame(cause, e.getCause());
    }
}
