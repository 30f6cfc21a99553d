package dev.rdmarpc.rpc.gpu;

import dev.rdmarpc.cuda.CudaContext;
import dev.rdmarpc.cuda.CudaDevice;
import dev.rdmarpc.cuda.CudaEvent;
import dev.rdmarpc.cuda.CudaStream;
import dev.rdmarpc.cuda.DeviceBuffer;
import dev.rdmarpc.cuda.PinnedHostMemory;
import dev.rdmarpc.cuda.PointerInfo;
import dev.rdmarpc.rpc.Attachment;
import dev.rdmarpc.rpc.DeviceStaging;
import dev.rdmarpc.rpc.internal.OptionalModule;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.LongConsumer;

/**
 * GPU attachments of one GPU over transports that carry host memory (TCP): makes
 * {@link Attachment#device device attachments} and moves their bytes through pinned host memory.
 *
 * <p>Each copy takes a <em>stager</em>, a stream with two pinned chunks of {@link Config#chunkSize}
 * bytes and an event each, and double-buffers on it: sending, the stream copies chunk k+1 from the
 * GPU while chunk k is copied into the frame and released to the socket; receiving, chunk k+1 is
 * copied into a pinned chunk while chunk k goes to the GPU. Up to {@link Config#maxConcurrentCopies}
 * stagers are made on demand and reused; a copy waits (up to {@link Config#stagerWait}) for a free one.
 * {@snippet :
 * try (GpuStaging staging = GpuStaging.create(CudaDevice.get(0));
 *      DeviceBuffer request = staging.context().allocate(n);
 *      DeviceBuffer response = staging.context().allocate(n)) {
 *     Reply<String> reply = client.exchange(METHOD, "x", CallOptions.DEFAULT
 *             .withAttachment(staging.attachment(request))
 *             .withResponseAttachment(staging.attachment(response)));
 * }
 * }
 *
 * <p>Ownership: the creator closes it, after the calls that use its attachments are over. It holds a
 * reference to the GPU's primary context ({@link #context()}), released by {@link #close()} together
 * with every stager. Thread-safe: every method may be called from any thread.
 */
public final class GpuStaging implements DeviceStaging, AutoCloseable {
    private final CudaContext context;
    private final int ordinal;
    private final Config config;
    private final ArrayBlockingQueue<Stager> idle;
    private final List<Stager> all = new ArrayList<>();
    private final AtomicBoolean closed = new AtomicBoolean();

    private GpuStaging(CudaContext context, Config config) {
        this.context = context;
        this.ordinal = context.device().ordinal();
        this.config = config;
        this.idle = new ArrayBlockingQueue<>(config.maxConcurrentCopies);
    }

    /**
     * Staging for {@code device} with the default {@link Config}.
     *
     * @throws dev.rdmarpc.cuda.CudaDriverNotFoundException without the CUDA driver
     */
    public static GpuStaging create(CudaDevice device) {
        return create(device, new Config());
    }

    /**
     * Staging for {@code device}; retains its primary context.
     *
     * @param device the GPU
     * @param config the settings, validated here
     * @return the staging, owned by the caller
     */
    public static GpuStaging create(CudaDevice device, Config config) {
        Config c = config.copy().conclude();
        return new GpuStaging(device.retainPrimaryContext(), c);
    }

    /**
     * Staging for GPU {@code ordinal} with the default settings ({@code CudaDevice.get(ordinal)}).
     *
     * @throws IllegalStateException when module {@code dev.rdmarpc.cuda} is not there (it is optional)
     * @throws dev.rdmarpc.cuda.CudaDriverNotFoundException without the CUDA driver
     */
    public static GpuStaging create(int ordinal) {
        OptionalModule.CUDA.require("GPU staging");
        return create(CudaDevice.get(ordinal));
    }

    /**
     * @return this staging's reference to the GPU's primary context; device memory allocated from it
     *         is freed, at the latest, when the staging closes
     */
    public CudaContext context() {
        return context;
    }

    /** @return the GPU's ordinal */
    public int deviceOrdinal() {
        return ordinal;
    }

    // ================================================================ attachments

