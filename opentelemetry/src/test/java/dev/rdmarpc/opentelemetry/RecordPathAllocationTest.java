package dev.rdmarpc.opentelemetry;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.rdmarpc.rpc.Attachment;
import dev.rdmarpc.rpc.CallContext;
import dev.rdmarpc.rpc.ClientInterceptor;
import dev.rdmarpc.rpc.Metadata;
import dev.rdmarpc.rpc.Method;
import dev.rdmarpc.rpc.ServerInterceptor;
import dev.rdmarpc.rpc.Status;
import dev.rdmarpc.rpc.codec.Codecs;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.metrics.SdkMeterProvider;
import io.opentelemetry.sdk.metrics.data.MetricData;
import io.opentelemetry.sdk.testing.exporter.InMemoryMetricReader;
import java.net.InetSocketAddress;
import java.util.Collection;
import org.junit.jupiter.api.Test;

/**
 * The per-call record path with metrics on allocates nothing, on either side: the attributes are looked up,
 * not built, and the server's per-call state sits in the fixed {@link CallTable}. Measured with the calling
 * thread's allocated-bytes counter around many calls, after a warm-up (the JIT compiles the path first).
 */
class RecordPathAllocationTest {
    private static final Method<String, String> M = Method.of("Svc/method", Codecs.STRING, Codecs.STRING);
    private static final int WARM = 300_000;
    private static final int MEASURED = 200_000;

    private final InMemoryMetricReader reader = InMemoryMetricReader.create();
    private final RdmarpcTelemetry telemetry = RdmarpcTelemetry.builder(OpenTelemetrySdk.builder()
            .setMeterProvider(SdkMeterProvider.builder().registerMetricReader(reader).build()).build())
            .traces(false).messageSizes(true).build();

    @Test
    void aServerCallRecordsWithoutAllocating() throws Exception {
        ServerInterceptor s = telemetry.serverInterceptor();
        FakeCall[] calls = {new FakeCall(), new FakeCall(), new FakeCall(), new FakeCall()};
        Status[] statuses = {Status.OK, Status.OK, Status.HANDLER_FAILED, Status.DEADLINE_EXCEEDED};
        serverCalls(s, calls, statuses, WARM);
        long before = allocated();
        serverCalls(s, calls, statuses, MEASURED);
        double perCall = (allocated() - before) / (double) MEASURED;
        assertTrue(perCall < 1.0, "server record path allocates " + perCall + " B/call");
        Collection<MetricData> m = reader.collectAllMetrics();
        long finished = m.stream().filter(d -> d.getName().equals("rpc.server.calls.finished"))
                .flatMap(d -> d.getLongSumData().getPoints().stream()).mapToLong(p -> p.getValue()).sum();
        assertEquals(WARM + MEASURED, finished, "every call counted");
    }

    @Test
    void aClientCallRecordsWithoutAllocating() throws Exception {
        ClientInterceptor c = telemetry.clientInterceptor();
        clientCalls(c, WARM);
        long before = allocated();
        clientCalls(c, MEASURED);
        double perCall = (allocated() - before) / (double) MEASURED;
        assertTrue(perCall < 1.0, "client record path allocates " + perCall + " B/call");
        long sized = reader.collectAllMetrics().stream().filter(d -> d.getName().equals("rpc.client.request.size"))
                .flatMap(d -> d.getHistogramData().getPoints().stream()).mapToLong(p -> p.getCount()).sum();
        assertEquals(WARM + MEASURED, sized, "every call's request size recorded");
    }

    @Test
    void aFullCallTableLeavesCallsUntrackedAndCountsThem() {
        CallTable t = new CallTable(CallTable.WINDOW);
        Object[] calls = new Object[CallTable.WINDOW];
        for (int i = 0; i < calls.length; i++) {
            calls[i] = new Object();
            assertTrue(t.put(calls[i], i, null) >= 0);
        }
        Object extra = new Object();
        assertEquals(-1, t.put(extra, 99, null), "every slot of the window taken");
        assertEquals(1, t.untracked());
        assertEquals(-1, t.find(extra));
        int slot = t.find(calls[3]);
        assertEquals(3, t.start(slot));
        t.remove(slot);
        assertEquals(-1, t.find(calls[3]));
        assertTrue(t.put(extra, 99, null) >= 0, "a freed slot is taken again");
        assertEquals(99, t.start(t.find(extra)));
        assertThrows(IllegalArgumentException.class,
                () -> RdmarpcTelemetry.builder(io.opentelemetry.api.OpenTelemetry.noop()).trackedServerCalls(15));
    }

    private static void serverCalls(ServerInterceptor s, FakeCall[] calls, Status[] statuses, int n) {
        for (int i = 0; i < n; i++) {
            FakeCall c = calls[i & 3];
            s.beforeCall(c);
            s.afterCall(c, statuses[i & 3]);
        }
    }

    private static void clientCalls(ClientInterceptor c, int n) {
        for (int i = 0; i < n; i++) {
            Metadata md = c.beforeCall(M, Metadata.EMPTY);
            c.afterCall(M, md, (i & 7) == 0 ? Status.UNAVAILABLE : Status.OK, Metadata.EMPTY, 1000 + i, 128,
                    (i & 7) == 0 ? -1 : 4096);
        }
    }

    private static long allocated() throws Exception {
        Object bean = Class.forName("java.lang.management.ManagementFactory").getMethod("getThreadMXBean").invoke(null);
        java.lang.reflect.Method m = Class.forName("com.sun.management.ThreadMXBean").getMethod("getCurrentThreadAllocatedBytes");
        return (long) m.invoke(bean);
    }

    /** The context of a call: only what the server interceptor reads with traces off. */
    private static final class FakeCall implements CallContext {
        @Override
        public InetSocketAddress peer() {
            return null;
        }

        @Override
        public int methodId() {
            return M.id();
        }

        @Override
        public long requestId() {
            return 1;
        }

        @Override
        public String methodName() {
            return M.name();
        }

        @Override
        public Metadata requestMetadata() {
            return Metadata.EMPTY;
        }

        @Override
        public void responseMetadata(Metadata metadata) {
        }

        @Override
        public Metadata responseMetadata() {
            return Metadata.EMPTY;
        }

        @Override
        public Attachment requestAttachment() {
            return Attachment.NONE;
        }

        @Override
        public void responseAttachment(Attachment attachment) {
        }

        @Override
        public long requestBytes() {
            return 128;
        }

        @Override
        public long responseBytes() {
            return 4096;
        }
    }
}
