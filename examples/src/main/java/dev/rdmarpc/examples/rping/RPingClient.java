package dev.rdmarpc.examples.rping;

import dev.rdmarpc.ibverbs.verbs.QpState;
import dev.rdmarpc.ibverbs.verbs.WcOpcode;
import dev.rdmarpc.rdmacm.CmEvent;
import dev.rdmarpc.rdmacm.CmEventType;
import dev.rdmarpc.rdmacm.CmId;
import dev.rdmarpc.rdmacm.ConnectionParams;
import dev.rdmarpc.rdmacm.EventChannel;

import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;

/**
 * The client side of rping: connects, runs {@code -C} pings (forever with 0), validates each with
 * {@code -V}, prints it with {@code -v}, disconnects.
 */
public final class RPingClient {
    /** rping's address and route resolution timeout. */
    static final Duration RESOLVE_TIMEOUT = Duration.ofSeconds(2);
    /** rping_init_conn_param: one outstanding RDMA READ each way, 7 retries, RNR retry forever. */
    static final ConnectionParams CONNECTION = ConnectionParams.DEFAULT.withResponderResources(1)
            .withInitiatorDepth(1).withRetryCount(7).withRnrRetryCount(7);

    private final RPingOptions options;
    private final PrintStream out;
    private final PrintStream err;

    RPingClient(RPingOptions options, PrintStream out, PrintStream err) {
        this.options = options;
        this.out = out;
        this.err = err;
    }

    /** Runs the client with rping's arguments; returns rping's exit code (0, or 1 with the reason on {@code err}). */
    public static int run(String[] args, PrintStream out, PrintStream err) throws RPingOptions.UsageException {
        RPingOptions options = RPingOptions.parse(args);
        if (options.server()) {
            throw new RPingOptions.UsageException("RPingClient takes -c");
        }
        return new RPingClient(options, out, err).run();
    }

    int run() {
        try (EventChannel events = EventChannel.open();
             CmId id = events.createId()) {
            InetSocketAddress server = new InetSocketAddress(options.address(), options.port());
            InetSocketAddress source = options.source() == null ? null : new InetSocketAddress(options.source(), 0);
            id.resolveAddress(source, server, RESOLVE_TIMEOUT);
            expect(events, CmEventType.ADDR_RESOLVED);
            id.resolveRoute(RESOLVE_TIMEOUT);
            expect(events, CmEventType.ROUTE_RESOLVED);
            try (RPingConnection connection = new RPingConnection(options, err, events, id)) {
                connect(events, id, connection);
                int result;
                try {
                    result = pings(connection);
                } finally {
                    connection.disconnect();
                }
                connection.awaitDisconnect(Duration.ofSeconds(5));
                return result;
            }
        } catch (RPingException | RuntimeException e) {
            err.println("rping client failed: " + e.getMessage());
            return 1;
        }
    }

    private void connect(EventChannel events, CmId id, RPingConnection connection) throws RPingException {
        if (options.selfCreatedQueuePair()) {
            id.connect(CONNECTION.withQpNumber(connection.queuePair().qpNum()), null);
            expect(events, CmEventType.CONNECT_RESPONSE);
            id.moveQueuePair(connection.queuePair(), QpState.RTR);
            id.moveQueuePair(connection.queuePair(), QpState.RTS);
            id.establish();
        } else {
            id.connect(CONNECTION, null);
            expect(events, CmEventType.ESTABLISHED);
        }
        connection.debug("rdma_connect successful");
    }

    private static void expect(EventChannel events, CmEventType expected) throws RPingException {
        CmEvent event = events.poll(RPingConnection.STEP_WAIT);
        if (event == null) {
            throw new RPingException("no " + expected.nativeName() + " within " + RPingConnection.STEP_WAIT);
        }
        if (event.type() != expected) {
            throw new RPingException("cma event " + event.type().nativeName() + ", error " + event.status()
                    + " (waiting for " + expected.nativeName() + ")");
        }
    }

    /** rping_test_client. */
    private int pings(RPingConnection connection) throws RPingException {
        int size = options.size();
        int start = 65;
        for (int ping = 0; options.count() == 0 || ping < options.count(); ping++) {
            byte[] text = ("rdma-ping-" + ping + ": ").getBytes(StandardCharsets.US_ASCII);
            int cc = Math.min(text.length, size - 1);
            var startBuffer = connection.startBuffer;
            startBuffer.asSlice(0, cc).copyFrom(java.lang.foreign.MemorySegment.ofArray(text).asSlice(0, cc));
            int c = start;
            for (int i = cc; i < size; i++) {
                startBuffer.set(JAVA_BYTE, i, (byte) c);
                c++;
                if (c > 122) {
                    c = 65;
                }
            }
            start++;
            if (start > 122) {
                start = 65;
            }
            startBuffer.set(JAVA_BYTE, size - 1, (byte) 0);

            connection.sendInfo(connection.startRegion());
            if (!connection.await(WcOpcode.RECV)) { // go ahead: the server has read the start buffer
                return 0;
            }
            connection.sendInfo(connection.rdmaRegion());
            if (!connection.await(WcOpcode.RECV)) { // go ahead: the server has written the sink buffer
                return 0;
            }
            if (options.validate() && startBuffer.mismatch(connection.rdmaBuffer) != -1) {
                err.println("data mismatch!");
                return 1;
            }
            if (options.verbose()) {
                out.println("ping data: " + RPingConnection.cString(connection.rdmaBuffer));
            }
        }
        return 0;
    }
}
