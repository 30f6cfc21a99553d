package dev.rdmarpc.rpc.transport.rdma;

import dev.rdmarpc.ibverbs.Ibverbs;
import dev.rdmarpc.rpc.buffer.BufferPool;
import dev.rdmarpc.rpc.transport.Acceptor;
import dev.rdmarpc.rpc.transport.Connection;
import dev.rdmarpc.rpc.transport.FrameHandler;
import dev.rdmarpc.rpc.transport.PeerRefusedException;
import dev.rdmarpc.rpc.transport.ResourceExhaustedException;
import dev.rdmarpc.rpc.transport.ServerEndpoint;
import dev.rdmarpc.rpc.transport.Transport;
import dev.rdmarpc.rpc.transport.frame.EndpointChecks;
import dev.rdmarpc.rpc.transport.loop.IoLoop;
import dev.rdmarpc.rpc.transport.ConnectionLimits;
import dev.rdmarpc.rpc.transport.stream.ConnectionCounts;
import dev.rdmarpc.rpc.transport.stream.PolledListener;
import dev.rdmarpc.rpc.transport.stream.PolledStreamSocket;
import dev.rdmarpc.rpc.transport.stream.SocketSettings;
import dev.rdmarpc.rpc.transport.stream.TlsFailures;
import java.io.EOFException;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.lang.foreign.MemorySegment;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The RDMA {@link Transport}: reliable-connected queue pairs set up by a hello exchanged on a TCP
 * connection to the RPC's own port, then frames carried by SEND/RECEIVE through a registered buffer
 * pool, with credit-based flow control. See {@code docs/rdma.md} for the protocol and the choices.
 *
 * <p>The TCP connections (hellos, then liveness channels) run on the transport's own I/O threads,
 * their sockets polled beside the completion channels ({@link PolledListener},
 * {@link PolledStreamSocket}), with the TCP transport's connection code, TLS, limits and timers. A
 * listening RDMA transport answers plain TCP clients too: a connection whose first frame is not an
 * RDMA hello stays a TCP connection and is served as such. The TCP connection of an RDMA connection
 * stays open beside it as the liveness channel: when it closes (the peer process died, the host is
 * gone and keepalive noticed), the RDMA connection closes and every pending call fails.
 *
 * <p>Creating one loads libibverbs (and fails with {@code VerbsUnavailableException} when it
 * cannot); devices are opened when the first connection needs them. Ownership: the creator closes
 * it; closing closes every connection and listener, stops the threads, deregisters and frees the
 * pool, closes the devices. Thread-safe.
 */
public final class RdmaTransport implements Transport {
    private static final System.Logger LOG = System.getLogger(RdmaTransport.class.getName());

    private final RdmaConfig config;
    private final RdmaMetrics metrics = new RdmaMetrics();
    private final DeviceTable devices;
    private final BufferPool pool;
    /** The TCP connections' buffers (not registered). */
    private final BufferPool socketPool;
    private final SocketSettings socketSettings;
    private final ConnectionCounts accepted;
    private final TlsFailures tlsFailures = new TlsFailures();
    private final Set<PolledListener> listeners = ConcurrentHashMap.newKeySet();
    private final AtomicInteger nextSocketLoop = new AtomicInteger();
    private final RdmaLoop[] loops;
    private final AddressShares addressShares;
    private final AtomicBoolean closed = new AtomicBoolean();
    /**
     * Tests only, never set in use: sees each well-formed rendezvous descriptor a connection made
     * after it was set is about to read, and may rewrite it (a peer that replays a stale key).
     */
    volatile RdmaReceiver.DescriptorHook descriptorHookForTests;

