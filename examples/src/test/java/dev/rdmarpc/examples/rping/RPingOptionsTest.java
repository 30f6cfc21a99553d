package dev.rdmarpc.examples.rping;

import org.junit.jupiter.api.Test;

import java.net.InetAddress;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** rping's command line as the example reads it (host, no RDMA), and the ping data it validates. */
class RPingOptionsTest {

    @Test
    void readsRpingsCommandLineWithGetoptStyleFlags() throws Exception {
        RPingOptions client = RPingOptions.parse("-c", "-vV", "-a", "198.18.0.2", "-I198.18.0.1", "-p", "9000",
                "-C", "10", "-S", "128", "-q");
        assertFalse(client.server());
        assertEquals(InetAddress.getByName("198.18.0.2"), client.address());
        assertEquals(InetAddress.getByName("198.18.0.1"), client.source());
        assertEquals(9000, client.port());
        assertEquals(10, client.count());
        assertEquals(128, client.size());
        assertTrue(client.verbose() && client.validate() && client.selfCreatedQueuePair());
        assertFalse(client.debug());

        RPingOptions server = RPingOptions.parse("-s");
        assertTrue(server.server());
        assertNull(server.address(), "any address");
        assertEquals(RPingOptions.DEFAULT_PORT, server.port());
        assertEquals(RPingOptions.DEFAULT_SIZE, server.size());
        assertEquals(0, server.count(), "forever");
    }

    @Test
    void refusesWhatRpingRefuses() {
        assertEquals("say -s (server) or -c (client)",
                assertThrows(RPingOptions.UsageException.class, () -> RPingOptions.parse("-v")).getMessage());
        assertEquals("a client needs the server's address (-a)",
                assertThrows(RPingOptions.UsageException.class, () -> RPingOptions.parse("-c")).getMessage());
        assertEquals("-S 25 is outside 26..65535",
                assertThrows(RPingOptions.UsageException.class, () -> RPingOptions.parse("-s", "-S", "25")).getMessage());
        assertEquals("-C needs a value",
                assertThrows(RPingOptions.UsageException.class, () -> RPingOptions.parse("-s", "-C")).getMessage());
        assertEquals("unknown option -P",
                assertThrows(RPingOptions.UsageException.class, () -> RPingOptions.parse("-s", "-P")).getMessage());
        assertEquals("-p takes a number, not x",
                assertThrows(RPingOptions.UsageException.class, () -> RPingOptions.parse("-s", "-p", "x")).getMessage());
    }

    @Test
    void thePingDataFollowsRpingsPattern() {
        assertEquals("rdma-ping-0: ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_`abcdefghijklmnopqr",
                RPingInteropRdmaTest.pingData(0, 64));
        assertEquals(63, RPingInteropRdmaTest.pingData(57, 64).length());
        assertTrue(RPingInteropRdmaTest.pingData(57, 64).startsWith("rdma-ping-57: zABC"));
        assertTrue(RPingInteropRdmaTest.pingData(58, 64).startsWith("rdma-ping-58: ABC"), "wraps after 'z'");
    }
}
