package dev.rdmarpc.ibverbs.verbs;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.Arrays;

/**
 * A 128-bit global identifier ({@code union ibv_gid}): for RoCE, the port's IP address as an IPv6
 * address (IPv4 addresses IPv4-mapped, {@code ::ffff:a.b.c.d}); for InfiniBand, subnet prefix and
 * port GUID. Immutable; {@link #toString()} writes it as an IPv6 address.
 */
public final class Gid {
    /** Size in bytes. */
    public static final int BYTES = 16;
    /** The all-zero GID of an empty table entry. */
    public static final Gid ZERO = new Gid(new byte[BYTES]);

    private final byte[] raw;

    private Gid(byte[] raw) {
        this.raw = raw;
    }

    /**
     * A GID of 16 bytes in network order.
     *
     * @throws IllegalArgumentException when {@code bytes} is not 16 bytes long
     */
    public static Gid of(byte[] bytes) {
        if (bytes.length != BYTES) {
            throw new IllegalArgumentException("a GID is 16 bytes, not " + bytes.length);
        }
        return new Gid(bytes.clone());
    }

    /** The GID read from 16 bytes of native memory ({@code union ibv_gid}). */
    public static Gid read(MemorySegment segment, long offset) {
        byte[] b = new byte[BYTES];
        MemorySegment.copy(segment, ValueLayout.JAVA_BYTE, offset, b, 0, BYTES);
        return new Gid(b);
    }

    /** The RoCE GID of an IP address: IPv4 mapped into IPv6 ({@code ::ffff:a.b.c.d}), IPv6 as it is. */
    public static Gid of(InetAddress address) {
        byte[] a = address.getAddress();
        if (address instanceof Inet4Address) {
            byte[] b = new byte[BYTES];
            b[10] = (byte) 0xff;
            b[11] = (byte) 0xff;
            System.arraycopy(a, 0, b, 12, 4);
            return new Gid(b);
        }
        return new Gid(a);
    }

    /** Writes the 16 bytes to native memory. */
    public void write(MemorySegment segment, long offset) {
        MemorySegment.copy(raw, 0, segment, ValueLayout.JAVA_BYTE, offset, BYTES);
    }

    /** The 16 bytes, network order (a copy). */
    public byte[] toByteArray() {
        return raw.clone();
    }

    /** The IP address of a RoCE GID: IPv4 for an IPv4-mapped GID, IPv6 otherwise. */
    public InetAddress toInetAddress() {
        try {
            return InetAddress.getByAddress(raw); // returns an Inet4Address for ::ffff:a.b.c.d
        } catch (UnknownHostException e) {
            throw new AssertionError(e);
        }
    }

    /** Whether this is an IPv4-mapped address ({@code ::ffff:a.b.c.d}). */
    public boolean isIpv4Mapped() {
        for (int i = 0; i < 10; i++) {
            if (raw[i] != 0) {
                return false;
            }
        }
        return raw[10] == (byte) 0xff && raw[11] == (byte) 0xff;
    }

    /** Whether all bytes are zero (an empty table entry). */
    public boolean isZero() {
        for (byte b : raw) {
            if (b != 0) {
                return false;
            }
        }
        return true;
    }

    /** The first 8 bytes as a big-endian number (IB subnet prefix; {@code fe80::} for link-local). */
    public long subnetPrefix() {
        return bigEndianLong(0);
    }

    /** The last 8 bytes as a big-endian number (IB port GUID). */
    public long interfaceId() {
        return bigEndianLong(8);
    }

    private long bigEndianLong(int from) {
        long v = 0;
        for (int i = from; i < from + 8; i++) {
            v = (v << 8) | (raw[i] & 0xff);
        }
        return v;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Gid g && Arrays.equals(raw, g.raw);
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(raw);
    }

    /** The GID as a full IPv6 address (also for IPv4-mapped GIDs, which read {@code 0:0:0:0:0:ffff:...}). */
    @Override
    public String toString() {
        try {
            return Inet6Address.getByAddress(null, raw, -1).getHostAddress();
        } catch (UnknownHostException e) {
            throw new AssertionError(e);
        }
    }
}
