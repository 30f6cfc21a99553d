package dev.rdmarpc.opentelemetry;

import dev.rdmarpc.rpc.Status;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.common.AttributesBuilder;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The attributes of one method, built once per method name and kept: the call path only looks them up
 * (a hash lookup of the name, whose hash the String caches), so recording a call builds no attributes.
 */
final class MethodAttributes {
    static final AttributeKey<String> RPC_SYSTEM = AttributeKey.stringKey("rpc.system");
    static final AttributeKey<String> RPC_SERVICE = AttributeKey.stringKey("rpc.service");
    static final AttributeKey<String> RPC_METHOD = AttributeKey.stringKey("rpc.method");
    /** The status's numeric code, as {@code rpc.grpc.status_code} is gRPC's. */
    static final AttributeKey<Long> STATUS_CODE = AttributeKey.longKey("rpc.rdmarpc.status_code");
    static final String SYSTEM = "rdmarpc";

    private static final Status[] STATUSES = Status.values();

    final String service;
    final String method;
    /** rpc.system, rpc.service, rpc.method. */
    final Attributes base;
    /** {@link #base} and the status code, by {@link Status#ordinal()}. */
    private final Attributes[] byStatus;

    private MethodAttributes(String fullName) {
        int slash = fullName.lastIndexOf('/');
        this.service = slash > 0 ? fullName.substring(0, slash) : null;
        this.method = slash > 0 ? fullName.substring(slash + 1) : fullName;
        AttributesBuilder b = Attributes.builder().put(RPC_SYSTEM, SYSTEM).put(RPC_METHOD, method);
        if (service != null) {
            b.put(RPC_SERVICE, service);
        }
        this.base = b.build();
        this.byStatus = new Attributes[STATUSES.length];
        for (Status s : STATUSES) {
            byStatus[s.ordinal()] = base.toBuilder().put(STATUS_CODE, (long) s.code()).build();
        }
    }

    /** @return the attributes of a call that ended with {@code status} */
    Attributes withStatus(Status status) {
        return byStatus[status.ordinal()];
    }

    /** Per-name cache; bounded by the number of method names the process calls or serves. */
    static final class Cache {
        private final ConcurrentHashMap<String, MethodAttributes> byName = new ConcurrentHashMap<>();

        MethodAttributes get(String fullName) {
            MethodAttributes a = byName.get(fullName);
            return a != null ? a : byName.computeIfAbsent(fullName, MethodAttributes::new);
        }
    }
}
