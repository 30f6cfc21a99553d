package dev.rdmarpc.rpc;

import java.lang.foreign.MemorySegment;
import java.util.Objects;

/**
 * A byte range that travels after a message's payload without being copied into it (the payload's
 * codec never sees it), and where it lives: host memory (device id -1) or the memory of GPU N.
 *
 * <p>Host attachments are a {@link MemorySegment}. Device attachments are a device address and a
 * length, with the {@link DeviceStaging} that moves their bytes ({@code dev.rdmarpc.rpc.gpu.GpuStaging}
 * makes them); they have no host view. Over TCP a device attachment is staged through pinned host
 * memory on the way out and copied to the device buffer the receiver provides on the way in
 * ({@link CallOptions#withResponseAttachment}); a receiver that provides none gets the bytes in host
 * memory.
 *
 * <p>Lifetime: an attachment only describes memory, it does not own it. On the sending side the
 * memory must stay valid and unchanged until the call's response arrives (client) or the handler
 * returns (server). A host attachment of at least 4 KiB inside memory registered with the RDMA
 * transport that sends it ({@link dev.rdmarpc.rpc.transport.rdma.RdmaTransport#register}) is not
 * copied but read by the NIC where it lies, and may be read longer: a request's after a call that
 * ended without a response (its deadline, a cancel, a closed connection) left it queued or in flight,
 * a response's after its handler returned. Change or free that memory only once its
 * {@link dev.rdmarpc.rpc.transport.rdma.RegisteredMemory#transfersInFlight()} is 0, or its
 * {@link dev.rdmarpc.rpc.transport.rdma.RegisteredMemory#close()} returned. An attachment the
 * transport copied is free once the call completed (client) or the handler returned (server).
 *
 * <p>On the receiving side the attachment is a view of the receive buffer, valid for the same span
 * as the payload it came with, unless it landed in a buffer the caller provided
 * ({@link CallOptions#withResponseAttachment}: copied there, or over RDMA written there by the NIC).
 */
public final class Attachment {
    /** Where an attachment's bytes live. */
    public enum Location {
        /** Ordinary host (CPU) memory. */
        HOST,
        /** Device (GPU) memory: a device address, moved by a {@link DeviceStaging}. */
        DEVICE
    }

    /** No attachment. */
    public static final Attachment NONE = new Attachment(MemorySegment.NULL, Location.HOST, -1, 0, 0, null);

    private final MemorySegment segment;
    private final Location location;
    private final int deviceId;
    private final long address;
    private final int length;
    private final DeviceStaging staging;

    private Attachment(MemorySegment segment, Location location, int deviceId, long address, int length,
                       DeviceStaging staging) {
        this.segment = segment;
        this.location = location;
        this.deviceId = deviceId;
        this.address = address;
        this.length = length;
        this.staging = staging;
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
        return new Attachment(hostMemory, Location.HOST, -1, hostMemory.address(), (int) hostMemory.byteSize(), null);
    }

    /**
     * An attachment of device (GPU) memory. Applications usually get one from
     * {@code dev.rdmarpc.rpc.gpu.GpuStaging#attachment}.
     *
     * @param deviceId the GPU's ordinal, at least 0
     * @param address  the device address of the first byte
     * @param length   bytes, at least 0 (0 means no attachment)
     * @param staging  what moves the bytes to and from host memory
     * @return an attachment of device memory
     */
    public static Attachment device(int deviceId, long address, long length, DeviceStaging staging) {
        Objects.requireNonNull(staging, "staging");
        if (deviceId < 0) {
            throw new IllegalArgumentException("device id must be a GPU ordinal (>= 0): " + deviceId);
        }
        if (length < 0 || length > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("attachment length must be in [0, 2 GiB): " + length);
        }
        if (length == 0) {
            return NONE;
        }
        if (address == 0) {
            throw new IllegalArgumentException("null device address");
        }
        return new Attachment(MemorySegment.NULL, Location.DEVICE, deviceId, address, (int) length, staging);
    }

    /**
     * @return the attached host memory ({@link MemorySegment#NULL} for {@link #NONE})
     * @throws IllegalStateException for device memory, which has no host view (use {@link #address()})
     */
    public MemorySegment segment() {
        if (location == Location.DEVICE) {
            throw new IllegalStateException("a device attachment has no host view: " + this);
        }
        return segment;
    }

    /** @return the address of the first byte: a host address, or a device address for {@link Location#DEVICE} */
    public long address() {
        return address;
    }

    /** @return the attachment's length in bytes */
    public int length() {
        return length;
    }

    /** @return true when there is nothing attached */
    public boolean isEmpty() {
        return length == 0;
    }

    /** @return where the bytes live */
    public Location location() {
        return location;
    }

    /** @return the device ordinal for {@link Location#DEVICE}, -1 for host memory */
    public int deviceId() {
        return deviceId;
    }

    /** @return what moves a device attachment's bytes; null for host memory */
    public DeviceStaging staging() {
        return staging;
    }

    /**
     * The first {@code n} bytes of this attachment, in the same memory.
     *
     * @param n bytes, in [0, {@link #length()}]
     * @return the prefix ({@link #NONE} for 0)
     */
    public Attachment prefix(int n) {
        if (n < 0 || n > length) {
            throw new IndexOutOfBoundsException("prefix of " + n + " bytes of a " + length + "-byte attachment");
        }
        if (n == length) {
            return this;
        }
        return location == Location.DEVICE ? device(deviceId, address, n, staging) : of(segment.asSlice(0, n));
    }

    @Override
    public String toString() {
        return isEmpty() ? "Attachment.NONE"
                : "Attachment[" + (location == Location.DEVICE ? "GPU " + deviceId : "HOST") + ", " + length + " bytes]";
    }
}
