package dev.rdmarpc.grpc.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

/** The open calls of a transport: added once, removed once, listed for shutdownNow, in any order. */
class OpenCallsTest {
    private static final class Call extends OpenCalls.Call {
    }

    @Test
    void callsComeAndGoInAnyOrder() {
        OpenCalls<Call> calls = new OpenCalls<>();
        Call a = new Call();
        Call b = new Call();
        Call c = new Call();
        assertTrue(calls.isEmpty());
        assertTrue(calls.add(a), "the first call");
        assertFalse(calls.add(b));
        assertFalse(calls.add(c));
        assertFalse(calls.add(b), "a call already open is not added twice");
        assertEquals(3, calls.snapshot().size());
        assertTrue(calls.remove(b), "from the middle");
        assertFalse(calls.remove(b), "removed once");
        List<Call> open = calls.snapshot();
        assertEquals(2, open.size());
        assertTrue(open.contains(a) && open.contains(c));
        assertTrue(calls.remove(c), "the head");
        assertTrue(calls.remove(a), "the last");
        assertTrue(calls.isEmpty());
        assertTrue(calls.snapshot().isEmpty());
        assertTrue(calls.add(b), "the list empty again: a call is the first again");
    }
}
