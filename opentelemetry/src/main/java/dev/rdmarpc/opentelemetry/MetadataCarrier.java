package dev.rdmarpc.opentelemetry;

import dev.rdmarpc.rpc.Metadata;
import io.opentelemetry.context.propagation.TextMapGetter;
import io.opentelemetry.context.propagation.TextMapSetter;

/**
 * The propagator's view of a call's {@link Metadata}: its keys are lower case, as W3C trace context's
 * ({@code traceparent}, {@code tracestate}) and baggage's are.
 */
final class MetadataCarrier {
    private MetadataCarrier() {
    }

    /** Injects into {@code box[0]}, replacing it with a copy that has the field. */
    static final TextMapSetter<Metadata[]> SETTER = (box, key, value) -> {
        if (box != null) {
            box[0] = box[0].with(key, value);
        }
    };

    static final TextMapGetter<Metadata> GETTER = new TextMapGetter<>() {
        @Override
        public Iterable<String> keys(Metadata carrier) {
            return carrier.keys();
        }

        @Override
        public String get(Metadata carrier, String key) {
            if (carrier == null || Metadata.isBinary(key) || !carrier.containsKey(key)) {
                return null;
            }
            return carrier.get(key);
        }
    };
}
