package dev.rdmarpc.rpc.transport.rdma;

import dev.rdmarpc.ibverbs.verbs.Access;
import dev.rdmarpc.ibverbs.verbs.AsyncEvent;
import dev.rdmarpc.ibverbs.verbs.AsyncEventMonitor;
import dev.rdmarpc.ibverbs.verbs.Context;
import dev.rdmarpc.ibverbs.verbs.MemoryRegion;
import dev.rdmarpc.ibverbs.verbs.PortAttributes;
import dev.rdmarpc.ibverbs.verbs.ProtectionDomain;
import dev.rdmarpc.ibverbs.verbs.QueuePair;
import dev.rdmarpc.ibverbs.verbs.SharedReceiveQueue;
import dev.rdmarpc.rpc.buffer.PooledBuffer;
import dev.rdmarpc.rpc.buffer.Slab;
import dev.rdmarpc.rpc.buffer.SlabListener;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.net.InetAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BiConsumer;
import java.util.function.BiFunction;
import java.util.function.Consumer;

/**
 * The devices a transport uses, and the registration of its buffer pool with each of them.
 *
 * <p>A device is opened (context and protection domain) the first time a connection needs it. Each
 * slab of the pool is registered once per device in use: when the slab is created with every device
 * open at that time, and when a device opens with every slab that exists then. A buffer's local key
 * for a device is then one array read ({@link #lkey}), no lookup and no registration on the data
 * path. Slabs are deregistered when the pool frees them, before their memory goes.
 *
 * <p>Registered memory allows local access only ({@link Access#LOCAL}): no peer can ever read or write
 * it by the region's key. With rendezvous enabled it also allows {@link Access#MW_BIND}: a rendezvous
 * frame's sender binds a memory window with remote read access to that frame's bytes alone, and
 * invalidates it once the peer has read them ({@link Rendezvous}).
 *
 * <p>Thread-safe (one lock; used at connection setup and when the pool grows, never per message).
 */
final class DeviceTable implements SlabListener, AutoCloseable {
    private static final System.Logger LOG = System.getLogger(DeviceTable.class.getName());
    /** Most devices one transport can use at once. */
    static final int MAX_DEVICES = 16;
    /** The vendor id Soft-RoCE (rxe) reports. */
    static final int SOFT_ROCE_VENDOR_ID = 0xFFFFFF;

    /** One opened device: its context, its protection domain, its index in every registration. */
    static final class Device {
        final int index;
        final Context context;
        final ProtectionDomain pd;
        final int port;
        final PortAttributes portAttributes;
        /**
         * True for Soft-RoCE (rxe, vendor id 0xffffff): it checks a memory window's key against the
         * bounds of the window's region, not of the window (measured on kernel 6.12.95, see
         * MemoryWindowRdmaTest), so what a rendezvous frame's registration holds beyond the frame must
         * not be anything a peer may not read.
         */
        final boolean windowBoundsByRegion;
        /**
         * True for Soft-RoCE (rxe): after a retransmission its requester walks the send queue again from
         * the oldest work request not completed yet and executes again the memory window binds it had
         * executed there already. The second bind of a window fails (the first changed its key), with
         * no error completion: the queue pair goes to the error state and every work request completes
         * flushed (rxe_req.c, req_retry and req_next_wqe; rxe_mw.c, rxe_bind_mw; kernel 6.12.95). So
         * on such a device a rendezvous frame's windows are bound only while nothing else of the
         * connection is outstanding (nor another rendezvous frame held); a frame that finds the
         * connection busy has each part registered on its own for its transfer instead ({@link Rendezvous}), which puts nothing on the send queue.
         * (Waiting for the queue to go idle, the first answer, serialized a busy connection's frames
         * behind everything else it had in flight.)
         */
        final boolean bindsRepeatedByRetransmission;
        /** The device's async events: port and device failures, queue pair faults, shared receive queue limits. */
        AsyncEventMonitor events;

        Device(int index, Context context, ProtectionDomain pd, int port, PortAttributes portAttributes) {
            this.index = index;
            this.context = context;
            this.pd = pd;
            this.port = port;
            this.portAttributes = portAttributes;
            boolean softRoce = context.queryDevice().vendorId() == SOFT_ROCE_VENDOR_ID;
            this.windowBoundsByRegion = softRoce;
            this.bindsRepeatedByRetransmission = softRoce;
        }

        @Override
        public String toString() {
            return context.name() + " port " + port;
        }
    }

    /** A device and the GID index to use from one local address. */
    record Choice(Device device, int gidIndex) {
    }

