package dev.rdmarpc.rpc.core.server;

import dev.rdmarpc.rpc.Attachment;
import dev.rdmarpc.rpc.DeferredCall;
import dev.rdmarpc.rpc.Metadata;
import dev.rdmarpc.rpc.Status;
import dev.rdmarpc.rpc.codec.Codec;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * The {@link DeferredCall} of one connection's raw handler, reused: taken from the connection's
 * spares by {@code defer()} on the I/O thread, given back once answered (any thread). Its state
 * moves PENDING to ANSWERING by one compare-and-set, so only the first respond writes.
 */
final class DeferredRawCall implements DeferredCall {
    private static final int SPARE = 0;
    private static final int PENDING = 1;
    private static final int ANSWERING = 2;
    private static final VarHandle STATE;

    static {
        try {
            STATE = MethodHandles.lookup().findVarHandle(DeferredRawCall.class, "state", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final ServerConnection connection;
    private volatile int state;
    private long id;
    private int mid;
    private boolean hasDeadline;
    private long deadlineNanos;
    /** What the handler (or an interceptor) set before it deferred: sent with the answer. */
    private Metadata responseMetadata = Metadata.EMPTY;

    DeferredRawCall(ServerConnection connection) {
        this.connection = connection;
    }

    /** Stands for call {@code id} from now on; on the I/O thread, before the handler sees it. */
    void begin(long requestId, int methodId, boolean deadline, long due, Metadata responseMetadata) {
        this.responseMetadata = responseMetadata;
        this.id = requestId;
        this.mid = methodId;
        this.hasDeadline = deadline;
        this.deadlineNanos = due;
        this.state = PENDING; // volatile: publishes the fields to the answering thread
    }

    private void answering() {
        if (!STATE.compareAndSet(this, PENDING, ANSWERING)) {
            throw new IllegalStateException("the deferred call was answered already");
        }
    }

    private void answered() {
        state = SPARE;
        connection.deferredAnswered(this);
    }

    @Override
    public long requestId() {
        return id;
    }

    @Override
    public int methodId() {
        return mid;
    }

    @Override
    public long remainingNanos() {
        return hasDeadline ? deadlineNanos - System.nanoTime() : Long.MAX_VALUE;
    }

    @Override
    public void respond(MemorySegment src, long offset, int length) {
        answering();
        ServerCore core = connection.core();
        try {
            ResponseWriter.writeBytes(connection.writer, core, id, mid, src, offset, length, Attachment.NONE, responseMetadata, null);
        } finally {
            answered();
        }
    }

    @Override
    public <T> void respond(Codec<T> codec, T value) {
        answering();
        ServerCore core = connection.core();
        try {
            ResponseWriter.writeValue(connection.writer, core, id, mid, codec, value, Attachment.NONE, responseMetadata, null);
        } finally {
            answered();
        }
    }

    @Override
    public void respondError(Status status, String message) {
        ResponseWriter.requireSendable(status);
        answering();
        try {
            ResponseWriter.writeError(connection.writer, connection.core(), id, mid, status, message, responseMetadata);
        } finally {
            answered();
        }
    }
}