    /** @return an attachment of the whole of {@code buffer} */
    public Attachment attachment(DeviceBuffer buffer) {
        return attachment(buffer, 0, buffer.byteSize());
    }

    /**
     * @param buffer device memory of this GPU
     * @param offset where the attachment starts in it
     * @param length its length (under 2 GiB)
     * @return an attachment of that range
     */
    public Attachment attachment(DeviceBuffer buffer, long offset, long length) {
        Objects.requireNonNull(buffer, "buffer");
        if (buffer.deviceOrdinal() != ordinal) {
            throw new IllegalArgumentException(buffer + " is not on GPU " + ordinal);
        }
        if (offset < 0 || length < 0 || offset > buffer.byteSize() - length) {
            throw new IndexOutOfBoundsException("[" + offset + ", +" + length + ") outside " + buffer);
        }
        return Attachment.device(ordinal, buffer.address() + offset, length, this);
    }

    /**
     * @param address a device address on this GPU (memory someone else allocated)
     * @param length  bytes
     * @return an attachment of that range (checked against the driver when it is used)
     */
    public Attachment attachment(long address, long length) {
        return Attachment.device(ordinal, address, length, this);
    }

    /**
     * Copies a received host attachment (a server's {@code CallContext.requestAttachment()} over TCP)
     * into device memory.
     *
     * @param received a host attachment
     * @param target   device memory of this GPU, at least as long
     * @return the attachment of the filled prefix of {@code target}
     */
    public Attachment copyToDevice(Attachment received, DeviceBuffer target) {
        if (received.isEmpty()) {
            return Attachment.NONE;
        }
        if (received.location() != Attachment.Location.HOST) {
            throw new IllegalArgumentException("not a host attachment: " + received);
        }
        Attachment t = attachment(target, 0, received.length());
        copyToDevice(received.segment(), 0, t.address(), received.length());
        return t;
    }

    // ================================================================ DeviceStaging

    @Override
    public void validate(int deviceId, long address, long length) {
        if (deviceId != ordinal) {
            throw new IllegalArgumentException("a GPU " + deviceId + " attachment given to the staging of GPU " + ordinal);
        }
        PointerInfo info = context.pointerInfo(address);
        boolean device = info.memoryType() == PointerInfo.DEVICE_MEMORY || info.memoryType() == PointerInfo.UNIFIED_MEMORY;
        if (!device || info.deviceOrdinal() != ordinal || !info.covers(length)) {
            throw new IllegalArgumentException("[0x" + Long.toHexString(address) + ", +" + length + ") is not device memory"
                    + " of GPU " + ordinal + " (driver says: " + info + ")");
        }
    }

    @Override
    public void copyToHost(long src, MemorySegment dst, long dstOffset, long length, LongConsumer ready) {
        Stager s = acquire();
        boolean ok = false;
        try {
            DoubleBuffer.toHost(s, src, dst, dstOffset, length, ready);
            ok = true;
        } finally {
            release(s, ok);
        }
    }

    @Override
    public void copyToDevice(MemorySegment src, long srcOffset, long dst, long length) {
        Stager s = acquire();
        boolean ok = false;
        try {
            DoubleBuffer.toDevice(s, src, srcOffset, dst, length);
            ok = true;
        } finally {
            release(s, ok);
        }
    }

    /** Returns a stager for reuse; after a failed copy only once its stream has drained, else drops it. */
    private void release(Stager s, boolean ok) {
        if (!ok) {
            try {
                s.stream.synchronize();
            } catch (RuntimeException e) {
                synchronized (all) {
                    all.remove(s);
                }
                s.close();
                return;
            }
        }
        idle.add(s);
    }

