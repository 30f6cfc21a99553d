package dev.rdmarpc.rpc.transport.rdma;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

/** The work request id's fields survive a round trip at their limits and do not bleed into each other. */
class WorkRequestIdTest {

    @Test
    void everyFieldRoundTripsAtItsLimits() {
        int[] indexes = {0, 1, 63, WorkRequestId.MAX_CONNECTIONS - 1};
        int[] generations = {0, 1, 0x7FFF, 0xFFFF};
        int[] kinds = {WorkRequestId.DATA, WorkRequestId.CREDIT, WorkRequestId.RECEIVE, WorkRequestId.BIND,
            WorkRequestId.INVALIDATE, WorkRequestId.READ};
        int[] slots = {0, 1, 257, (1 << 21) - 1};
        for (int index : indexes) {
            for (int generation : generations) {
                long bits = WorkRequestId.connectionBits(index, generation);
                for (int kind : kinds) {
                    for (int slot : slots) {
                        long id = WorkRequestId.encode(bits, kind, slot);
                        assertEquals(index, WorkRequestId.index(id));
                        assertEquals(generation, WorkRequestId.generation(id));
                        assertEquals(kind, WorkRequestId.kind(id));
                        assertEquals(slot, WorkRequestId.slot(id));
                    }
                }
            }
        }
    }

    @Test
    void aGenerationWrapsAtSixteenBits() {
        assertEquals(0, WorkRequestId.generation(WorkRequestId.connectionBits(5, 0x10000)));
        assertEquals(5, WorkRequestId.index(WorkRequestId.connectionBits(5, 0x10000)));
    }

    @Test
    void aSharedReceiveCarriesOnlyItsKindAndSlot() {
        long id = WorkRequestId.sharedReceive(12345);
        assertEquals(WorkRequestId.SHARED_RECEIVE, WorkRequestId.kind(id));
        assertEquals(12345, WorkRequestId.slot(id));
        assertEquals(0, WorkRequestId.index(id));
        assertEquals(0, WorkRequestId.generation(id));
    }

    @Test
    void theLayoutIsTheOneOnTheWireOfCompletions() {
        // generation:16 | table index:24 | kind:3 | slot:21 (the kind took a bit of the slot for rendezvous)
        long id = WorkRequestId.encode(WorkRequestId.connectionBits(0xABCDEF, 0x1234), WorkRequestId.READ, 0x1ABCDE);
        assertEquals(0x1234_ABCDEF_000000L | (6L << 21) | 0x1ABCDE, id);
    }
}