    /**
     * Application memory registered with every device ({@link RegisteredMemory}), and the frames that
     * use it: a frame whose zero-copy part lies here takes a use when it is claimed and gives it back
     * when the transport is done with that part (its last message completed, or the peer read it and
     * its window was invalidated, or the frame was dropped: aborted, or its connection closed and its
     * queue pair destroyed). Closing refuses new uses, waits until none is left, then deregisters.
     */
    static final class UserRegion {
        /** Added to {@link #uses} once closing started: no frame takes a use after that. */
        private static final int CLOSING = Integer.MIN_VALUE;

        final long start;
        final long end;
        /** The memory; for a region on one device only ({@link #onlyDevice}), a view of its addresses never dereferenced. */
        final MemorySegment segment;
        /** The index of the one device this region is registered with ({@link #registerOnDevice}), or -1 for every device. */
        final int onlyDevice;
        final MemoryRegion[] regions = new MemoryRegion[MAX_DEVICES];
        final long[] lkeys = new long[MAX_DEVICES];
        /** Deregistered (guarded by the table; read by waiters). */
        volatile boolean closed;
        private final AtomicInteger uses = new AtomicInteger();

        UserRegion(MemorySegment segment, int onlyDevice) {
            this.segment = segment;
            this.onlyDevice = onlyDevice;
            this.start = segment.address();
            this.end = segment.address() + segment.byteSize();
            java.util.Arrays.fill(lkeys, -1);
        }

        /** Takes a use for one frame's zero-copy part. Lock-free, any thread. @return false once closing */
        boolean tryUse() {
            for (;;) {
                int v = uses.get();
                if (v < 0) {
                    return false;
                }
                if (uses.compareAndSet(v, v + 1)) {
                    return true;
                }
            }
        }

        /** Gives a use back: the transport is done with a frame's zero-copy part. Any thread. */
        void unuse() {
            int v = uses.decrementAndGet();
            if (v == CLOSING) {
                synchronized (this) {
                    notifyAll();
                }
            } else if ((v & Integer.MAX_VALUE) == Integer.MAX_VALUE) {
                throw new IllegalStateException("registered memory used less often than given back");
            }
        }

        /** @return frames whose zero-copy part lies here and that the transport is not done with */
        int inUse() {
            return uses.get() & Integer.MAX_VALUE;
        }

        /** Refuses new uses from now on (idempotent). */
        void refuseUses() {
            uses.getAndUpdate(v -> v | CLOSING);
        }

        /**
         * Waits until no frame uses this memory, or it was deregistered (the transport closed: no
         * queue pair is left to read it), or {@code nanos} passed ({@link Long#MAX_VALUE}: no limit).
         * An interrupt does not end the wait; it is kept for the caller.
         *
         * @return false when the time passed and a frame still uses it
         */
        boolean awaitUnused(long nanos) {
            boolean interrupted = false;
            boolean forever = nanos >= Long.MAX_VALUE / 2;
            long deadline = System.nanoTime() + (forever ? 0 : nanos);
            try {
                synchronized (this) {
                    while (inUse() > 0 && !closed) {
                        long left = deadline - System.nanoTime();
                        if (!forever && left <= 0) {
                            return false;
                        }
                        try {
                            if (forever) {
                                wait();
                            } else {
                                TimeUnit.NANOSECONDS.timedWait(this, left);
                            }
                        } catch (InterruptedException e) {
                            interrupted = true;
                        }
                    }
                    return true;
                }
            } finally {
                if (interrupted) {
                    Thread.currentThread().interrupt();
                }
            }
        }
    }

    /** What hangs on each slab ({@link SlabRegistrations}): its memory region per device, and the local keys for the data path. */
    static final class Registration {
        final MemoryRegion[] regions = new MemoryRegion[MAX_DEVICES];
        final int[] lkeys = new int[MAX_DEVICES];
    }

    private final RdmaConfig config;
    /** Where SRQ limit events go (set by the transport before any device opens). */
    private volatile Consumer<SharedReceiveQueue> srqLimitHandler;
    /** Where faults go (set by the transport before any device opens). */
    private volatile FaultHandler faultHandler;

    /** What the transport does about a failed port, device or queue pair: close what it affects. */
    interface FaultHandler {
        /**
         * @param device the device
         * @param qp     the failed queue pair, or null when the whole port or device failed
         * @param reason what happened, for the connections' close and the log
         */
        void onFault(Device device, QueuePair qp, String reason);
    }
    private final Device[] devices = new Device[MAX_DEVICES];
    private int deviceCount;
    private final SlabRegistrations slabs = new SlabRegistrations();
    /** Registered application memory. */
    private final UserRegions users = new UserRegions(this);
    private final Map<InetAddress, Choice> choices = new HashMap<>();
    private boolean closed;

