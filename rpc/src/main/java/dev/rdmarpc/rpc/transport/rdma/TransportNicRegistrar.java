package dev.rdmarpc.rpc.transport.rdma;

import dev.rdmarpc.ibverbs.verbs.MemoryRegion;
import dev.rdmarpc.ibverbs.verbs.ProtectionDomain;
import dev.rdmarpc.rpc.gpu.NicRegistrar;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.function.BiFunction;

/**
 * {@link NicRegistrar} of one device of an {@link RdmaTransport} ({@link RdmaTransport#nicRegistrar}):
 * each registration is also recorded in the transport's {@link DeviceTable}, so frames whose attachment
 * lies in it, or whose response attachment is to land in it, move it with the NIC, as for
 * {@link RegisteredMemory}. A registration's {@link Registration#close()} waits as
 * {@link RegisteredMemory#close()} does. Thread-safe.
 */
final class TransportNicRegistrar implements NicRegistrar {
    private final DeviceTable table;
    private final String device;

    TransportNicRegistrar(DeviceTable table, String device) {
        this.table = table;
        this.device = device;
    }

    @Override
    public String name() {
        return device;
    }

    @Override
    public Registration registerDmaBuf(int fd, long offset, long length, long iova, int access) {
        return record(iova, length, (pd, needed) -> pd.registerDmaBuf(offset, length, iova, fd, access | needed));
    }

    @Override
    public Registration registerMemory(long address, long length, int access) {
        return record(address, length, (pd, needed) -> pd.registerAddress(address, length, access | needed));
    }

    private Registration record(long address, long length,
                                BiFunction<ProtectionDomain, Integer, MemoryRegion> register) {
        DeviceTable.UserRegion u;
        try {
            u = table.registerOnDevice(device, address, length, register);
        } catch (IOException e) {
            throw new UncheckedIOException(e.getMessage(), e);
        }
        return new Region(table, u);
    }

    /** One recorded registration. */
    private record Region(DeviceTable table, DeviceTable.UserRegion region) implements Registration {
        @Override
        public int lkey() {
            return (int) region.lkeys[region.onlyDevice];
        }

        @Override
        public int rkey() {
            return region.regions[region.onlyDevice].rkey();
        }

        @Override
        public void close() {
            table.deregisterUser(region, RegisteredMemory.CLOSE_TIMEOUT); // idempotent; waits for the frames that use it
        }
    }

    @Override
    public String toString() {
        return "TransportNicRegistrar[" + device + "]";
    }
}
