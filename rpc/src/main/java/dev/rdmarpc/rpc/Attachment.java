package dev.rdmarpc.rpc;

import java.lang.foreign.MemorySegment;
import java.util.Objects;

/**
 * A byte range that travels after a message's payload without being copied into it (the payload's
 * codec never sees it). Today an attachment is host memory; the {@link Location} lets a later
 * version describe device (GPU) memory the same way, with its device id.
 *
 * <p>Lifetime: an attachment only describes memory, it does not own it. On the sending side the
 * memory must stay valid and unchanged until the call's response arrives (client) or the handler
 * returns (server). On the receiving side the attachment is a view of the receive buffer, valid for
 * the same span as the payload it came with.
 */
public final class Attachment {
    /** Where an attachment's bytes live. */
    public enum Location {
        /** Ordinary host (CPU) memory. */
        HOST,
        /** Device (GPU) memory; reserved for the GPU-attachment feature, not accepted yet. */
        DEVICE
    }

    /** No attachment. */
    public static final Attachment NONE = new Attachment(MemorySegment.NULL, Location.HOST, -1);

    private final MemorySegment segment;
    private final Location location;
    private final int deviceId;

    private Attachment(MemorySegment segment, Location location, int deviceId) {
        this.segment = segment;
        this.location = location;
        this.deviceId = deviceId;
    }

    /**
     * @param hostMemory the bytes to attach (all of them); an empty segment means no attachment
     * @return an attachment of host memory
     */
    public static Attachment of(MemorySegment hostMemory) {
        Objects.requireNonNull(hostMemory, "hostMemory");
        if (hostMemory.byteSize() == 0) {
            return NONE;
        }
        if (hostMemory.byteSize() > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("attachment larger than 2 GiB");
        }
        return new Attachment(hostMemory, Location.HOST, -1);
    }

    /** @return the attached memory ({@link MemorySegment#NULL} for {@link #NONE}) */
    public MemorySegment segment() {
        return segment;
    }

    /** @return the attachment's length in bytes */
    public int length() {
        return (int) segment.byteSize();
    }

    /** @return true when there is nothing attached */
    public boolean isEmpty() {
        return segment.byteSize() == 0;
    }

    /** @return where the bytes live */
    public Location location() {
        return location;
    }

    /** @return the device ordinal for {@link Location#DEVICE}, -1 for host memory */
    public int deviceId() {
        return deviceId;
    }

    @Override
    public String toString() {
        return isEmpty() ? "Attachment.NONE" : "Attachment[" + location + ", " + length() + " bytes]";
    }
}
