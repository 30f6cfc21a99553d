package dev.rdmarpc.ibverbs.verbs;

import dev.rdmarpc.ibverbs.Ibverbs;
import dev.rdmarpc.ibverbs.VerbsException;
import dev.rdmarpc.ibverbs.VerbsNative;
import dev.rdmarpc.ibverbs.raw.ibv_device;
import dev.rdmarpc.ibverbs.raw.ibverbs_h;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;

/**
 * Entry points that need no opened device: the device list and fork support.
 *
 * <h2>Fork safety</h2>
 * Registered memory is pinned and mapped by the device. When a process with registered memory
 * forks, copy-on-write can move the parent's pages away from under the device, corrupting RDMA
 * transfers in the parent (before Linux 5.13). {@link #forkInit()} ({@code ibv_fork_init}) makes
 * libibverbs mark registered memory {@code MADV_DONTFORK}, so the child does not get it. Call it
 * <b>once, before opening any device or registering any memory</b>, when the JVM will fork
 * (ProcessBuilder/Runtime.exec use {@code posix_spawn} or {@code vfork} by default and do not
 * need it; the {@code jdk.lang.Process.launchMechanism=FORK} mode and native code that forks do).
 * It costs a {@code madvise} per registration. On Linux 5.13+ the kernel handles it:
 * {@link #forkStatus()} says {@link ForkStatus#UNNEEDED}. Setting the environment variable
 * {@code RDMAV_FORK_SAFE=1} does the same as calling it.
 *
 * <p>All methods are thread-safe.
 */
public final class Verbs {
    private static final int ENOSYS = 38;

    private Verbs() {
    }

    /**
     * The RDMA devices of this host ({@code ibv_get_device_list}). Empty when there is none, and also
     * when the kernel has no RDMA support at all (libibverbs then reports ENOSYS).
     *
     * @throws dev.rdmarpc.ibverbs.VerbsUnavailableException when libibverbs cannot be loaded
     * @throws VerbsException for any other failure of the list
     */
    public static List<DeviceInfo> devices() {
        Ibverbs.ensureAvailability();
        List<DeviceInfo> result = new ArrayList<>();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment count = arena.allocate(JAVA_INT);
            MemorySegment list;
            try {
                list = VerbsNative.ibv_get_device_list(count);
            } catch (VerbsException e) {
                if (e.errno() == ENOSYS) {
                    return result;
                }
                throw e;
            }
            try {
                int n = count.get(JAVA_INT, 0);
                for (int i = 0; i < n; i++) {
                    result.add(info(list.getAtIndex(ADDRESS, i).reinterpret(ibv_device.sizeof())));
                }
            } finally {
                ibverbs_h.ibv_free_device_list(list);
            }
        }
        return List.copyOf(result);
    }

    static DeviceInfo info(MemorySegment device) {
        String name = ibverbs_h.ibv_get_device_name(device).getString(0);
        long guid = Long.reverseBytes(ibverbs_h.ibv_get_device_guid(device)); // __be64 -> the number
        int index = ibverbs_h.ibv_get_device_index(device);
        return new DeviceInfo(name, guid, NodeType.of(ibv_device.node_type(device)), index);
    }

    /**
     * {@code ibv_fork_init}: makes registered memory safe across {@code fork()} (see the class
     * comment for when that is needed). Call before opening any device.
     *
     * @throws VerbsException when libibverbs refuses (e.g. EINVAL after memory was already registered)
     */
    public static void forkInit() {
        Ibverbs.ensureAvailability();
        VerbsNative.check("ibv_fork_init", ibverbs_h.ibv_fork_init());
    }

    /** {@code ibv_is_fork_initialized}: whether fork protection is on, off, or not needed by this kernel. */
    public static ForkStatus forkStatus() {
        Ibverbs.ensureAvailability();
        return ForkStatus.of(ibverbs_h.ibv_is_fork_initialized());
    }
}
