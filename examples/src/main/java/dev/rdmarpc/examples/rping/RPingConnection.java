package dev.rdmarpc.examples.rping;

import dev.rdmarpc.ibverbs.verbs.Access;
import dev.rdmarpc.ibverbs.verbs.CompletionChannel;
import dev.rdmarpc.ibverbs.verbs.CompletionQueue;
import dev.rdmarpc.ibverbs.verbs.Context;
import dev.rdmarpc.ibverbs.verbs.FdPoller;
import dev.rdmarpc.ibverbs.verbs.MemoryRegion;
import dev.rdmarpc.ibverbs.verbs.ProtectionDomain;
import dev.rdmarpc.ibverbs.verbs.QpState;
import dev.rdmarpc.ibverbs.verbs.QueuePair;
import dev.rdmarpc.ibverbs.verbs.QueuePairInit;
import dev.rdmarpc.ibverbs.verbs.ReceiveWorkRequests;
import dev.rdmarpc.ibverbs.verbs.SendWorkRequests;
import dev.rdmarpc.ibverbs.verbs.WcOpcode;
import dev.rdmarpc.ibverbs.verbs.WcStatus;
import dev.rdmarpc.ibverbs.verbs.WorkCompletions;
import dev.rdmarpc.rdmacm.CmEvent;
import dev.rdmarpc.rdmacm.CmEventType;
import dev.rdmarpc.rdmacm.CmId;
import dev.rdmarpc.rdmacm.EventChannel;
import dev.rdmarpc.rdmacm.RdmaCmException;

import java.io.PrintStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.ArrayDeque;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;

/**
 * One rping connection, client or server side: the queue pair on the CM id's device, its buffers,
 * and the one thread's wait on the CM event channel and the completion channel together
 * ({@link FdPoller}), where C rping runs a CM thread and a CQ thread.
 *
 * <p>The wire protocol is rping's: each message is a {@code struct rping_rdma_info} of 16 bytes,
 * big-endian: buffer address (8), rkey (4), size (4). The client advertises its start buffer; the
 * server RDMA READs it, answers with a SEND ("go ahead"); the client advertises its sink buffer; the
 * server RDMA WRITEs what it read (up to the NUL) into it and answers again.
 *
 * <p>Resources are opened in order and closed in reverse by {@link #close()}, also after a failure
 * half way.
 */
