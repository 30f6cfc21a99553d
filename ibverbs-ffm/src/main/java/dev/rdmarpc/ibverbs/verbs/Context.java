package dev.rdmarpc.ibverbs.verbs;

import dev.rdmarpc.ibverbs.Ibverbs;
import dev.rdmarpc.ibverbs.VerbsException;
import dev.rdmarpc.ibverbs.VerbsInline;
import dev.rdmarpc.ibverbs.VerbsNative;
import dev.rdmarpc.ibverbs.raw.ibv_context;
import dev.rdmarpc.ibverbs.raw.ibv_device;
import dev.rdmarpc.ibverbs.raw.ibv_device_attr;
import dev.rdmarpc.ibverbs.raw.ibv_gid_entry;
import dev.rdmarpc.ibverbs.raw.ibv_port_attr;
import dev.rdmarpc.ibverbs.raw.ibverbs_h;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;

/**
 * An opened RDMA device ({@code struct ibv_context}): the root every other resource hangs from.
 *
 * {@snippet :
 * try (Context ctx = Context.open("rxe0");
 *      ProtectionDomain pd = ctx.allocateProtectionDomain();
 *      CompletionQueue cq = ctx.createCompletionQueue(256)) {
 *     PortAttributes port = ctx.queryPort(1);
 *     GidEntry gid = ctx.gidFor(1, InetAddress.getByName("198.18.0.1"));
 *     // ...
 * }
 * }
 *
 * <p>Owns the device handle ({@code ibv_close_device} on close) unless it {@link #wrap wraps} a
 * context someone else opened (rdma_cm's); refuses to close while protection domains, completion
 * channels, completion queues or an async event monitor made from it are open.
 *
 * <p>Thread-safe: queries and creating resources may run on any thread, concurrently.
 */
public final class Context extends VerbsResource {
    private static final int ENODATA = 61;

    private final MemorySegment context;
    private final boolean owned;
    private final String name;
    private final ConcurrentHashMap<Long, VerbsResource> elements = new ConcurrentHashMap<>();
    private volatile DeviceAttributes deviceAttributes;

    private Context(MemorySegment context, boolean owned) {
        super(ResourceKind.CONTEXT);
        this.context = context;
        this.owned = owned;
        this.name = ibverbs_h.ibv_get_device_name(ibv_context.device(context)).getString(0);
    }

    /**
     * Opens the device called {@code name} ({@code ibv_open_device}).
     *
     * @throws NoSuchDeviceException naming {@code name} and the devices there are, when none is called so
     * @throws VerbsException when the device cannot be opened
     */
    public static Context open(String name) {
        Ibverbs.ensureAvailability();
        if (name == null || name.isEmpty()) {
            throw new IllegalArgumentException("device name is empty");
        }
        return openMatching(name);
    }

    /**
     * Opens the first device (in {@link Verbs#devices()} order) with a port in state ACTIVE.
     *
     * @throws NoSuchDeviceException when there is no device, or none with an active port
     */
    public static Context openFirstActive() {
        Ibverbs.ensureAvailability();
        return openMatching(null);
    }

