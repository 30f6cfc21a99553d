package dev.rdmarpc.grpc.internal;

import dev.rdmarpc.rpc.RpcException;
import io.grpc.InternalMetadata;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.grpc.internal.GrpcUtil;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * gRPC metadata as rdmarpc metadata, and statuses both ways. Every gRPC key becomes an rdmarpc
 * key of the same name (ASCII keys hold strings, {@code -bin} keys bytes); a key's second and later
 * values travel as {@code key..2}, {@code key..3} (before the {@code -bin} suffix) and come back
 * in order. The call's path, authority and status travel under reserved {@code grpc-} keys, which
 * applications cannot set. The conversions a call makes go through its transport's
 * {@link MetadataCache}s: each distinct set of headers or trailers is converted once.
 */
final class Headers {
    static final String PATH = "grpc-path";
    static final String AUTHORITY = "grpc-authority";
    static final String STATUS = "grpc-status";
    static final String MESSAGE = "grpc-message";
    private static final String BIN = "-bin";
    private static final String REPEAT = "..";

    private Headers() {
    }

    /** @return {@code md} as rdmarpc metadata */
    static dev.rdmarpc.rpc.Metadata toRdmarpc(Metadata md) {
        return toRdmarpc(InternalMetadata.serialize(md));
    }

    /** @return gRPC metadata in its serialized form (keys and values, one after the other) as rdmarpc metadata */
    static dev.rdmarpc.rpc.Metadata toRdmarpc(byte[][] kv) {
        dev.rdmarpc.rpc.Metadata out = dev.rdmarpc.rpc.Metadata.EMPTY;
        Map<String, Integer> seen = new HashMap<>();
        for (int i = 0; i + 1 < kv.length; i += 2) {
            String key = new String(kv[i], StandardCharsets.US_ASCII);
            int n = seen.merge(key, 1, Integer::sum);
            String wireKey = n == 1 ? key : repeated(key, n);
            out = key.endsWith(BIN) ? out.with(wireKey, kv[i + 1])
                    : out.with(wireKey, new String(kv[i + 1], StandardCharsets.US_ASCII));
        }
        return out;
    }

    /**
     * @return the start of a call to {@code method}: rdmarpc call options (no deadline) with the
     *         headers, the path and the authority; converted once per distinct headers, method and
     *         authority ({@code cache})
     */
    static dev.rdmarpc.rpc.CallOptions startOptions(Metadata headers, MethodDescriptor<?, ?> method, String authority,
                                                    MetadataCache<dev.rdmarpc.rpc.CallOptions> cache) {
        byte[][] kv = InternalMetadata.serialize(headers);
        int hash = MetadataCache.hashOf(method);
        dev.rdmarpc.rpc.CallOptions options = cache.get(hash, method, authority, kv);
        if (options == null) {
            dev.rdmarpc.rpc.Metadata md = toRdmarpc(kv).with(PATH, "/" + method.getFullMethodName());
            if (authority != null) {
                md = md.with(AUTHORITY, authority);
            }
            // a gRPC call without a deadline has none (not rdmarpc's default stream timeout)
            options = dev.rdmarpc.rpc.CallOptions.DEFAULT.withMetadata(md).withoutDeadline();
            cache.put(hash, method, authority, kv, options);
        }
        return options;
    }

    private static String repeated(String key, int n) {
        return key.endsWith(BIN) ? key.substring(0, key.length() - BIN.length()) + REPEAT + n + BIN : key + REPEAT + n;
    }

    /** A call's request headers as gRPC's (serialized), with its method and authority. */
    record Request(byte[][] headers, String method, String authority) {
    }

    /**
     * @return the request of a call's opening metadata, converted once per distinct metadata
     *         ({@code cache}); null when it names no method ({@link #PATH})
     */
    static Request request(dev.rdmarpc.rpc.Metadata md, MetadataCache<Request> cache) {
        int hash = md.hashCode();
        Request r = cache.get(hash, null, null, md);
        if (r == null) {
            String path = md.get(PATH);
            if (path == null || !path.startsWith("/")) {
                return null;
            }
            r = new Request(serialized(md), path.substring(1), md.get(AUTHORITY));
            cache.put(hash, null, null, md, r);
        }
        return r;
    }

