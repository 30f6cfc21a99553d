package dev.rdmarpc.rpc.transport.rdma;

import dev.rdmarpc.ibverbs.verbs.MemoryRegion;
import dev.rdmarpc.ibverbs.verbs.ProtectionDomain;
import dev.rdmarpc.rpc.transport.rdma.DeviceTable.Device;
import dev.rdmarpc.rpc.transport.rdma.DeviceTable.UserRegion;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.BiConsumer;
import java.util.function.BiFunction;

/**
 * The application memory a {@link DeviceTable} has registered ({@link RegisteredMemory}, GPU memory of
 * a {@link TransportNicRegistrar}): published copy-on-write so the data path finds a frame's region
 * without a lock, and closed once no frame uses it. Changes run under the table's lock.
 */
final class UserRegions {
    private static final System.Logger LOG = System.getLogger(DeviceTable.class.getName());

    private final DeviceTable table;
    /** Registered application memory; copy-on-write so the data path reads it without a lock. */
    private volatile UserRegion[] regions = new UserRegion[0];
    /** Registrations whose close() waits for their frames (guarded by the table). */
    private final List<UserRegion> closing = new ArrayList<>();
    /** Closes the connections whose frames use a registration whose close waited long enough (set by the transport). */
    private volatile BiConsumer<UserRegion, String> holderCloser;

    UserRegions(DeviceTable table) {
        this.table = table;
    }

    /** Registers non-empty native {@code segment} with every device of {@code open}; under the table's lock. */
    UserRegion register(MemorySegment segment, List<Device> open, int access) {
        if (!segment.isNative() || segment.byteSize() == 0) {
            throw new IllegalArgumentException("only non-empty native memory can be registered: " + segment);
        }
        UserRegion u = new UserRegion(segment, -1);
        try {
            for (Device d : open) {
                registerWith(u, d, access);
            }
        } catch (RuntimeException e) {
            close(u);
            throw e;
        }
        add(u);
        return u;
    }

    /** Records memory {@code register} registers with {@code d} alone; under the table's lock. */
    UserRegion registerOnDevice(Device d, long address, long length,
                                BiFunction<ProtectionDomain, Integer, MemoryRegion> register, int access) {
        UserRegion u = new UserRegion(MemorySegment.ofAddress(address).reinterpret(length), d.index);
        MemoryRegion mr = register.apply(d.pd, access);
        u.regions[d.index] = mr;
        u.lkeys[d.index] = Integer.toUnsignedLong(mr.lkey());
        add(u);
        return u;
    }

    /** Publishes {@code u} to the data path (copy-on-write: readers take no lock). Under the table's lock. */
    private void add(UserRegion u) {
        UserRegion[] old = regions;
        UserRegion[] copy = Arrays.copyOf(old, old.length + 1);
        copy[old.length] = u;
        regions = copy;
    }

    /** Registers {@code u} with {@code d} (a device opened after it). */
    static void registerWith(UserRegion u, Device d, int access) {
        MemoryRegion mr = d.pd.register(u.segment, access);
        u.regions[d.index] = mr;
        u.lkeys[d.index] = Integer.toUnsignedLong(mr.lkey());
    }

    /** @return the registrations open now */
    UserRegion[] all() {
        return regions;
    }

    /** Sets what closes the connections whose frames use a registration whose close waited its time out. */
    void onHeld(BiConsumer<UserRegion, String> closer) {
        this.holderCloser = closer;
    }

    /** See {@link DeviceTable#deregisterUser}. */
    void deregister(UserRegion u, Duration timeout) {
        synchronized (table) {
            if (u.closed) {
                return;
            }
            regions = Arrays.stream(regions).filter(r -> r != u).toArray(UserRegion[]::new);
            closing.add(u);
            u.refuseUses();
        }
        if (!u.awaitUnused(timeout.toNanos())) {
            BiConsumer<UserRegion, String> closer = holderCloser;
            String reason = "registered memory closed while " + u.inUse() + " transfers still used it after "
                    + timeout.toMillis() + " ms (" + (u.end - u.start) + " bytes at 0x" + Long.toHexString(u.start)
                    + "): the connections that carry them are closed";
            LOG.log(System.Logger.Level.WARNING, reason);
            if (closer != null) {
                closer.accept(u, reason);
            }
            u.awaitUnused(Long.MAX_VALUE); // the connections close, destroy their queue pairs and give their uses back
        }
        synchronized (table) {
            closing.remove(u);
            close(u); // or the table's close did
        }
    }

    /** Closes every registration, those whose close waits too (nothing can read them now); under the table's lock. */
    void closeAll() {
        for (UserRegion u : regions) {
            close(u);
        }
        for (UserRegion u : closing) {
            close(u); // its close() waits no more: the queue pairs are gone
        }
        closing.clear();
        regions = new UserRegion[0];
    }

    private static void close(UserRegion u) {
        if (u.closed) {
            return;
        }
        u.closed = true;
        synchronized (u) {
            u.notifyAll(); // a close waiting for its frames: the transport closed, nothing can read it now
        }
        for (int i = 0; i < DeviceTable.MAX_DEVICES; i++) {
            MemoryRegion mr = u.regions[i];
            if (mr != null) {
                u.regions[i] = null;
                u.lkeys[i] = -1;
                try {
                    mr.close();
                } catch (RuntimeException e) {
                    LOG.log(System.Logger.Level.WARNING, "could not deregister " + mr, e);
                }
            }
        }
    }

    /** See {@link DeviceTable#userRegionCovering}. Lock-free; allocates nothing. */
    UserRegion covering(long address, long length) {
        UserRegion[] rs = regions;
        for (UserRegion r : rs) {
            if (address >= r.start && address + length <= r.end) {
                return r;
            }
        }
        return null;
    }
}
