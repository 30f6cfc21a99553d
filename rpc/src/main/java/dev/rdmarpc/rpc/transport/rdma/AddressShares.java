package dev.rdmarpc.rpc.transport.rdma;

import java.net.InetAddress;
import java.util.HashMap;
import java.util.Map;

/**
 * Pool bytes claimed by the hellos (and receive growths) of each remote address's open RDMA
 * connections on a server, bounded by {@link RdmaConfig#poolBytesPerAddress}: one host cannot pin
 * what the others need. Thread-safe (a few operations per connection, none per message).
 */
final class AddressShares {
    private final long perAddress;
    private final Map<InetAddress, Long> claimed = new HashMap<>();

    AddressShares(long perAddress) {
        this.perAddress = perAddress;
    }

    /**
     * Claims {@code bytes} of {@code from}'s share.
     *
     * @return null when claimed, else why not
     */
    synchronized String claim(InetAddress from, long bytes) {
        long held = claimed.getOrDefault(from, 0L);
        if (held + bytes > perAddress) {
            return "RDMA buffer pool share of " + from.getHostAddress() + " reached: its connections hold " + held
                    + " bytes, a connection needs " + bytes + ", the share is " + perAddress + " (RdmaConfig poolBytesPerAddress)";
        }
        claimed.put(from, held + bytes);
        return null;
    }

    /** @return the pool bytes {@code from}'s open connections claimed (for tests) */
    synchronized long claimed(InetAddress from) {
        return claimed.getOrDefault(from, 0L);
    }

    /** Gives back {@code bytes} of {@code from}'s claim. */
    synchronized void release(InetAddress from, long bytes) {
        long left = claimed.getOrDefault(from, 0L) - bytes;
        if (left <= 0) {
            claimed.remove(from);
        } else {
            claimed.put(from, left);
        }
    }
}