final class RPingConnection implements AutoCloseable {
    static final int INFO_BYTES = 16;
    /** RPING_SQ_DEPTH: send queue depth; the completion queue holds twice that. */
    static final int SEND_DEPTH = 16;
    /** Longest wait for one step of the protocol (generous: the Soft-RoCE VM emulates its CPU). */
    static final Duration STEP_WAIT = Duration.ofSeconds(30);
    private static final ValueLayout.OfLong BE64 = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);
    private static final ValueLayout.OfInt BE32 = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);

    private final RPingOptions options;
    private final PrintStream err;
    private final EventChannel events;
    private final CmId id;
    private final ArrayDeque<AutoCloseable> opened = new ArrayDeque<>();
    private final CompletionChannel completions;
    private final CompletionQueue cq;
    private final QueuePair qp;
    private final FdPoller poller;
    final MemorySegment rdmaBuffer;
    final MemorySegment startBuffer;
    private final MemorySegment sendBuffer;
    private final MemorySegment receiveBuffer;
    private final MemoryRegion rdmaMr;
    private final MemoryRegion startMr;
    private final MemoryRegion sendMr;
    private final ReceiveWorkRequests receive;
    private final SendWorkRequests send;
    private final WorkCompletions wc;
    private boolean armed;
    private boolean disconnected;
    /** What the last received rping_rdma_info said. */
    long remoteAddress;
    int remoteKey;
    int remoteLength;

    /** Opens the connection's resources on {@code id}'s device and posts the first receive. */
    RPingConnection(RPingOptions options, PrintStream err, EventChannel events, CmId id) {
        this.options = options;
        this.err = err;
        this.events = events;
        this.id = id;
        try {
            Context context = open(Context.wrap(id.verbsContext()));
            ProtectionDomain pd = open(context.allocateProtectionDomain());
            completions = open(context.createCompletionChannel());
            cq = open(context.createCompletionQueue(SEND_DEPTH * 2, completions, 0));
            QueuePairInit init = new QueuePairInit().completionQueue(cq).maxSendWr(SEND_DEPTH).maxRecvWr(2)
                    .maxSendSge(1).maxRecvSge(1);
            qp = open(options.selfCreatedQueuePair() ? pd.createQueuePair(init) : id.createQueuePair(pd, init));
            debug("created qp " + qp + ", granted " + qp.capabilities());
            Arena arena = open(Arena.ofShared());
            receiveBuffer = arena.allocate(INFO_BYTES, 8);
            sendBuffer = arena.allocate(INFO_BYTES, 8);
            rdmaBuffer = arena.allocate(options.size(), 8);
            MemoryRegion receiveMr = open(pd.register(receiveBuffer, Access.LOCAL));
            sendMr = open(pd.register(sendBuffer, 0));
            rdmaMr = open(pd.register(rdmaBuffer, Access.LOCAL_REMOTE_READ_WRITE));
            if (options.server()) {
                startBuffer = null;
                startMr = null;
            } else {
                startBuffer = arena.allocate(options.size(), 8);
                startMr = open(pd.register(startBuffer, Access.LOCAL_REMOTE_READ_WRITE));
            }
            receive = open(new ReceiveWorkRequests(1, 1));
            receive.get(0).wrId(1).buffer(receiveMr, 0, INFO_BYTES);
            send = open(new SendWorkRequests(1, 1));
            wc = open(new WorkCompletions(SEND_DEPTH));
            poller = open(new FdPoller(events.fd(), completions.fd()));
            if (options.selfCreatedQueuePair()) {
                id.moveQueuePair(qp, QpState.INIT); // a receive may be posted from INIT on
            }
            postReceive();
        } catch (RuntimeException | Error e) {
            close();
            throw e;
        }
    }

    private <T extends AutoCloseable> T open(T resource) {
        opened.push(resource);
        return resource;
    }

    QueuePair queuePair() {
        return qp;
    }

    MemoryRegion startRegion() {
        return startMr;
    }

    MemoryRegion rdmaRegion() {
        return rdmaMr;
    }

    boolean isDisconnected() {
        return disconnected;
    }

    void debug(String line) {
        if (options.debug()) {
            System.out.println(line);
        }
    }

    private void postReceive() {
        int rc = qp.postReceive(receive, 1);
        if (rc != 0) {
            throw new IllegalStateException("post recv error: " + rc);
        }
    }

    private void post(String what) {
        int rc = qp.postSend(send, 1);
        if (rc != 0) {
            throw new IllegalStateException("post send error " + rc + " (" + what + ")");
        }
    }

    /** SENDs an rping_rdma_info naming {@code region} and the ping size. */
    void sendInfo(MemoryRegion region) {
        sendBuffer.set(BE64, 0, region.address());
        sendBuffer.set(BE32, 8, region.rkey());
        sendBuffer.set(BE32, 12, options.size());
        debug("RDMA addr " + Long.toHexString(region.address()) + " rkey " + Integer.toHexString(region.rkey())
                + " len " + options.size());
        sendGoAhead();
    }

    /** SENDs the 16-byte message as it stands (the server's "go ahead"). */
    void sendGoAhead() {
        send.get(0).clear().wrId(2).send(sendMr, 0, INFO_BYTES).signaled(true);
        post("send");
    }

    /** RDMA READs what the last info named into the rdma buffer. */
    void readRemote() throws RPingException {
        if (remoteLength > options.size()) {
            throw new RPingException("the peer's buffer (" + remoteLength + " bytes) is larger than ours ("
                    + options.size() + "); give both sides the same -S");
        }
        send.get(0).clear().wrId(3).read(rdmaMr, 0, remoteLength, remoteAddress, remoteKey).signaled(true);
        post("rdma read");
    }

    /** RDMA WRITEs the rdma buffer up to and with its NUL to what the last info named. */
    void writeRemote() throws RPingException {
        int length = Math.min(cStringLength(rdmaBuffer) + 1, options.size());
        if (length > remoteLength) {
            throw new RPingException("the peer's sink (" + remoteLength + " bytes) is smaller than the ping data ("
                    + length + ")");
        }
        send.get(0).clear().wrId(4).write(rdmaMr, 0, length, remoteAddress, remoteKey).signaled(true);
        post("rdma write");
    }

    /**
     * Waits for the next completion other than a SEND's (those are only counted off), which must be
     * {@code expected}. A RECV is checked (16 bytes), its info kept, and the receive posted again.
     *
     * @return {@code true}, or {@code false} when the peer disconnected instead
     * @throws RPingException on a failed completion, another opcode, an unexpected CM event, or
     *                        nothing within {@link #STEP_WAIT}
     */
    boolean await(WcOpcode expected) throws RPingException {
        long deadline = System.nanoTime() + STEP_WAIT.toNanos();
        while (true) {
            while (cq.poll(wc, 1) == 1) {
                if (!wc.isSuccess(0)) {
                    if (wc.status(0) == WcStatus.WR_FLUSH_ERR) {
                        continue; // the queue pair went to ERR on a disconnect: its CM event follows
                    }
                    throw new RPingException("cq completion failed: " + wc.describe(0));
                }
                WcOpcode opcode = wc.opcode(0);
                if (opcode == WcOpcode.SEND) {
                    continue;
                }
                if (opcode == WcOpcode.RECV) {
                    if (wc.byteLength(0) != INFO_BYTES) {
                        throw new RPingException("Received bogus data, size " + wc.byteLength(0));
                    }
                    remoteAddress = receiveBuffer.get(BE64, 0);
                    remoteKey = receiveBuffer.get(BE32, 8);
                    remoteLength = receiveBuffer.get(BE32, 12);
                    debug("Received rkey " + Integer.toHexString(remoteKey) + " addr "
                            + Long.toHexString(remoteAddress) + " len " + remoteLength + " from peer");
                    postReceive();
                }
                if (opcode != expected) {
                    throw new RPingException("expected a " + expected + " completion, got " + opcode);
                }
                return true;
            }
            if (!armed) {
                cq.requestNotify(false);
                armed = true;
                continue; // poll once more: a completion that came before arming raises no event
            }
            if (!waitForEvents(deadline)) {
                throw new RPingException("no " + expected + " completion within " + STEP_WAIT.toSeconds() + " s");
            }
            if (disconnected) {
                return false;
            }
        }
    }

    /**
     * Waits on both channels until one has something or the deadline passes; takes a completion
     * event (the CQ is then disarmed) and handles a CM event.
     *
     * @return {@code false} when the deadline passed
     */
    private boolean waitForEvents(long deadline) throws RPingException {
        long remaining = deadline - System.nanoTime();
        if (remaining <= 0) {
            return false;
        }
        poller.await(Duration.ofNanos(remaining));
        if (poller.isReadable(1) && completions.awaitEvent(0) != null) {
            armed = false;
        }
        if (poller.isReadable(0)) {
            CmEvent event = events.poll(Duration.ZERO);
            if (event != null) {
                handle(event);
            }
        }
        return true;
    }

    private void handle(CmEvent event) throws RPingException {
        debug("cma_event type " + event.type().nativeName());
        if (event.type() == CmEventType.DISCONNECTED) {
            err.println((options.server() ? "server" : "client") + " DISCONNECT EVENT...");
            disconnected = true;
        } else if (event.type() == CmEventType.CONNECT_REQUEST) {
            // one connection at a time, as rping without -P: turn others away
            try (CmId other = event.id()) {
                other.reject(null);
            }
        } else if (event.isError() || event.type() == CmEventType.DEVICE_REMOVAL) {
            throw new RPingException("cma event " + event.type().nativeName() + ", error " + event.status());
        }
    }

    /** Waits up to {@code wait} for the peer's disconnect, after this side's own. */
    void awaitDisconnect(Duration wait) throws RPingException {
        long deadline = System.nanoTime() + wait.toNanos();
        while (!disconnected) {
            while (cq.poll(wc, SEND_DEPTH) > 0) {
                // flushed and late completions
            }
            if (!armed) {
                cq.requestNotify(false);
                armed = true;
                continue;
            }
            if (!waitForEvents(deadline)) {
                return;
            }
        }
    }

    /** Disconnects: a queue pair of our own goes to ERR first (librdmacm moves only its own). */
    void disconnect() {
        if (options.selfCreatedQueuePair()) {
            qp.toError();
        }
        try {
            id.disconnect();
        } catch (RdmaCmException e) {
            debug("rdma_disconnect: " + e.getMessage()); // already disconnected by the peer
        }
    }

    /** The bytes of {@code buffer} before the first NUL, as rping's printf("%s") shows them. */
    static String cString(MemorySegment buffer) {
        return new String(buffer.asSlice(0, cStringLength(buffer)).toArray(JAVA_BYTE),
                java.nio.charset.StandardCharsets.ISO_8859_1);
    }

    private static int cStringLength(MemorySegment buffer) {
        int n = 0;
        while (n < buffer.byteSize() && buffer.get(JAVA_BYTE, n) != 0) {
            n++;
        }
        return n;
    }

    /** Closes what was opened, last first, once. */
    @Override
    public void close() {
        RuntimeException failure = null;
        while (!opened.isEmpty()) {
            try {
                opened.pop().close();
            } catch (Exception e) {
                if (failure == null) {
                    failure = e instanceof RuntimeException r ? r : new IllegalStateException(e);
                } else {
                    failure.addSuppressed(e);
                }
            }
        }
        if (failure != null) {
            throw failure;
        }
    }
}
