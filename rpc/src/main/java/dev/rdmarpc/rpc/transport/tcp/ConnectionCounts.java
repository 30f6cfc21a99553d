package dev.rdmarpc.rpc.transport.tcp;

import java.net.InetAddress;
import java.util.HashMap;
import java.util.Map;

/**
 * The accepted connections of one {@link TcpTransport}, counted in all and per remote address
 * against its {@link ConnectionLimits}. Accepts happen on one loop, closes on any: the counts are
 * guarded by this object's monitor (a few operations per connection, none per frame).
 */
final class ConnectionCounts {
    private final int max;
    private final int maxPerAddress;
    private final Map<InetAddress, int[]> perAddress = new HashMap<>();
    private int total;
    /** Connections refused and not closed yet (being told why). */
    private int refusing;

    ConnectionCounts(ConnectionLimits limits) {
        this.max = limits.maxConnections();
        this.maxPerAddress = limits.maxConnectionsPerAddress();
    }

    /** One accepted connection's place in the counts: its refusal, if any, and {@link #release()} (once). */
    final class Admission {
        private final InetAddress address;
        private final String refusal;
        private boolean released;

        private Admission(InetAddress address, String refusal) {
            this.address = address;
            this.refusal = refusal;
        }

        /** @return why the connection is refused, or null when it is admitted */
        String refusal() {
            return refusal;
        }

        /** The connection closed: its place is free again. Idempotent. */
        void release() {
            synchronized (ConnectionCounts.this) {
                if (released) {
                    return;
                }
                released = true;
                if (refusal != null) {
                    refusing--;
                    return;
                }
                total--;
                int[] n = perAddress.get(address);
                if (--n[0] == 0) {
                    perAddress.remove(address);
                }
            }
        }
    }

    /**
     * Counts a connection just accepted from {@code address}, or refuses it.
     *
     * @return its admission; {@link Admission#refusal()} says why when it is over a limit
     */
    synchronized Admission admit(InetAddress address) {
        int[] n = perAddress.get(address);
        int from = n == null ? 0 : n[0];
        String refusal = null;
        if (total >= max) {
            refusal = "connection limit: the server has " + total + " connections open, its maxConnections";
        } else if (from >= maxPerAddress) {
            refusal = "connection limit: " + from + " connections open from " + address.getHostAddress()
                    + ", the server's maxConnectionsPerAddress";
        }
        if (refusal != null) {
            refusing++;
            return new Admission(address, refusal);
        }
        total++;
        if (n == null) {
            perAddress.put(address, new int[] {1});
        } else {
            n[0]++;
        }
        return new Admission(address, null);
    }

    /** @return true when so many refused connections wait to be told why that more are closed without a word */
    synchronized boolean tooManyRefusing() {
        return refusing > maxPerAddress;
    }

    /** @return the admitted connections open now */
    synchronized int total() {
        return total;
    }

    /** @return the admitted connections open now from {@code address} */
    synchronized int from(InetAddress address) {
        int[] n = perAddress.get(address);
        return n == null ? 0 : n[0];
    }
}