    private Stager acquire() {
        ensureOpen();
        Stager s = idle.poll();
        if (s != null) {
            return s;
        }
        synchronized (all) {
            ensureOpen();
            if (all.size() < config.maxConcurrentCopies) {
                Stager made = new Stager(context, config.chunkSize);
                all.add(made);
                return made;
            }
        }
        try {
            s = idle.poll(config.stagerWait.toNanos(), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted waiting for a GPU staging buffer", e);
        }
        if (s == null) {
            throw new IllegalStateException("no GPU staging buffer free within " + config.stagerWait + " ("
                    + config.maxConcurrentCopies + " copies in progress)");
        }
        return s;
    }

    private void ensureOpen() {
        if (closed.get()) {
            throw new IllegalStateException("GPU staging of GPU " + ordinal + " is closed");
        }
    }

    /**
     * Frees every stager (streams, events, pinned memory) and releases the primary context reference;
     * once. Copies still running on other threads fail.
     */
    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            context.close(); // closes the stagers' resources, newest first
        }
    }

    @Override
    public String toString() {
        return "GpuStaging[GPU " + ordinal + ", " + config.chunkSize + "-byte chunks]";
    }

    /** One stream with two pinned chunks and their events. */
    private static final class Stager implements DoubleBuffer.Engine {
        private final CudaContext ctx;
        private final int chunk;
        private final CudaStream stream;
        private final PinnedHostMemory[] slots = new PinnedHostMemory[2];
        private final CudaEvent[] done = new CudaEvent[2];

        Stager(CudaContext ctx, int chunk) {
            this.ctx = ctx;
            this.chunk = chunk;
            this.stream = ctx.createStream();
            for (int i = 0; i < 2; i++) {
                slots[i] = ctx.allocatePinned(chunk);
                done[i] = ctx.createEvent(false);
            }
        }

        @Override
        public int chunkSize() {
            return chunk;
        }

        @Override
        public MemorySegment slot(int slot) {
            return slots[slot].segment();
        }

        @Override
        public void deviceToSlot(long src, int slot, long length) {
            ctx.copyDeviceToHostAsync(slots[slot].segment().asSlice(0, length), src, stream);
            done[slot].record(stream);
        }

        @Override
        public void slotToDevice(int slot, long dst, long length) {
            ctx.copyHostToDeviceAsync(dst, slots[slot].segment().asSlice(0, length), stream);
            done[slot].record(stream);
        }

        @Override
        public void awaitSlot(int slot) {
            done[slot].synchronize();
        }

        void close() {
            for (int i = 1; i >= 0; i--) {
                closeQuietly(done[i]);
                closeQuietly(slots[i]);
            }
            closeQuietly(stream);
        }

        private static void closeQuietly(AutoCloseable c) {
            try {
                c.close();
            } catch (Exception ignored) {
                // the context is in a failed state; it frees the rest when it closes
            }
        }
    }

    /** Settings of a {@link GpuStaging}; fluent, validated by {@link #conclude()}. */
    public static final class Config {
        private int chunkSize = 1 << 20;
        private int maxConcurrentCopies = 4;
        private java.time.Duration stagerWait = java.time.Duration.ofSeconds(30);

        /**
         * @param bytes size of each pinned chunk (two per stager); default 1 MiB, in [4 KiB, 256 MiB]
         * @return this
         */
        public Config chunkSize(int bytes) {
            this.chunkSize = bytes;
            return this;
        }

        /**
         * @param n most copies running at once (stagers made); default 4, at least 1
         * @return this
         */
        public Config maxConcurrentCopies(int n) {
            this.maxConcurrentCopies = n;
            return this;
        }

        /**
         * @param wait how long a copy waits for a free stager before failing; default 30 s, positive
         * @return this
         */
        public Config stagerWait(java.time.Duration wait) {
            this.stagerWait = Objects.requireNonNull(wait, "wait");
            return this;
        }

        Config copy() {
            Config c = new Config();
            c.chunkSize = chunkSize;
            c.maxConcurrentCopies = maxConcurrentCopies;
            c.stagerWait = stagerWait;
            return c;
        }

        /**
         * Validates the settings.
         *
         * @return this
         * @throws IllegalArgumentException naming the first bad setting
         */
        public Config conclude() {
            if (chunkSize < 4096 || chunkSize > (256 << 20)) {
                throw new IllegalArgumentException("chunkSize must be in [4 KiB, 256 MiB]: " + chunkSize);
            }
            if (maxConcurrentCopies < 1) {
                throw new IllegalArgumentException("maxConcurrentCopies must be at least 1: " + maxConcurrentCopies);
            }
            if (stagerWait.isNegative() || stagerWait.isZero()) {
                throw new IllegalArgumentException("stagerWait must be positive: " + stagerWait);
            }
            return this;
        }
    }
}