    private RdmaTransport(RdmaConfig config) {
        this.config = config;
        IoLoop.checkCpus(config.loop().ioThreadCpus(), "RdmaConfig polling.ioThreadCpus"); // before anything is opened
        Ibverbs.ensureAvailability();
        this.devices = new DeviceTable(config);
        this.addressShares = new AddressShares(config.poolBytesPerAddress());
        // The devices register each slab first; a listener the user set is told after them (kept, not replaced).
        BufferPool.Config poolConfig = config.bufferPool().copy();
        this.pool = BufferPool.create(poolConfig.slabListener(devices.andThen(poolConfig.slabListener())));
        // a connection that sends no hello is closed after the idle timeout, a hello that stops part
        // way after the frame timeout (the RDMA connection has its own timers)
        this.socketSettings = new SocketSettings(config.timeouts().frameRead().toNanos(), config.timeouts().idle().toNanos(),
                tcpProperty("pingInterval", SocketSettings.DEFAULT_PING_INTERVAL).toNanos(),
                tcpProperty("pingTimeout", SocketSettings.DEFAULT_PING_TIMEOUT).toNanos(),
                config.loop().idleTickInterval().toNanos(), SocketSettings.DEFAULT_WRITE_HIGH_WATER_MARK, config.tls());
        // the large budget is the RDMA pool's: the per-address frame shares of the connection counts
        // (RDMA frames claim them too) are reckoned against it
        this.accepted = new ConnectionCounts(config.limits(), config.bufferPool().maxLargeBytes());
        RdmaLoop[] l = new RdmaLoop[config.loop().ioThreads()];
        BufferPool sp = null;
        try {
            sp = BufferPool.create(new BufferPool.Config().chunkSize(16 * 1024).slabSize(256 * 1024)
                    .maxLargeBytes(config.bufferPool().maxLargeBytes()));
            this.socketPool = sp;
            for (int i = 0; i < l.length; i++) {
                l[i] = new RdmaLoop(this, config.threadNamePrefix() + "-" + i, config.loop().ioThreadCpu(i));
            }
        } catch (RuntimeException | Error e) {
            if (sp != null) {
                sp.close();
            }
            pool.close();
            devices.close();
            throw e;
        }
        this.loops = l;
        devices.onSharedReceiveQueueLimit(srq -> {
            for (RdmaLoop loop : loops) {
                loop.sharedReceiveLimit(srq);
            }
        });
        devices.onRegistrationHeld((region, reason) -> {
            for (RdmaLoop loop : loops) {
                loop.execute(() -> loop.closeHolding(region, reason));
            }
        });
        devices.onFault((device, qp, reason) -> {
            LOG.log(System.Logger.Level.WARNING, reason + ": closing the connections it carries");
            for (RdmaLoop loop : loops) {
                loop.execute(() -> loop.fail(device, qp, reason));
            }
        });
        for (RdmaLoop loop : loops) {
            loop.start();
        }
    }

    /**
     * The TCP transport's setting {@code rdmarpc.tcp.<name>} when set, else {@code otherwise}: the pings
     * of the TCP connection beside each RDMA connection are the TCP transport's (RdmaConfig has no
     * setter for them).
     */
    private static Duration tcpProperty(String name, Duration otherwise) {
        String value = System.getProperty("rdmarpc.tcp." + name);
        return value == null ? otherwise : dev.rdmarpc.rpc.settings.SettingsTable.parseDuration(value);
    }

    /**
     * Creates a transport and starts its threads (non-daemon).
     *
     * @param config settings, validated here
     * @return a started transport the caller owns
     * @throws IllegalArgumentException                          for an invalid setting
     * @throws dev.rdmarpc.ibverbs.VerbsUnavailableException when libibverbs cannot be loaded
     */
    public static RdmaTransport create(RdmaConfig config) {
        return new RdmaTransport(config.copy().conclude());
    }

    @Override
    public String name() {
        return "rdma";
    }

    /** @return the registered pool every RDMA buffer comes from */
    @Override
    public BufferPool bufferPool() {
        return pool;
    }

    /** @return the transport's counters */
    public RdmaMetrics metrics() {
        return metrics;
    }

    /** @return the (validated) settings */
    public RdmaConfig config() {
        return config.copy();
    }