    /** The trailers of a call's end as gRPC's (serialized), with the status they carry. */
    record Trailers(byte[][] trailers, Status status) {
    }

    /** @return the trailers and status of a stream's end, converted once per distinct metadata ({@code cache}) */
    static Trailers trailers(dev.rdmarpc.rpc.Metadata md, MetadataCache<Trailers> cache) {
        int hash = md.hashCode();
        Trailers t = cache.get(hash, null, null, md);
        if (t == null) {
            t = new Trailers(serialized(md), statusOf(md));
            cache.put(hash, null, null, md, t);
        }
        return t;
    }

    /** @return {@code md} in gRPC's serialized form, without the reserved keys of this transport */
    private static byte[][] serialized(dev.rdmarpc.rpc.Metadata md) {
        List<String> keys = md.keys();
        int n = 0;
        for (String key : keys) {
            n += reserved(key) ? 0 : 1;
        }
        byte[][] kv = new byte[2 * n][];
        int i = 0;
        for (String key : keys) {
            if (reserved(key)) {
                continue;
            }
            kv[i++] = original(key).getBytes(StandardCharsets.US_ASCII);
            kv[i++] = dev.rdmarpc.rpc.Metadata.isBinary(key) ? md.getBytes(key) : md.get(key).getBytes(StandardCharsets.US_ASCII);
        }
        return kv;
    }

    private static boolean reserved(String key) {
        return key.equals(PATH) || key.equals(AUTHORITY) || key.equals(STATUS) || key.equals(MESSAGE);
    }

    /**
     * @return gRPC metadata over a cached serialized form: the keys and the ASCII values shared (gRPC
     *         only reads them: an ASCII value reaches the application parsed, as a new object), the
     *         {@code -bin} values copied (gRPC hands a binary value's array to the application)
     */
    static Metadata own(byte[][] kv) {
        byte[][] copy = new byte[kv.length][];
        for (int i = 0; i < kv.length; i += 2) {
            copy[i] = kv[i];
            copy[i + 1] = binary(kv[i]) ? kv[i + 1].clone() : kv[i + 1];
        }
        return InternalMetadata.newMetadata(copy);
    }

    /** @return whether a serialized key ends in {@code -bin} */
    private static boolean binary(byte[] key) {
        int n = key.length;
        return n >= 4 && key[n - 4] == '-' && key[n - 3] == 'b' && key[n - 2] == 'i' && key[n - 1] == 'n';
    }

    private static String original(String key) {
        boolean bin = key.endsWith(BIN);
        String base = bin ? key.substring(0, key.length() - BIN.length()) : key;
        int at = base.lastIndexOf(REPEAT);
        if (at > 0 && at + REPEAT.length() < base.length() && base.substring(at + REPEAT.length()).chars().allMatch(Character::isDigit)) {
            base = base.substring(0, at);
        }
        return bin ? base + BIN : base;
    }

    /**
     * @return headers as a {@link Wire#HEADERS} message, converted once per distinct headers
     *         ({@code cache}): the message is shared, and only read
     */
    static Wire.Out headersOut(Metadata headers, MetadataCache<Wire.Out> cache) {
        byte[][] kv = InternalMetadata.serialize(headers);
        Wire.Out out = cache.get(kv.length, null, null, kv);
        if (out == null) {
            out = Wire.Out.headers(block(kv));
            cache.put(kv.length, null, null, kv, out);
        }
        return out;
    }

    private static byte[] block(byte[][] kv) {
        dev.rdmarpc.rpc.Metadata md = toRdmarpc(kv);
        byte[] b = new byte[md.encodedLength()];
        md.writeTo(MemorySegment.ofArray(b), 0);
        return b;
    }

    /** @return the headers of a {@link Wire#HEADERS} message's body, converted once per distinct body ({@code cache}) */
    static Metadata fromBlock(byte[] block, MetadataCache<Received> cache) {
        return received(block, cache).metadata();
    }