    DeviceTable(RdmaConfig config) {
        this.config = config;
    }

    /**
     * The local key of {@code buffer}'s memory on device {@code deviceIndex}. Allocates nothing.
     */
    static int lkey(PooledBuffer buffer, int deviceIndex) {
        return SlabRegistrations.lkey(buffer, deviceIndex);
    }

    /** The memory region of {@code buffer}'s slab on device {@code deviceIndex} (a window is bound through it). */
    static MemoryRegion region(PooledBuffer buffer, int deviceIndex) {
        return SlabRegistrations.region(buffer, deviceIndex);
    }

    /** The access registered memory allows: local, and window binding when rendezvous is enabled. */
    private int access() {
        return config.send().rendezvousThreshold() > 0 ? Access.LOCAL | Access.MW_BIND.bit() : Access.LOCAL;
    }

    @Override
    public synchronized void slabCreated(Slab slab) {
        if (closed) {
            throw new IllegalStateException("RDMA transport is closed");
        }
        slabs.created(slab, opened(), access());
    }

    /** @return bytes of the pool's slabs registered now (each with every open device) */
    synchronized long registeredBytes() {
        return slabs.bytes();
    }

    @Override
    public synchronized void slabFreed(Slab slab) {
        slabs.freed(slab);
    }

    /** Registers application memory with every open device, and with every device opened later. */
    synchronized UserRegion registerUser(MemorySegment segment) {
        if (closed) {
            throw new IllegalStateException("RDMA transport is closed");
        }
        return users.register(segment, opened(), access());
    }

    /**
     * Records memory registered with device {@code deviceName} alone (opened if needed) by
     * {@code register}, given that device's protection domain and the access the transport needs (ORed
     * into the caller's): GPU memory registered by dma-buf or peer memory
     * ({@link RdmaTransport#nicRegistrar}). Frames use it as they use {@link #registerUser} memory, on
     * connections of that device; {@link #deregisterUser} closes it the same way.
     *
     * @param address the address of the region's first byte, as work requests name it (the iova)
     * @throws IOException when the device cannot be opened
     */
    synchronized UserRegion registerOnDevice(String deviceName, long address, long length,
                                             BiFunction<ProtectionDomain, Integer, MemoryRegion> register)
            throws IOException {
        if (closed) {
            throw new IllegalStateException("RDMA transport is closed");
        }
        if (length <= 0 || address == 0) {
            throw new IllegalArgumentException("a region of " + length + " bytes at 0x" + Long.toHexString(address));
        }
        return users.registerOnDevice(device(deviceName), address, length, register, access());
    }

    /** Opens {@code deviceName} if needed, so a registrar of it fails early. @throws IOException when it cannot */
    synchronized void openDevice(String deviceName) throws IOException {
        if (closed) {
            throw new IllegalStateException("RDMA transport is closed");
        }
        device(deviceName);
    }

    /**
     * Closes an application registration: from now on no frame takes it (their attachments are copied),
     * then waits until no frame uses it (not under the table's lock), at most {@code timeout}: then the
     * connections whose frames still use it are closed (their queue pairs destroyed, so the NIC drops
     * those frames) and it waits for that; then deregisters it. Idempotent.
     */
    void deregisterUser(UserRegion u, Duration timeout) {
        users.deregister(u, timeout);
    }

    /**
     * The application registration that covers {@code [address, address + length)}, or null when none
     * does (or it is closing). Lock-free; allocates nothing.
     */
    UserRegion userRegionCovering(long address, long length) {
        return users.covering(address, length);
    }

    /**
     * The device (opened if needed) and GID index for connections from {@code local}: the configured
     * device, or the one with a RoCE v2 GID for that address; the configured GID index, or that GID's.
     *
     * @throws IOException naming the address and what was found, when no device fits
     */
    synchronized Choice choose(InetAddress local) throws IOException {
        if (closed) {
            throw new IOException("RDMA transport is closed");
        }
        Choice c = choices.get(local);
        if (c != null) {
            return c;
        }
        c = config.device() != null ? DeviceChoice.named(this, config, config.device(), local)
                : DeviceChoice.byAddress(this, config, local);
        choices.put(local, c);
        LOG.log(System.Logger.Level.DEBUG, "connections from {0} use {1}, GID index {2}", local.getHostAddress(),
                c.device(), c.gidIndex());
        return c;
    }