    /**
     * Registers application memory with every device this transport uses (now and later), so that
     * request attachments inside it travel without a copy (see {@link RegisteredMemory}).
     *
     * @param memory native memory the caller owns and keeps alive until the registration is closed
     * @return the registration, owned by the caller
     * @throws IllegalArgumentException for heap or empty memory
     * @throws IllegalStateException    when the transport is closed
     */
    public RegisteredMemory register(MemorySegment memory) {
        return new RegisteredMemory(devices, memory, devices.registerUser(memory));
    }

    /**
     * Registers memory with one device of this transport, for a
     * {@link dev.rdmarpc.rpc.gpu.GpuBufferPool} ({@code GpuBufferPool.create(memory,
     * transport.nicRegistrar("mlx5_0"), config)}): GPU memory registered through it by dma-buf or peer
     * memory is then known to the transport, and device attachments inside it
     * ({@link dev.rdmarpc.rpc.Attachment#device}) of at least 4 KiB move between the NIC and the GPU
     * with no staging copy on connections of that device: request and response attachments are read by
     * the NIC where they lie, and a response target there gets its attachment written by the NIC (with
     * rendezvous). Elsewhere (another device, TCP) they are staged through host memory as before. The
     * same rules as for {@link RegisteredMemory} apply to when the memory may change; a registration's
     * {@code close()} waits as {@link RegisteredMemory#close()} does.
     *
     * <p>Never run with GPU memory: no machine here has a GPU and an RDMA NIC. The tests run the path
     * with host memory registered through this registrar standing in for GPU memory (the transport
     * cannot tell them apart); see docs/rdma.md, "GPU attachments".
     *
     * @param deviceName the device, e.g. "mlx5_0" (opened if this transport has not yet)
     * @return a registrar of that device, valid while this transport is open
     * @throws IOException when the device cannot be opened
     */
    public dev.rdmarpc.rpc.gpu.NicRegistrar nicRegistrar(String deviceName) throws IOException {
        ensureOpen();
        devices.openDevice(deviceName);
        return new TransportNicRegistrar(devices, deviceName);
    }

    /** The state of every I/O thread and connection, for diagnostics and tests. */
    String diagnostics() {
        StringBuilder sb = new StringBuilder(metrics.toString());
        for (RdmaLoop l : loops) {
            sb.append('\n').append(l.diagnostics());
        }
        return sb.toString();
    }

    BufferPool socketPool() {
        return socketPool;
    }

    SocketSettings socketSettings() {
        return socketSettings;
    }

    TlsFailures tlsFailures() {
        return tlsFailures;
    }

    /** @return accepted TCP connections that closed before their TLS handshake was done */
    public long tlsHandshakeFailures() {
        return tlsFailures.count();
    }

    /** @return accepted TCP connections open now that count against the limits (hellos, RDMA connections, plain TCP clients) */
    public int acceptedConnections() {
        return accepted.total();
    }

    /** The I/O thread the next TCP connection goes to, round-robin. */
    private PolledListener.SocketLoop nextSocketLoop() {
        return loops[Math.floorMod(nextSocketLoop.getAndIncrement(), loops.length)].sockets();
    }

    /** @return the pool bytes each remote address's connections claimed (server side) */
    AddressShares addressShares() {
        return addressShares;
    }

    DeviceTable devices() {
        return devices;
    }

    RdmaConfig rdmaConfig() {
        return config;
    }

    /** @return registered bytes handed out now (chunks and large buffers) */
    long bytesInUse() {
        return (long) pool.chunksInUse() * pool.chunkSize() + pool.largeBytesInUse();
    }

    /** @return registered bytes held by the shared receive queues of every I/O thread (0 without them) */
    long sharedReceiveBytes() {
        long n = 0;
        for (RdmaLoop l : loops) {
            n += l.sharedReceiveBytes();
        }
        return n;
    }

