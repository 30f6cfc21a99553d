package dev.rdmarpc.rpc.transport.rdma;

import java.lang.foreign.MemorySegment;

/**
 * Memory of the application registered with every device of an {@link RdmaTransport}
 * ({@link RdmaTransport#register}), so that attachments inside it are sent without a copy: the
 * work request's scatter-gather entry points at this memory, and only the frame's header and
 * payload are written into the transport's own buffers.
 * {@snippet :
 * RegisteredMemory blob = transport.register(arena.allocate(64 << 20));
 * client.call(PUT, key, CallOptions.DEFAULT.withAttachment(Attachment.of(blob.segment().asSlice(0, n))));
 * }
 *
 * <p>Applies to request attachments of clients on this transport (at least 4 KiB); the memory must
 * stay unchanged until the call's response arrives, as for any attachment. Response attachments are
 * copied (a server's handler may reuse its memory as soon as it returns).
 *
 * <p>Ownership: the caller owns the memory and this registration. {@link #close()} deregisters it
 * (idempotent); close it only when no call using it is in flight, and before freeing the memory.
 * Closing the transport closes it too. Thread-safe.
 */
public final class RegisteredMemory implements AutoCloseable {
    private final DeviceTable table;
    private final MemorySegment segment;
    final DeviceTable.UserRegion region;

    RegisteredMemory(DeviceTable table, MemorySegment segment, DeviceTable.UserRegion region) {
        this.table = table;
        this.segment = segment;
        this.region = region;
    }

    /** @return the registered memory */
    public MemorySegment segment() {
        return segment;
    }

    /** Deregisters the memory from every device. Idempotent. */
    @Override
    public void close() {
        table.deregisterUser(region);
    }

    @Override
    public String toString() {
        return "RegisteredMemory[" + segment.byteSize() + " bytes at 0x" + Long.toHexString(segment.address()) + "]";
    }
}
