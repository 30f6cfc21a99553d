package dev.rdmarpc.opentelemetry;

import dev.rdmarpc.rpc.RpcMetrics;
import dev.rdmarpc.rpc.buffer.BufferPool;
import dev.rdmarpc.rpc.transport.Transport;
import dev.rdmarpc.rpc.transport.rdma.RdmaMetrics;
import dev.rdmarpc.rpc.transport.rdma.RdmaTransport;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.metrics.BatchCallback;
import io.opentelemetry.api.metrics.Meter;
import io.opentelemetry.api.metrics.ObservableLongMeasurement;
import java.util.ArrayList;
import java.util.List;

/**
 * The observable instruments read from a server's, pool's or client's existing counters ({@link RpcMetrics},
 * the {@link BufferPool}'s, {@link RdmaMetrics}) when the SDK collects: nothing runs on the call path.
 * Built once per {@link RdmarpcTelemetry}; each observed source adds a callback with its own attributes.
 */
final class TransportGauges {
    static final AttributeKey<String> ROLE = AttributeKey.stringKey("rdmarpc.role");
    static final AttributeKey<String> TRANSPORT = AttributeKey.stringKey("rdmarpc.transport");
    static final AttributeKey<String> SERVER_ADDRESS = AttributeKey.stringKey("server.address");
    static final AttributeKey<Long> SERVER_PORT = AttributeKey.longKey("server.port");

    private final Meter meter;
    private final ObservableLongMeasurement connectionsActive;
    private final ObservableLongMeasurement connectionsOpened;
    private final ObservableLongMeasurement protocolErrors;
    private final ObservableLongMeasurement bytesSent;
    private final ObservableLongMeasurement bytesReceived;
    private final ObservableLongMeasurement rejected;
    private final ObservableLongMeasurement timedOut;
    private final ObservableLongMeasurement cancelled;
    private final ObservableLongMeasurement poolReserved;
    private final ObservableLongMeasurement poolInUse;
    private final ObservableLongMeasurement poolAcquireFailures;
    private final ObservableLongMeasurement windowStalls;
    private final ObservableLongMeasurement creditStalls;
    private final ObservableLongMeasurement rnrErrors;
    private final ObservableLongMeasurement retryErrors;
    private final ObservableLongMeasurement completionErrors;

    TransportGauges(Meter meter) {
        this.meter = meter;
        connectionsActive = meter.upDownCounterBuilder("rdmarpc.connections.active").setUnit("{connection}")
                .setDescription("Connections open now").buildObserver();
        connectionsOpened = counter("rdmarpc.connections.opened", "{connection}", "Connections opened (accepted or connected)");
        protocolErrors = counter("rdmarpc.connections.protocol_errors", "{connection}",
                "Connections closed because the peer broke the protocol");
        bytesSent = counter("rdmarpc.bytes.sent", "By", "Bytes of frames written");
        bytesReceived = counter("rdmarpc.bytes.received", "By", "Bytes of frames received");
        rejected = counter("rdmarpc.calls.rejected", "{call}", "Calls refused for backpressure (OVERLOADED)");
        timedOut = counter("rdmarpc.calls.timed_out", "{call}", "Calls that passed their deadline");
        cancelled = counter("rdmarpc.calls.cancelled", "{call}", "Calls cancelled");
        poolReserved = meter.upDownCounterBuilder("rdmarpc.buffer_pool.reserved").setUnit("By")
                .setDescription("Bytes the buffer pool holds (slabs and large buffers)").buildObserver();
        poolInUse = meter.upDownCounterBuilder("rdmarpc.buffer_pool.in_use").setUnit("By")
                .setDescription("Bytes of the buffer pool lent out now (chunks and large buffers)").buildObserver();
        poolAcquireFailures = counter("rdmarpc.buffer_pool.acquire_failures", "{acquire}",
                "Buffer acquisitions refused (pool exhausted)");
        windowStalls = counter("rdmarpc.rdma.window_stalls", "{stall}", "RDMA sends that waited for the send window");
        creditStalls = counter("rdmarpc.rdma.credit_stalls", "{stall}", "RDMA sends that waited for the peer's credits");
        rnrErrors = counter("rdmarpc.rdma.rnr_errors", "{error}", "RDMA receiver-not-ready completion errors");
        retryErrors = counter("rdmarpc.rdma.retry_errors", "{error}", "RDMA transport retry-exceeded completion errors");
        completionErrors = counter("rdmarpc.rdma.completion_errors", "{error}", "RDMA work completions in error");
    }

    private ObservableLongMeasurement counter(String name, String unit, String description) {
        return meter.counterBuilder(name).setUnit(unit).setDescription(description).buildObserver();
    }

    /**
     * Starts reporting one source at every collection.
     *
     * @param attributes the source's attributes (role, transport, address)
     * @param metrics    its counters
     * @param pool       its buffer pool, or null
     * @param transport  its transport, or null (RDMA counters are reported for an RDMA one)
     * @return what stops reporting it
     */
    BatchCallback observe(Attributes attributes, RpcMetrics metrics, BufferPool pool, Transport transport) {
        RdmaMetrics rdma = transport != null && "rdma".equals(transport.name()) ? rdmaMetrics(transport) : null;
        List<ObservableLongMeasurement> all = new ArrayList<>(List.of(connectionsActive, connectionsOpened,
                protocolErrors, bytesSent, bytesReceived, rejected, timedOut, cancelled));
        if (pool != null) {
            all.addAll(List.of(poolReserved, poolInUse, poolAcquireFailures));
        }
        if (rdma != null) {
            all.addAll(List.of(windowStalls, creditStalls, rnrErrors, retryErrors, completionErrors));
        }
        ObservableLongMeasurement first = all.removeFirst();
        return meter.batchCallback(() -> {
            connectionsActive.record(metrics.connectionsActive(), attributes);
            connectionsOpened.record(metrics.connectionsOpened(), attributes);
            protocolErrors.record(metrics.protocolErrors(), attributes);
            bytesSent.record(metrics.bytesSent(), attributes);
            bytesReceived.record(metrics.bytesReceived(), attributes);
            rejected.record(metrics.rejected(), attributes);
            timedOut.record(metrics.timeouts(), attributes);
            cancelled.record(metrics.cancelled(), attributes);
            if (pool != null && !pool.isClosed()) {
                poolReserved.record(pool.reservedBytes(), attributes);
                poolInUse.record((long) pool.chunksInUse() * pool.chunkSize() + pool.largeBytesInUse(), attributes);
                poolAcquireFailures.record(pool.acquireFailures(), attributes);
            }
            if (rdma != null) {
                windowStalls.record(rdma.windowStalls(), attributes);
                creditStalls.record(rdma.creditStalls(), attributes);
                rnrErrors.record(rdma.rnrErrors(), attributes);
                retryErrors.record(rdma.retryErrors(), attributes);
                completionErrors.record(rdma.completionErrors(), attributes);
            }
        }, first, all.toArray(new ObservableLongMeasurement[0]));
    }

    /** Only for a transport named "rdma": RdmaTransport is touched only when the RDMA module is there. */
    private static RdmaMetrics rdmaMetrics(Transport transport) {
        return transport instanceof RdmaTransport r ? r.metrics() : null;
    }
}