    /**
     * @return the registered bytes a new connection takes: its receive buffers, or with a shared
     *         receive queue only a send chunk (the queue's buffers are the I/O thread's)
     */
    long bytesPerConnection() {
        if (config.sharedReceiveQueue().enabled()) {
            return pool.chunkSize();
        }
        return (long) (config.receiveQueue().depth() + RdmaConfig.RESERVED_RECEIVES) * pool.chunkSize();
    }

    private void ensureOpen() throws IOException {
        if (closed.get()) {
            throw new IOException("RDMA transport is closed");
        }
    }

    /** Why a new connection cannot have its buffers now, or null when it can. */
    String poolRefusal(String side) {
        long inUse = bytesInUse();
        long need = bytesPerConnection();
        if (inUse + need <= config.poolHighWaterMark()) {
            return null;
        }
        return "RDMA buffer pool high-water mark reached on the " + side + ": " + inUse + " bytes in use, a connection needs "
                + need + ", the mark is " + config.poolHighWaterMark() + " of " + config.bufferPool().maxPooledBytes()
                + " (existing connections keep working; raise RdmaConfig poolHighWaterMark or bufferPool.maxPooledBytes)";
    }

    private RdmaLoop pickLoop() {
        RdmaLoop best = loops[0];
        int bestLoad = best.load();
        for (int i = 1; i < loops.length; i++) {
            int l = loops[i].load();
            if (l < bestLoad) {
                best = loops[i];
                bestLoad = l;
            }
        }
        return best;
    }

    private int recvCqEntries() {
        // with a shared receive queue, its loop reserved room for all its completions once
        return config.sharedReceiveQueue().enabled() ? 0 : config.receiveQueue().maxDepth() + RdmaConfig.RESERVED_RECEIVES;
    }

    private int sendCqEntries() {
        // each send work request completes once
        return RdmaSender.workRequests(config.send().window(), config.send().rendezvousThreshold() > 0);
    }

    /** A connection for {@code tcpConnection}: device chosen, completion queue room reserved, QP in INIT. */
    RdmaConnection newConnection(Connection tcpConnection, int maxFrameLength, boolean serverSide)
            throws IOException {
        DeviceTable.Choice choice = devices.choose(tcpConnection.localAddress().getAddress());
        RdmaLoop loop = pickLoop();
        LoopDevice ld;
        try {
            // an IOException from reserve: the shared receive queue could not be created or filled
            ld = loop.reserve(choice.device(), recvCqEntries(), sendCqEntries());
        } catch (RuntimeException e) {
            throw new IOException("cannot create completion queues on " + choice.device() + ": " + e.getMessage(), e);
        }
        if (ld == null) {
            throw new ResourceExhaustedException("the completion queues of the RDMA I/O thread are full ("
                    + config.polling().completionQueueSize() + " entries; raise RdmaConfig polling.completionQueueSize or ioThreads)");
        }
        return new RdmaConnection(loop, ld, choice.gidIndex(), tcpConnection, maxFrameLength, recvCqEntries(), sendCqEntries(),
                serverSide);
    }

    // ================================================================== server side

    @Override
    public ServerEndpoint listen(InetSocketAddress address, int maxFrameLength, Acceptor acceptor) throws IOException {
        EndpointChecks.check(address, "acceptor", acceptor, maxFrameLength);
        ensureOpen();
        PolledListener l = PolledListener.open(address, nextSocketLoop(), this::nextSocketLoop, accepted, maxFrameLength,
                c -> new ServerHandshake(this, c, maxFrameLength, acceptor));
        listeners.add(l);
        return new ServerEndpoint() {
            @Override
            public InetSocketAddress address() {
                return l.address();
            }

            @Override
            public void close() {
                l.close();
                listeners.remove(l);
            }
        };
    }

    /** Sends {@code h} on {@code c}: false when it has no room for the frame. */
    static boolean sendHello(Connection c, Hello h) {
        long at = c.claim(Hello.FRAME_LENGTH);
        if (at < 0) {
            return false;
        }
        h.encode(c.claimBuffer(), at);
        c.commit();
        return true;
    }

