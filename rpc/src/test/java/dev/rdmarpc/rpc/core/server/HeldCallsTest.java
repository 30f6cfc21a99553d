package dev.rdmarpc.rpc.core.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** {@link HeldCalls} against a {@link HashMap} doing the same: holding, finding, forgetting and listing calls by id. */
class HeldCallsTest {
    private static HeldCall call(long id) {
        return new AsyncCall(null, null, id, 0, false, 0, dev.rdmarpc.rpc.Metadata.EMPTY); // never started: only its id counts here
    }

    @Test
    void behavesAsAMapOfIdsThroughGrowthAndRemovals() {
        HeldCalls table = new HeldCalls();
        Map<Long, HeldCall> model = new HashMap<>();
        Random random = new Random(45);
        long nextId = 1;
        for (int step = 0; step < 200_000; step++) {
            int op = random.nextInt(10);
            if (op < 4 || model.isEmpty()) { // ids count up, as a client's do, with a few far apart
                long id = random.nextInt(50) == 0 ? random.nextLong() : nextId++;
                HeldCall c = call(id);
                table.put(c);
                model.put(id, c);
            } else if (op < 8) {
                List<Long> ids = new ArrayList<>(model.keySet());
                HeldCall c = model.remove(ids.get(random.nextInt(ids.size())));
                table.remove(c);
            } else {
                long id = random.nextBoolean() ? nextId - 1 - random.nextInt(64) : random.nextLong();
                assertSame(model.get(id), table.get(id), "id " + id + " at step " + step);
            }
            assertEquals(model.isEmpty(), table.isEmpty());
        }
        for (Map.Entry<Long, HeldCall> e : model.entrySet()) {
            assertSame(e.getValue(), table.get(e.getKey()));
        }
        assertEquals(new HashSet<>(model.values()), listed(table, new HeldCall[1]));
    }

    @Test
    void removesOnlyTheCallHeldUnderItsId() {
        HeldCalls table = new HeldCalls();
        HeldCall first = call(7);
        HeldCall second = call(7);
        table.put(first);
        table.put(second); // the same id again replaces
        assertSame(second, table.get(7));
        table.remove(first); // an earlier call under that id ends: the later one stays
        assertSame(second, table.get(7));
        table.remove(second);
        assertNull(table.get(7));
        assertTrue(table.isEmpty());
    }

    @Test
    void aSnapshotListsEveryCallAndEndsWithNull() {
        HeldCalls table = new HeldCalls();
        HeldCall[] scratch = new HeldCall[4];
        assertNull(table.snapshot(scratch)[0]);
        Set<HeldCall> held = new HashSet<>();
        for (long id = 100; id < 140; id++) {
            HeldCall c = call(id);
            table.put(c);
            held.add(c);
        }
        assertEquals(held, listed(table, scratch)); // more than fit in the scratch array: a larger one
    }

    private static Set<HeldCall> listed(HeldCalls table, HeldCall[] scratch) {
        HeldCall[] out = table.snapshot(scratch);
        Set<HeldCall> listed = new HashSet<>();
        for (int i = 0; out[i] != null; i++) {
            assertTrue(listed.add(out[i]));
        }
        return listed;
    }
}
