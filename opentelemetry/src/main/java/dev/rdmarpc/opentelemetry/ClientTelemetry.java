package dev.rdmarpc.opentelemetry;

import dev.rdmarpc.rpc.ClientInterceptor;
import dev.rdmarpc.rpc.Metadata;
import dev.rdmarpc.rpc.Method;
import dev.rdmarpc.rpc.Status;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.propagation.TextMapPropagator;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The client interceptor: per-call metrics and, with traces on, a CLIENT span whose context goes out in
 * the request metadata ({@code traceparent}, and whatever else the propagator injects). The span is found
 * again in {@code afterCall} by the {@code traceparent} the request carried.
 */
final class ClientTelemetry implements ClientInterceptor {
    private static final String TRACEPARENT = "traceparent";

    private final MethodAttributes.Cache methods;
    private final CallInstruments calls;
    private final Tracer tracer;
    private final TextMapPropagator propagator;
    private final ConcurrentHashMap<String, Span> open = new ConcurrentHashMap<>();

    ClientTelemetry(MethodAttributes.Cache methods, CallInstruments calls, Tracer tracer, TextMapPropagator propagator) {
        this.methods = methods;
        this.calls = calls;
        this.tracer = tracer;
        this.propagator = propagator;
    }

    @Override
    public Metadata beforeCall(Method<?, ?> method, Metadata metadata) {
        MethodAttributes m = methods.get(method.name());
        if (calls != null) {
            calls.start(m);
        }
        if (tracer == null) {
            return metadata;
        }
        var b = tracer.spanBuilder(method.name()).setSpanKind(SpanKind.CLIENT).setParent(Context.current())
                .setAllAttributes(m.base);
        Span span = b.startSpan();
        Metadata[] box = {metadata};
        propagator.inject(Context.current().with(span), box, MetadataCarrier.SETTER);
        String key = box[0].containsKey(TRACEPARENT) ? box[0].get(TRACEPARENT) : null;
        if (key == null || open.putIfAbsent(key, span) != null) {
            // no context injected (a propagator without W3C trace context), or the same one twice:
            // the span cannot be found again, so it ends here, unfinished calls and all
            span.setAttribute("rdmarpc.span_untracked", true);
            span.end();
        }
        return box[0];
    }

    @Override
    public void afterCall(Method<?, ?> method, Metadata requestMetadata, Status status, Metadata responseMetadata,
                          long nanos, long requestBytes, long responseBytes) {
        MethodAttributes m = methods.get(method.name());
        if (calls != null) {
            calls.finish(m, status, nanos, requestBytes, responseBytes);
        }
        if (tracer == null || !requestMetadata.containsKey(TRACEPARENT)) {
            return;
        }
        Span span = open.remove(requestMetadata.get(TRACEPARENT));
        if (span != null) {
            end(span, m, status);
        }
    }

    static void end(Span span, MethodAttributes m, Status status) {
        span.setAttribute(MethodAttributes.STATUS_CODE, (long) status.code());
        if (status != Status.OK) {
            span.setStatus(StatusCode.ERROR, status.name());
        }
        span.end();
    }

    /** @return client spans started and not yet ended */
    int openSpans() {
        return open.size();
    }
}