    private static Context openMatching(String wanted) {
        List<String> names = new ArrayList<>();
        MemorySegment list;
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment count = arena.allocate(JAVA_INT);
            try {
                list = VerbsNative.ibv_get_device_list(count);
            } catch (VerbsException e) {
                if (e.errno() == 38) { // ENOSYS: no RDMA in this kernel, so no device
                    throw new NoSuchDeviceException(wanted, List.of());
                }
                throw e;
            }
            try {
                int n = count.get(JAVA_INT, 0);
                for (int i = 0; i < n; i++) {
                    MemorySegment device = list.getAtIndex(ADDRESS, i).reinterpret(ibv_device.sizeof());
                    String deviceName = ibverbs_h.ibv_get_device_name(device).getString(0);
                    names.add(deviceName);
                    if (wanted != null && !wanted.equals(deviceName)) {
                        continue;
                    }
                    Context ctx = new Context(VerbsNative.ibv_open_device(device), true);
                    boolean keep = false;
                    try {
                        keep = wanted != null || ctx.hasActivePort();
                    } finally {
                        if (!keep) {
                            ctx.close();
                        }
                    }
                    if (keep) {
                        return ctx;
                    }
                }
            } finally {
                ibverbs_h.ibv_free_device_list(list);
            }
        }
        throw new NoSuchDeviceException(wanted, names);
    }

    private boolean hasActivePort() {
        int ports = queryDevice().physicalPortCount();
        for (int p = 1; p <= ports; p++) {
            if (queryPort(p).isActive()) {
                return true;
            }
        }
        return false;
    }

    /**
     * A context over an {@code ibv_context} opened elsewhere (e.g. {@code rdma_cm_id->verbs}), which
     * this object does not own: {@link #close()} enforces the dependents rule and counts, but never
     * calls {@code ibv_close_device}. The caller keeps the native context alive until this is closed.
     */
    public static Context wrap(MemorySegment ibvContext) {
        Ibverbs.ensureAvailability();
        if (ibvContext == null || ibvContext.address() == 0) {
            throw new IllegalArgumentException("ibv_context is NULL");
        }
        // the native object's own lifetime applies, not the scope of the segment it was handed in
        return new Context(MemorySegment.ofAddress(ibvContext.address()).reinterpret(ibv_context.sizeof()), false);
    }

    /** The device name ({@code rxe0}). */
    public String name() {
        return name;
    }

    /** The native {@code struct ibv_context *}, for the raw bindings. */
    public MemorySegment segment() {
        return context;
    }

    /** Whether {@link #close()} closes the native device ({@code false} for {@link #wrap wrapped} ones). */
    public boolean ownsDevice() {
        return owned;
    }

    /** How many completion vectors (interrupt lines) the device has; a CQ picks one at creation. */
    public int completionVectors() {
        return ibv_context.num_comp_vectors(context);
    }

    /** The device's asynchronous event fd (read by {@link AsyncEventMonitor}). */
    public int asyncFd() {
        return ibv_context.async_fd(context);
    }

    /** {@code ibv_query_device}. The first answer is also kept for defaults (see {@link ConnectionAttributes}). */
    public DeviceAttributes queryDevice() {
        ensureOpen();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment a = ibv_device_attr.allocate(arena);
            VerbsNative.check("ibv_query_device", ibverbs_h.ibv_query_device(context, a));
            DeviceAttributes attrs = new DeviceAttributes(ibv_device_attr.fw_ver(a).getString(0),
                    Long.reverseBytes(ibv_device_attr.node_guid(a)), Long.reverseBytes(ibv_device_attr.sys_image_guid(a)),
                    ibv_device_attr.max_mr_size(a), ibv_device_attr.page_size_cap(a), ibv_device_attr.vendor_id(a),
                    ibv_device_attr.vendor_part_id(a), ibv_device_attr.hw_ver(a), ibv_device_attr.max_qp(a),
                    ibv_device_attr.max_qp_wr(a), ibv_device_attr.device_cap_flags(a), ibv_device_attr.max_sge(a),
                    ibv_device_attr.max_sge_rd(a), ibv_device_attr.max_cq(a), ibv_device_attr.max_cqe(a),
                    ibv_device_attr.max_mr(a), ibv_device_attr.max_pd(a), ibv_device_attr.max_qp_rd_atom(a),
                    ibv_device_attr.max_qp_init_rd_atom(a), ibv_device_attr.max_srq(a), ibv_device_attr.max_srq_wr(a),
                    ibv_device_attr.max_srq_sge(a), ibv_device_attr.max_ah(a), ibv_device_attr.atomic_cap(a),
                    Byte.toUnsignedInt(ibv_device_attr.local_ca_ack_delay(a)),
                    Byte.toUnsignedInt(ibv_device_attr.phys_port_cnt(a)));
            deviceAttributes = attrs;
            return attrs;
        }
    }

    /** The device attributes of the first {@link #queryDevice()} (queried now if never). */
    DeviceAttributes deviceAttributes() {
        DeviceAttributes a = deviceAttributes;
        return a != null ? a : queryDevice();
    }

    /**
     * {@code ibv_query_port}.
     *
     * @param port the port number, from 1
     */
    public PortAttributes queryPort(int port) {
        ensureOpen();
        checkPort(port);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment a = ibv_port_attr.allocate(arena);
            VerbsNative.check("ibv_query_port", VerbsInline.ibv_query_port(context, (byte) port, a));
            return new PortAttributes(port, PortState.of(ibv_port_attr.state(a)), mtuOrSmallest(ibv_port_attr.max_mtu(a)),
                    mtuOrSmallest(ibv_port_attr.active_mtu(a)), ibv_port_attr.gid_tbl_len(a),
                    ibv_port_attr.port_cap_flags(a), Integer.toUnsignedLong(ibv_port_attr.max_msg_sz(a)),
                    Short.toUnsignedInt(ibv_port_attr.lid(a)), Short.toUnsignedInt(ibv_port_attr.sm_lid(a)),
                    LinkLayer.of(Byte.toUnsignedInt(ibv_port_attr.link_layer(a))),
                    Byte.toUnsignedInt(ibv_port_attr.active_width(a)), Byte.toUnsignedInt(ibv_port_attr.active_speed(a)),
                    Byte.toUnsignedInt(ibv_port_attr.phys_state(a)), Short.toUnsignedInt(ibv_port_attr.pkey_tbl_len(a)));
        }
    }

    private static Mtu mtuOrSmallest(int value) {
        return value >= 1 && value <= 5 ? Mtu.of(value) : Mtu.MTU_256;
    }

    private static void checkPort(int port) {
        if (port < 1 || port > 255) {
            throw new IllegalArgumentException("port numbers run from 1 to 255, not " + port);
        }
    }

    /**
     * The valid entries of a port's GID table, with type and network device
     * ({@code ibv_query_gid_table}; empty entries are left out).
     */
    public List<GidEntry> gidTable(int port) {
        ensureOpen();
        checkPort(port);
        int ports = deviceAttributes().physicalPortCount();
        int capacity = 0;
        for (int p = 1; p <= ports; p++) {
            capacity += queryPort(p).gidTableLength();
        }
        List<GidEntry> entries = new ArrayList<>();
        if (capacity == 0) {
            return entries;
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment table = ibv_gid_entry.allocateArray(capacity, arena);
            long n = ibverbs_h._ibv_query_gid_table(context, table, capacity, 0, ibv_gid_entry.sizeof());
            if (n < 0) {
                throw new VerbsException("ibv_query_gid_table", (int) -n);
            }
            for (int i = 0; i < n; i++) {
                MemorySegment e = ibv_gid_entry.asSlice(table, i);
                if (ibv_gid_entry.port_num(e) == port) {
                    entries.add(entry(e));
                }
            }
        }
        entries.sort((a, b) -> Integer.compare(a.index(), b.index()));
        return entries;
    }

    /**
     * One GID table entry ({@code ibv_query_gid_ex}).
     *
     * @throws VerbsException with ENODATA when the entry is empty
     */
    public GidEntry gid(int port, int index) {
        ensureOpen();
        checkPort(port);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment e = ibv_gid_entry.allocate(arena);
            int rc = ibverbs_h._ibv_query_gid_ex(context, port, index, e, 0, ibv_gid_entry.sizeof());
            if (rc != 0) {
                throw new VerbsException("ibv_query_gid_ex(port " + port + ", index " + index + ")", Math.abs(rc));
            }
            return entry(e);
        }
    }

    private static GidEntry entry(MemorySegment e) {
        int ifIndex = ibv_gid_entry.ndev_ifindex(e);
        return new GidEntry(ibv_gid_entry.port_num(e), ibv_gid_entry.gid_index(e),
                Gid.read(ibv_gid_entry.gid(e), 0), GidType.of(ibv_gid_entry.gid_type(e)), ifIndex,
                Posix.ifIndexToName(ifIndex));
    }

    /**
     * The RoCE v2 GID entry of a local IP address on a port: the entry whose GID is the address
     * (IPv4-mapped {@code ::ffff:a.b.c.d} for IPv4) and whose type is RoCE v2. Its
     * {@link GidEntry#index()} is the {@code sgid_index} to send from that address.
     *
     * @throws IllegalArgumentException when no RoCE v2 entry has that address; the message lists the table
     */
    public GidEntry gidFor(int port, InetAddress localAddress) {
        Gid wanted = Gid.of(localAddress);
        List<GidEntry> table = gidTable(port);
        for (GidEntry e : table) {
            if (e.type() == GidType.ROCE_V2 && e.gid().equals(wanted)) {
                return e;
            }
        }
        StringBuilder sb = new StringBuilder("no RoCE v2 GID for " + localAddress.getHostAddress() + " on " + name
                + " port " + port + "; GID table:");
        for (GidEntry e : table) {
            sb.append("\n  ").append(e.index()).append(' ').append(e.gid()).append(' ').append(e.type())
                    .append(' ').append(e.netdev());
        }
        throw new IllegalArgumentException(sb.toString());
    }

    /** {@code ibv_alloc_pd}. */
    public ProtectionDomain allocateProtectionDomain() {
        acquire(this);
        try {
            return new ProtectionDomain(this, VerbsNative.ibv_alloc_pd(context));
        } catch (RuntimeException | Error e) {
            release(this);
            throw e;
        }
    }

    /** {@code ibv_create_comp_channel}; its fd is made non-blocking. */
    public CompletionChannel createCompletionChannel() {
        acquire(this);
        try {
            return new CompletionChannel(this, VerbsNative.ibv_create_comp_channel(context));
        } catch (RuntimeException | Error e) {
            release(this);
            throw e;
        }
    }

    /** A completion queue of at least {@code minEntries} entries, without a channel, on vector 0. */
    public CompletionQueue createCompletionQueue(int minEntries) {
        return createCompletionQueue(minEntries, null, 0);
    }

    /**
     * {@code ibv_create_cq}.
     *
     * @param minEntries   the least number of completions it must hold (the provider may give more)
     * @param channel      the channel its notifications go to, or {@code null} for a polled-only CQ
     * @param vector       the completion vector, 0 to {@link #completionVectors()} - 1
     */
    public CompletionQueue createCompletionQueue(int minEntries, CompletionChannel channel, int vector) {
        if (minEntries < 1) {
            throw new IllegalArgumentException("a completion queue needs at least 1 entry, not " + minEntries);
        }
        if (channel != null && channel.context() != this) {
            throw new IllegalArgumentException(channel + " belongs to another device");
        }
        acquire(this, channel);
        try {
            MemorySegment cq = VerbsNative.ibv_create_cq(context, minEntries, MemorySegment.NULL,
                    channel == null ? MemorySegment.NULL : channel.segment(), vector);
            return new CompletionQueue(this, channel, cq);
        } catch (RuntimeException | Error e) {
            release(this, channel);
            throw e;
        }
    }

    /**
     * Starts a daemon thread that reads this device's asynchronous events ({@code ibv_get_async_event})
     * and hands each to {@code listener} (on that thread), then acknowledges it. Close the returned
     * monitor to stop the thread; it depends on this context.
     */
    public AsyncEventMonitor startAsyncEvents(AsyncEventListener listener) {
        if (listener == null) {
            throw new IllegalArgumentException("listener is null");
        }
        acquire(this);
        try {
            return new AsyncEventMonitor(this, listener);
        } catch (RuntimeException | Error e) {
            release(this);
            throw e;
        }
    }

    /** Records a QP, CQ or SRQ so async events about it can name it. */
    void registerElement(MemorySegment handle, VerbsResource resource) {
        elements.put(handle.address(), resource);
    }

    void unregisterElement(MemorySegment handle) {
        elements.remove(handle.address());
    }

    VerbsResource element(long address) {
        return elements.get(address);
    }

    @Override
    void destroy() {
        if (owned) {
            VerbsNative.check("ibv_close_device", ibverbs_h.ibv_close_device(context));
        }
    }

    @Override
    public String toString() {
        return "Context[" + name + "]";
    }
}
