package dev.rdmarpc.ibverbs.verbs;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/**
 * What one side of a reliable connection must tell the other before the queue pairs can move to
 * RTR: queue pair number, first packet sequence number, GID (RoCE, or InfiniBand across subnets)
 * and LID (InfiniBand). Exchange it out of band (a TCP socket, rdma_cm private data; in tests,
 * in-process) and pass the peer's to {@link ConnectionAttributes#remote(QpEndpoint)}.
 *
 * <p>{@link #write(MemorySegment, long)} / {@link #read(MemorySegment, long)} encode it in
 * {@link #BYTES} bytes, big-endian:
 * <pre>
 *  0       4       8   10  12                              28  32
 *  +-------+-------+---+---+-------------------------------+---+
 *  |  qpn  |  psn  |lid|pad|              gid              |pad|
 *  +-------+-------+---+---+-------------------------------+---+
 * </pre>
 *
 * @param qpNum the queue pair number (24 bits)
 * @param psn   the first packet sequence number that side sends (24 bits)
 * @param gid   its GID ({@link Gid#ZERO} on InfiniBand within a subnet)
 * @param lid   its LID (0 on RoCE)
 */
public record QpEndpoint(int qpNum, int psn, Gid gid, int lid) {
    /** Encoded size in bytes. */
    public static final int BYTES = 32;
    private static final ValueLayout.OfInt INT_BE =
            ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);
    private static final ValueLayout.OfShort SHORT_BE =
            ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);

    /**
     * @throws IllegalArgumentException for a QPN or PSN beyond 24 bits, a LID beyond 16 bits, or no GID
     */
    public QpEndpoint {
        if ((qpNum & ~0xFFFFFF) != 0) {
            throw new IllegalArgumentException("qpNum is 24 bits: " + qpNum);
        }
        if ((psn & ~0xFFFFFF) != 0) {
            throw new IllegalArgumentException("psn is 24 bits: " + psn);
        }
        if ((lid & ~0xFFFF) != 0) {
            throw new IllegalArgumentException("lid is 16 bits: " + lid);
        }
        if (gid == null) {
            throw new IllegalArgumentException("gid is null (use Gid.ZERO)");
        }
    }

    /** Encodes into {@link #BYTES} bytes at {@code offset}. */
    public void write(MemorySegment segment, long offset) {
        segment.set(INT_BE, offset, qpNum);
        segment.set(INT_BE, offset + 4, psn);
        segment.set(SHORT_BE, offset + 8, (short) lid);
        segment.set(SHORT_BE, offset + 10, (short) 0);
        gid.write(segment, offset + 12);
        segment.set(INT_BE, offset + 28, 0);
    }

    /** Decodes what {@link #write(MemorySegment, long)} wrote. */
    public static QpEndpoint read(MemorySegment segment, long offset) {
        return new QpEndpoint(segment.get(INT_BE, offset), segment.get(INT_BE, offset + 4),
                Gid.read(segment, offset + 12), Short.toUnsignedInt(segment.get(SHORT_BE, offset + 8)));
    }
}
