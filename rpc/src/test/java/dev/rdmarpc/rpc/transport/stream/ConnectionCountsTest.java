package dev.rdmarpc.rpc.transport.stream;

import dev.rdmarpc.rpc.transport.ConnectionLimits;
import static org.junit.jupiter.api.Assertions.*;

import java.net.InetAddress;
import org.junit.jupiter.api.Test;

/** The counts behind {@link ConnectionLimits}: connections per address, and each address's share of large frames. */
class ConnectionCountsTest {
    static final long MIB = 1L << 20;

    @Test
    void connectionsAreCountedInAllAndPerAddressAndGivenBackOnce() throws Exception {
        ConnectionCounts counts = new ConnectionCounts(new ConnectionLimits().maxConnections(3).maxConnectionsPerAddress(2), 0);
        InetAddress a = InetAddress.getByName("127.0.0.2");
        InetAddress b = InetAddress.getByName("127.0.0.3");
        ConnectionCounts.Admission a1 = counts.admit(a);
        ConnectionCounts.Admission a2 = counts.admit(a);
        ConnectionCounts.Admission a3 = counts.admit(a);
        assertNull(a1.refusal());
        assertNull(a2.refusal());
        assertTrue(a3.refusal().contains("maxConnectionsPerAddress"), a3.refusal());
        ConnectionCounts.Admission b1 = counts.admit(b);
        ConnectionCounts.Admission b2 = counts.admit(b);
        assertNull(b1.refusal());
        assertTrue(b2.refusal().contains("maxConnections"), b2.refusal());
        assertEquals(3, counts.total());
        a1.release();
        a1.release(); // once
        a3.release(); // a refusal frees no place
        assertEquals(2, counts.total());
        assertEquals(1, counts.from(a));
        assertNull(counts.admit(a).refusal());
    }

    @Test
    void anAddressTakesLargeFramesUpToItsShareAndLeavesAnEighthOfTheBudgetToOthers() throws Exception {
        // a share of 100 MiB per address, a 64 MiB budget: 56 MiB for addresses that hold some already
        ConnectionCounts counts = new ConnectionCounts(new ConnectionLimits().maxFrameBytesPerAddress(100 * MIB), 64 * MIB);
        ConnectionCounts.Admission hog = counts.admit(InetAddress.getByName("127.0.0.2"));
        ConnectionCounts.Admission good = counts.admit(InetAddress.getByName("127.0.0.3"));
        for (int i = 0; i < 6; i++) {
            assertTrue(hog.takeFrameBytes(9 * MIB), "frame " + i);
        }
        assertFalse(hog.takeFrameBytes(9 * MIB), "54 + 9 > 56: the hog waits");
        assertTrue(good.takeFrameBytes(9 * MIB), "an address holding nothing takes from the reserve");
        assertFalse(good.takeFrameBytes(MIB), "but only its first frame");
        hog.releaseFrameBytes(9 * MIB);
        assertEquals(54 * MIB, counts.frameBytes());
        good.releaseFrameBytes(9 * MIB);
        assertTrue(hog.takeFrameBytes(2 * MIB));

        ConnectionCounts capped = new ConnectionCounts(new ConnectionLimits().maxFrameBytesPerAddress(20 * MIB), 512 * MIB);
        ConnectionCounts.Admission one = capped.admit(InetAddress.getByName("127.0.0.4"));
        ConnectionCounts.Admission same = capped.admit(InetAddress.getByName("127.0.0.4"));
        assertTrue(one.takeFrameBytes(9 * MIB));
        assertTrue(same.takeFrameBytes(9 * MIB));
        assertFalse(one.takeFrameBytes(9 * MIB), "27 > 20: over the address's share, whichever connection asks");
        assertTrue(capped.admit(InetAddress.getByName("127.0.0.5")).takeFrameBytes(30 * MIB), "one frame even over the share");
    }
}
