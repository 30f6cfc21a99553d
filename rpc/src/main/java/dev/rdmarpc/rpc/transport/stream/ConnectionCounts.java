package dev.rdmarpc.rpc.transport.stream;

import dev.rdmarpc.rpc.transport.ConnectionLimits;
import java.net.InetAddress;
import java.util.HashMap;
import java.util.Map;

/**
 * The accepted connections of one transport, counted in all and per remote address
 * against its {@link ConnectionLimits}. Accepts happen on one loop, closes on any: the counts are
 * guarded by this object's monitor (a few operations per connection, none per frame).
 */
public final class ConnectionCounts {
    private final int max;
    private final int maxPerAddress;
    private final long maxFrameBytesPerAddress;
    /** Large frame bytes addresses that hold some already may take in all: the rest is kept for those that hold none. */
    private final long sharedFrameBytes;
    /** Per address: [0] connections admitted, [1] bytes of large frames being received. */
    private final Map<InetAddress, long[]> perAddress = new HashMap<>();
    private int total;
    private long frameBytes;
    /** Connections refused and not closed yet (being told why). */
    private int refusing;

    /**
     * @param largeBudget the buffer pool's budget for large buffers ({@code BufferPool.Config.maxLargeBytes}):
     *                    an eighth of it is kept for addresses that hold no large frame
     */
    public ConnectionCounts(ConnectionLimits limits, long largeBudget) {
        this.max = limits.maxConnections();
        this.maxPerAddress = limits.maxConnectionsPerAddress();
        this.maxFrameBytesPerAddress = limits.maxFrameBytesPerAddress();
        this.sharedFrameBytes = largeBudget - largeBudget / 8;
    }

    /** One accepted connection's place in the counts: its refusal, if any, and {@link #release()} (once). */
    public final class Admission {
        private final InetAddress address;
        private final String refusal;
        private boolean released;

        private Admission(InetAddress address, String refusal) {
            this.address = address;
            this.refusal = refusal;
        }

        /** @return why the connection is refused, or null when it is admitted */
        public String refusal() {
            return refusal;
        }

        /** The connection closed: its place is free again. Idempotent. */
        public void release() {
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
                long[] n = perAddress.get(address);
                if (--n[0] == 0 && n[1] == 0) {
                    perAddress.remove(address);
                }
            }
        }

        /**
         * Reserves {@code bytes} of large receive buffer for one frame of this connection's, when
         * its address's share allows: an address may hold at most {@code maxFrameBytesPerAddress},
         * and one that already holds some may not take the last eighth of the pool's large budget
         * (kept for addresses that hold none, so a good client's large call gets through while
         * another peer hogs). An address that holds nothing may always take one frame (the pool
         * itself still bounds it).
         *
         * @return false when the frame must wait for the address's share
         */
        boolean takeFrameBytes(long bytes) {
            if (refusal != null) {
                return true; // a refused connection reads nothing more; never counted
            }
            synchronized (ConnectionCounts.this) {
                long[] n = perAddress.get(address);
                long held = n[1];
                if (held > 0 && (held + bytes > maxFrameBytesPerAddress || frameBytes + bytes > sharedFrameBytes)) {
                    return false;
                }
                n[1] = held + bytes;
                frameBytes += bytes;
                return true;
            }
        }

        /** Gives back what {@link #takeFrameBytes} reserved. */
        void releaseFrameBytes(long bytes) {
            if (refusal != null) {
                return;
            }
            synchronized (ConnectionCounts.this) {
                long[] n = perAddress.get(address);
                n[1] -= bytes;
                frameBytes -= bytes;
                if (n[0] == 0 && n[1] == 0) {
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
        long[] n = perAddress.get(address);
        long from = n == null ? 0 : n[0];
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
            perAddress.put(address, new long[] {1, 0});
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
    public synchronized int total() {
        return total;
    }

    /** @return the admitted connections open now from {@code address} */
    public synchronized int from(InetAddress address) {
        long[] n = perAddress.get(address);
        return n == null ? 0 : (int) n[0];
    }

    /** @return bytes of large frames being received now, reserved with {@link Admission#takeFrameBytes} */
    public synchronized long frameBytes() {
        return frameBytes;
    }
}