    /** @return the open device {@code name}, or null; under the table's lock */
    Device find(String name) {
        for (int i = 0; i < deviceCount; i++) {
            if (devices[i].context.name().equals(name)) {
                return devices[i];
            }
        }
        return null;
    }

    /** Opens {@code name} (once) and registers every existing slab with it; under the table's lock. */
    Device device(String name) throws IOException {
        Device d = find(name);
        if (d != null) {
            return d;
        }
        if (deviceCount == MAX_DEVICES) {
            throw new IOException("an RDMA transport uses at most " + MAX_DEVICES + " devices");
        }
        Context ctx;
        try {
            ctx = Context.open(name);
        } catch (RuntimeException e) {
            throw new IOException("cannot open RDMA device " + name + ": " + e.getMessage(), e);
        }
        ProtectionDomain pd = null;
        try {
            PortAttributes port = ctx.queryPort(config.port());
            if (!port.isActive()) {
                throw new IOException("RDMA device " + name + " port " + config.port() + " is " + port.state()
                        + ", not ACTIVE");
            }
            pd = ctx.allocateProtectionDomain();
            d = new Device(deviceCount, ctx, pd, config.port(), port);
            slabs.registerWith(d, access());
            for (UserRegion u : users.all()) {
                if (u.onlyDevice < 0) {
                    UserRegions.registerWith(u, d, access());
                }
            }
            Device opened = d;
            d.events = ctx.startAsyncEvents(ev -> onAsyncEvent(opened, ev));
        } catch (IOException | RuntimeException e) {
            if (d != null) {
                if (d.events != null) {
                    d.events.close();
                }
                slabs.undo(d);
                for (UserRegion u : users.all()) {
                    MemoryRegion mr = u.regions[d.index];
                    if (mr != null) {
                        u.regions[d.index] = null;
                        u.lkeys[d.index] = -1;
                        mr.close();
                    }
                }
            }
            if (pd != null) {
                pd.close();
            }
            ctx.close();
            if (e instanceof IOException io) {
                throw io;
            }
            throw new IOException("cannot use RDMA device " + name + ": " + e.getMessage(), e);
        }
        devices[deviceCount++] = d;
        LOG.log(System.Logger.Level.DEBUG, "opened RDMA device {0}", d);
        return d;
    }

    /**
     * One async event of {@code d}, on its monitor's thread: a port that went down, a device that
     * failed, a queue pair fault go to the {@link FaultHandler} (the connections they affect close at
     * once, rather than when a send times out or a call's deadline passes); SRQ limits to theirs.
     * Package-private for FaultEventsTest, which delivers the queue pair and device failures that
     * Soft-RoCE cannot raise.
     */
    void onAsyncEvent(Device d, AsyncEvent ev) {
        DeviceEvents.dispatch(d, ev, faultHandler, srqLimitHandler);
    }

    /** Routes port, device and queue pair failures of every device (opened later) to {@code handler}. */
    /** Sets what closes the connections whose frames use a registration whose close waited its time out. */
    void onRegistrationHeld(BiConsumer<UserRegion, String> closer) {
        users.onHeld(closer);
    }

    void onFault(FaultHandler handler) {
        this.faultHandler = handler;
    }

    /** Routes the shared receive queues' limit events of every device (opened later) to {@code handler}. */
    void onSharedReceiveQueueLimit(Consumer<SharedReceiveQueue> handler) {
        this.srqLimitHandler = handler;
    }

    /** @return the devices opened so far (the table's lock is reentrant: its own methods call it too) */
    synchronized List<Device> opened() {
        List<Device> l = new ArrayList<>();
        for (int i = 0; i < deviceCount; i++) {
            l.add(devices[i]);
        }
        return l;
    }

    /**
     * Closes the protection domains and contexts, newest first. Call after the buffer pool closed
     * (which deregistered every slab) and after every queue pair and completion queue is gone.
     */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        slabs.deregisterAll(); // only if the pool was not closed first
        users.closeAll();
        for (int i = deviceCount - 1; i >= 0; i--) {
            Device d = devices[i];
            devices[i] = null;
            if (d.events != null) {
                try {
                    d.events.close();
                } catch (RuntimeException e) {
                    LOG.log(System.Logger.Level.WARNING, "could not stop the async events of " + d, e);
                }
            }
            try {
                d.pd.close();
            } catch (RuntimeException e) {
                LOG.log(System.Logger.Level.WARNING, "could not close the protection domain of " + d, e);
            }
            try {
                d.context.close();
            } catch (RuntimeException e) {
                LOG.log(System.Logger.Level.WARNING, "could not close " + d, e);
            }
        }
        deviceCount = 0;
    }
}
