package dev.rdmarpc.opentelemetry;

import dev.rdmarpc.rpc.CallContext;
import dev.rdmarpc.rpc.ServerInterceptor;
import dev.rdmarpc.rpc.Status;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.propagation.TextMapPropagator;
import java.net.InetSocketAddress;

/**
 * The server interceptor: per-call metrics and, with traces on, a SERVER span, the child of the context the
 * request's metadata carries. A call's start time and span wait in a {@link CallTable} between
 * {@code beforeCall} and {@code afterCall}, which may run on different threads (an asynchronous handler).
 * The span is not made the current context of the handler's thread (the handler may return before the call
 * ends, on a thread that goes on to serve others).
 */
final class ServerTelemetry implements ServerInterceptor {
    private final MethodAttributes.Cache methods;
    private final CallInstruments calls;
    private final Tracer tracer;
    private final TextMapPropagator propagator;
    private final CallTable table;

    ServerTelemetry(MethodAttributes.Cache methods, CallInstruments calls, Tracer tracer, TextMapPropagator propagator,
                    int trackedCalls) {
        this.methods = methods;
        this.calls = calls;
        this.tracer = tracer;
        this.propagator = propagator;
        this.table = new CallTable(trackedCalls);
    }

    @Override
    public void beforeCall(CallContext call) {
        MethodAttributes m = methods.get(call.methodName());
        if (calls != null) {
            calls.start(m);
        }
        Span span = null;
        if (tracer != null) {
            Context parent = propagator.extract(Context.root(), call.requestMetadata(), MetadataCarrier.GETTER);
            var b = tracer.spanBuilder(call.methodName()).setSpanKind(SpanKind.SERVER).setParent(parent)
                    .setAllAttributes(m.base);
            InetSocketAddress peer = call.peer();
            if (peer != null) {
                b.setAttribute("network.peer.port", (long) peer.getPort());
                if (peer.getAddress() != null) {
                    b.setAttribute("network.peer.address", peer.getAddress().getHostAddress());
                }
            }
            span = b.startSpan();
        }
        if (table.put(call, System.nanoTime(), span) < 0 && span != null) {
            span.setAttribute("rdmarpc.span_untracked", true);
            span.end();
        }
    }

    @Override
    public void afterCall(CallContext call, Status status) {
        MethodAttributes m = methods.get(call.methodName());
        int slot = table.find(call);
        long nanos = -1;
        Span span = null;
        if (slot >= 0) {
            nanos = System.nanoTime() - table.start(slot);
            span = table.span(slot);
            table.remove(slot);
        }
        if (calls != null) {
            calls.finish(m, status, nanos, call.requestBytes(), call.responseBytes());
        }
        if (span != null) {
            ClientTelemetry.end(span, m, status);
        }
    }

    /** @return calls tracked now (between beforeCall and afterCall) */
    int trackedNow() {
        return table.size();
    }

    /** @return calls that found no free slot since the start */
    long untracked() {
        return table.untracked();
    }
}
