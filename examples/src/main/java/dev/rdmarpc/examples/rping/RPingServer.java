package dev.rdmarpc.examples.rping;

import dev.rdmarpc.ibverbs.verbs.QpState;
import dev.rdmarpc.ibverbs.verbs.WcOpcode;
import dev.rdmarpc.rdmacm.CmEvent;
import dev.rdmarpc.rdmacm.CmEventType;
import dev.rdmarpc.rdmacm.CmId;
import dev.rdmarpc.rdmacm.ConnectionParams;
import dev.rdmarpc.rdmacm.EventChannel;

import java.io.PrintStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;

/**
 * The server side of rping: listens, serves one client until it disconnects, then returns (rping
 * without {@code -P}). For each ping it RDMA READs the client's start buffer, says "go ahead",
 * RDMA WRITEs the data back into the client's sink buffer and says "go ahead" again.
 *
 * <p>{@link #listen} binds at once, so a caller (a test) can start a client as soon as it returns;
 * {@link #serveOne} then waits for the connection request.
 */
public final class RPingServer implements AutoCloseable {
    private final RPingOptions options;
    private final PrintStream out;
    private final PrintStream err;
    private final EventChannel events;
    private final CmId listener;

    private RPingServer(RPingOptions options, PrintStream out, PrintStream err) {
        this.options = options;
        this.out = out;
        this.err = err;
        this.events = EventChannel.open();
        CmId id = null;
        try {
            id = events.createId();
            InetAddress address = options.address();
            id.bind(new InetSocketAddress(address == null ? InetAddress.getByAddress(new byte[4]) : address,
                    options.port()));
            id.listen(3);
        } catch (RuntimeException | java.net.UnknownHostException e) {
            if (id != null) {
                id.close();
            }
            events.close();
            throw e instanceof RuntimeException r ? r : new IllegalStateException(e);
        }
        this.listener = id;
    }

    /**
     * Binds to {@code -a} (any address when absent) and {@code -p} (0: a free port, see
     * {@link #port()}) and listens.
     */
    public static RPingServer listen(String[] args, PrintStream out, PrintStream err)
            throws RPingOptions.UsageException {
        RPingOptions options = RPingOptions.parse(args);
        if (!options.server()) {
            throw new RPingOptions.UsageException("RPingServer takes -s");
        }
        return new RPingServer(options, out, err);
    }

    static RPingServer listen(RPingOptions options, PrintStream out, PrintStream err) {
        return new RPingServer(options, out, err);
    }

    /** The port the server listens on. */
    public int port() {
        return listener.localAddress().getPort();
    }

    /**
     * Waits up to {@code requestWait} ({@code null}: without limit) for a client, serves it until it
     * disconnects, and returns rping's exit code: 0 when the client went away after its pings,
     * 1 when something failed (the reason is on {@code err}).
     */
    public int serveOne(Duration requestWait) {
        CmEvent request = requestWait == null ? events.take() : events.poll(requestWait);
        if (request == null) {
            err.println("no connection request within " + requestWait);
            return 1;
        }
        if (request.type() != CmEventType.CONNECT_REQUEST) {
            err.println("wait for CONNECT_REQUEST: got " + request);
            return 1;
        }
        try (CmId child = request.id();
             RPingConnection connection = new RPingConnection(options, err, events, child)) {
            try {
                accept(child, connection);
                return serve(connection);
            } finally {
                connection.disconnect();
            }
        } catch (RPingException | RuntimeException e) {
            err.println("rping server failed: " + e.getMessage());
            return 1;
        }
    }

    private void accept(CmId child, RPingConnection connection) throws RPingException {
        connection.debug("accepting client connection request");
        if (options.selfCreatedQueuePair()) {
            child.moveQueuePair(connection.queuePair(), QpState.RTR);
            child.moveQueuePair(connection.queuePair(), QpState.RTS);
            child.accept(ConnectionParams.DEFAULT.withQpNumber(connection.queuePair().qpNum()), null);
        } else {
            child.accept(null, null); // as rping: librdmacm picks the read depths
        }
        CmEvent established = events.poll(RPingConnection.STEP_WAIT);
        if (established == null || established.type() != CmEventType.ESTABLISHED) {
            throw new RPingException("wait for ESTABLISHED: got " + established);
        }
    }

    /** rping_test_server: until the client disconnects. */
    private int serve(RPingConnection connection) throws RPingException {
        while (true) {
            if (!connection.await(WcOpcode.RECV)) { // the client's start buffer
                return 0;
            }
            connection.readRemote();
            if (!connection.await(WcOpcode.RDMA_READ)) {
                return 0;
            }
            if (options.verbose()) {
                out.println("server ping data: " + RPingConnection.cString(connection.rdmaBuffer));
            }
            connection.sendGoAhead();
            if (!connection.await(WcOpcode.RECV)) { // the client's sink buffer
                return 0;
            }
            connection.writeRemote();
            if (!connection.await(WcOpcode.RDMA_WRITE)) {
                return 0;
            }
            connection.sendGoAhead();
        }
    }

    /** Closes the listener and the event channel. */
    @Override
    public void close() {
        try {
            listener.close();
        } finally {
            events.close();
        }
    }
}