    // ================================================================== client side

    @Override
    public Connection connect(InetSocketAddress address, int maxFrameLength, FrameHandler handler, Duration timeout)
            throws IOException {
        EndpointChecks.check(address, "handler", handler, maxFrameLength);
        ensureOpen();
        refuseWhenPoolFull(address);
        ClientHandshake side = new ClientHandshake();
        PolledListener.SocketLoop t = nextSocketLoop();
        Connection c = PolledStreamSocket.connect(address, timeout, t.group(), t.poller(), maxFrameLength, side);
        RdmaConnection conn = null;
        boolean attached = false;
        try {
            conn = newConnection(c, maxFrameLength, false);
            side.rdma = conn;
            Hello mine = new Hello();
            conn.prepareHello(mine);
            if (!sendHello(c, mine)) {
                String msg = "could not send the RDMA hello to " + address + side.closeReason();
                // the server's check of clients may refuse this one as soon as its TLS handshake is done
                throw side.refusedByServer() ? new PeerRefusedException(msg) : new IOException(msg);
            }
            long deadline = System.nanoTime() + config.timeouts().handshake().toNanos();
            conn.connect(side.awaitHello(address, deadline, config.timeouts().handshake()));
            attached = ClientHandshake.attach(conn, c, handler, deadline);
            if (!attached) {
                throw new EOFException("the server closed the connection right after the RDMA handshake");
            }
            side.attached(c);
            LOG.log(System.Logger.Level.DEBUG, "RDMA connection {0}", conn);
            return conn;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptedIOException("interrupted during the RDMA handshake");
        } catch (IOException | RuntimeException e) {
            if (conn != null && !attached) {
                side.rdma = null;
                RdmaConnection dead = conn;
                if (dead.loop().isAlive()) {
                    dead.loop().execute(dead::abandonOnLoop);
                } else {
                    dead.abandon();
                }
            }
            c.close(null);
            IOException refused = side.refusal(address, e);
            if (refused != null) {
                throw refused;
            }
            if (e instanceof RuntimeException && side.reply.isCompletedExceptionally()) {
                // The server closed the connection while this side was still setting up (its queue
                // pair closed under it): say what the server did, not what the setup tripped on.
                throw new IOException("RDMA handshake with " + address + " failed: " + side.reply.exceptionNow().getMessage(), e);
            }
            throw e;
        } finally {
            if (conn == null && !attached) {
                LOG.log(System.Logger.Level.DEBUG, "RDMA connect to {0} failed", address);
            }
        }
    }

    /** A client connection's buffers would take the pool past its high-water mark: refuse it here. */
    private void refuseWhenPoolFull(InetSocketAddress address) throws ResourceExhaustedException {
        String full = poolRefusal("client");
        if (full != null) {
            metrics.connectionsRefused.increment();
            RdmaEvents.poolPressure("connection refused", String.valueOf(address), bytesInUse(), config.poolHighWaterMark(),
                    config.bufferPool().maxPooledBytes());
            throw new ResourceExhaustedException(full);
        }
    }

    /**
     * Closes the listeners, stops the I/O threads (each closes its TCP connections, so every RDMA
     * connection learns its peer is gone, then closes and drains its RDMA connections and frees its
     * completion queues), then frees and deregisters the pool and closes the devices. Idempotent.
     */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        for (PolledListener l : listeners) {
            l.close();
        }
        for (RdmaLoop l : loops) {
            l.shutdown();
        }
        boolean joined = true;
        for (RdmaLoop l : loops) {
            try {
                l.join(10_000);
                joined &= !l.isAlive();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                joined = false;
            }
        }
        if (!joined) {
            LOG.log(System.Logger.Level.WARNING, "RDMA I/O threads did not stop in time; registered memory is left in place");
            return;
        }
        pool.close();
        socketPool.close();
        devices.close();
    }

    @Override
    public String toString() {
        return "RdmaTransport[" + config + "]";
    }
}
