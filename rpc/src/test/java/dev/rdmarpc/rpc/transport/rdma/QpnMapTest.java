package dev.rdmarpc.rpc.transport.rdma;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.HashMap;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** The QP-number table of a shared receive queue, against a {@link HashMap} under random use. */
class QpnMapTest {

    @Test
    void agreesWithAHashMapUnderRandomPutsAndRemoves() {
        SharedReceives.QpnMap<String> map = new SharedReceives.QpnMap<>();
        Map<Integer, String> model = new HashMap<>();
        Random r = new Random(7);
        for (int step = 0; step < 200_000; step++) {
            int qpn = 1 + r.nextInt(r.nextBoolean() ? 300 : 1 << 24);
            switch (r.nextInt(3)) {
                case 0 -> {
                    String v = "c" + step;
                    map.put(qpn, v);
                    model.put(qpn, v);
                }
                case 1 -> {
                    String v = model.get(qpn);
                    map.remove(qpn, v);
                    model.remove(qpn);
                }
                default -> assertEquals(model.get(qpn), map.get(qpn), "qpn " + qpn);
            }
            assertEquals(model.size(), map.size());
        }
        for (Map.Entry<Integer, String> e : model.entrySet()) {
            assertEquals(e.getValue(), map.get(e.getKey()));
        }
    }

    @Test
    void removeOnlyRemovesTheSameConnection() {
        SharedReceives.QpnMap<String> map = new SharedReceives.QpnMap<>();
        map.put(17, "new");
        map.remove(17, "old"); // a destroyed connection whose QP number was reused
        assertEquals("new", map.get(17));
        map.remove(17, "new");
        assertNull(map.get(17));
        assertThrows(IllegalArgumentException.class, () -> map.put(0, "x"));
    }
}
