package dev.rdmarpc.rpc.transport.rdma;

import dev.rdmarpc.ibverbs.verbs.MemoryRegion;
import dev.rdmarpc.rpc.buffer.PooledBuffer;
import dev.rdmarpc.rpc.buffer.Slab;
import dev.rdmarpc.rpc.transport.rdma.DeviceTable.Device;
import dev.rdmarpc.rpc.transport.rdma.DeviceTable.Registration;
import java.util.ArrayList;
import java.util.List;

/**
 * The buffer pool's slabs as a {@link DeviceTable} registered them: each with every open device, the
 * memory region per device and the local keys hung on the slab, so that a buffer's local key is one
 * array read ({@link #lkey}). Changes run under the table's lock.
 */
final class SlabRegistrations {
    private static final System.Logger LOG = System.getLogger(DeviceTable.class.getName());

    private final List<Slab> slabs = new ArrayList<>();

    /** The local key of {@code buffer}'s memory on device {@code deviceIndex}. Allocates nothing. */
    static int lkey(PooledBuffer buffer, int deviceIndex) {
        return ((Registration) buffer.slab().registration()).lkeys[deviceIndex];
    }

    /** The memory region of {@code buffer}'s slab on device {@code deviceIndex}. */
    static MemoryRegion region(PooledBuffer buffer, int deviceIndex) {
        return ((Registration) buffer.slab().registration()).regions[deviceIndex];
    }

    /** Registers a new slab with every device of {@code open}; on a failure undoes what it did and throws. */
    void created(Slab slab, List<Device> open, int access) {
        Registration r = new Registration();
        slab.setRegistration(r);
        try {
            for (Device d : open) {
                register(slab, r, d, access);
            }
        } catch (RuntimeException e) {
            deregister(slab);
            throw e;
        }
        slabs.add(slab);
    }

    /** @return bytes of the slabs registered now (each with every open device) */
    long bytes() {
        long n = 0;
        for (Slab s : slabs) {
            n += s.byteSize();
        }
        return n;
    }

    /** The pool frees {@code slab}: deregistered from every device. */
    void freed(Slab slab) {
        slabs.remove(slab);
        deregister(slab);
    }

    /** Registers every slab with {@code d}, a device opening now. */
    void registerWith(Device d, int access) {
        for (Slab s : slabs) {
            register(s, (Registration) s.registration(), d, access);
        }
    }

    /** Deregisters every slab from {@code d}, a device whose opening failed. */
    void undo(Device d) {
        for (Slab s : slabs) {
            Registration r = (Registration) s.registration();
            MemoryRegion mr = r.regions[d.index];
            if (mr != null) {
                r.regions[d.index] = null;
                mr.close();
            }
        }
    }

    /** Deregisters every slab (the table closes before the pool did). */
    void deregisterAll() {
        for (Slab s : new ArrayList<>(slabs)) {
            deregister(s);
        }
        slabs.clear();
    }

    private static void register(Slab slab, Registration r, Device d, int access) {
        MemoryRegion mr = d.pd.register(slab.segment(), access);
        r.regions[d.index] = mr;
        r.lkeys[d.index] = mr.lkey();
    }

    private static void deregister(Slab slab) {
        Registration r = (Registration) slab.registration();
        if (r == null) {
            return;
        }
        for (int i = 0; i < DeviceTable.MAX_DEVICES; i++) {
            MemoryRegion mr = r.regions[i];
            if (mr != null) {
                r.regions[i] = null;
                try {
                    mr.close();
                } catch (RuntimeException e) {
                    LOG.log(System.Logger.Level.WARNING, "could not deregister " + mr, e);
                }
            }
        }
        slab.setRegistration(null);
    }
}