    /**
     * Response headers converted: their serialized form, and their {@code grpc-encoding} read once
     * (the last value, as gRPC's {@code Metadata.get} reads it), not parsed again by every call.
     */
    record Received(byte[][] kv, String encoding) {
        /** @return gRPC metadata of the call's own ({@link #own}) */
        Metadata metadata() {
            return own(kv);
        }
    }

    private static final byte[] ENCODING_KEY = GrpcUtil.MESSAGE_ENCODING_KEY.name().getBytes(StandardCharsets.US_ASCII);

    /** @return a {@link Wire#HEADERS} message's body converted, once per distinct body ({@code cache}) */
    static Received received(byte[] block, MetadataCache<Received> cache) {
        Received r = cache.get(block.length, null, null, block);
        if (r == null) {
            byte[][] kv = serialized(dev.rdmarpc.rpc.Metadata.readFrom(MemorySegment.ofArray(block), 0));
            String encoding = null;
            for (int i = 0; i + 1 < kv.length; i += 2) {
                if (Arrays.equals(kv[i], ENCODING_KEY)) {
                    encoding = new String(kv[i + 1], StandardCharsets.US_ASCII);
                }
            }
            r = new Received(kv, encoding);
            cache.put(block.length, null, null, block, r);
        }
        return r;
    }

    /** The trailers of a status without a description and without other trailers, by the code's ordinal. */
    private static final dev.rdmarpc.rpc.Metadata[] STATUS_ONLY = statusOnly();

    private static dev.rdmarpc.rpc.Metadata[] statusOnly() {
        Status.Code[] codes = Status.Code.values();
        dev.rdmarpc.rpc.Metadata[] m = new dev.rdmarpc.rpc.Metadata[codes.length];
        for (Status.Code c : codes) {
            m[c.ordinal()] = dev.rdmarpc.rpc.Metadata.of(STATUS, Integer.toString(c.value()));
        }
        return m;
    }

    /** @return trailers with the status, as the metadata of the stream's end */
    static dev.rdmarpc.rpc.Metadata trailers(Status status, Metadata trailers) {
        if (status.getDescription() == null && InternalMetadata.headerCount(trailers) == 0) {
            return STATUS_ONLY[status.getCode().ordinal()]; // immutable: shared by every call
        }
        dev.rdmarpc.rpc.Metadata md = toRdmarpc(trailers).with(STATUS, Integer.toString(status.getCode().value()));
        if (status.getDescription() != null) {
            md = md.with(MESSAGE, status.getDescription());
        }
        return md;
    }

    /** @return the status the trailers carry; INTERNAL when they carry none */
    static Status statusOf(dev.rdmarpc.rpc.Metadata trailers) {
        String code = trailers.get(STATUS);
        if (code == null) {
            return Status.INTERNAL.withDescription("the stream ended without a grpc-status");
        }
        Status s;
        try {
            s = Status.fromCodeValue(Integer.parseInt(code));
        } catch (NumberFormatException e) {
            return Status.INTERNAL.withDescription("grpc-status is not a number: " + code);
        }
        String message = trailers.get(MESSAGE);
        return message == null ? s : s.withDescription(message);
    }

    /** @return the gRPC status of an rdmarpc failure */
    static Status statusOf(RpcException e) {
        Status s = switch (e.status()) {
            case TIMEOUT, DEADLINE_EXCEEDED -> Status.DEADLINE_EXCEEDED;
            case CANCELLED -> Status.CANCELLED;
            case CONNECTION_CLOSED, UNAVAILABLE, SHUTTING_DOWN -> Status.UNAVAILABLE;
            case OVERLOADED, RESOURCE_EXHAUSTED, PAYLOAD_TOO_LARGE -> Status.RESOURCE_EXHAUSTED;
            case UNKNOWN_METHOD -> Status.UNIMPLEMENTED;
            case PROTOCOL_ERROR -> Status.INTERNAL;
            case UNAUTHENTICATED -> Status.UNAUTHENTICATED;
            case PERMISSION_DENIED -> Status.PERMISSION_DENIED;
            default -> Status.UNKNOWN;
        };
        return s.withDescription("rdmarpc " + e.status() + ": " + e.getMessage()).withCause(e);
    }
}
