package dev.rdmarpc.grpc.internal;

import dev.rdmarpc.rpc.RpcException;
import io.grpc.InternalMetadata;
import io.grpc.Metadata;
import io.grpc.Status;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * gRPC metadata as rdmarpc metadata, and statuses both ways. Every gRPC key becomes an rdmarpc
 * key of the same name (ASCII keys hold strings, {@code -bin} keys bytes); a key's second and later
 * values travel as {@code key..2}, {@code key..3} (before the {@code -bin} suffix) and come back
 * in order. The call's path, authority and status travel under reserved {@code grpc-} keys, which
 * applications cannot set.
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
        dev.rdmarpc.rpc.Metadata out = dev.rdmarpc.rpc.Metadata.EMPTY;
        byte[][] kv = InternalMetadata.serialize(md);
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

    private static String repeated(String key, int n) {
        return key.endsWith(BIN) ? key.substring(0, key.length() - BIN.length()) + REPEAT + n + BIN : key + REPEAT + n;
    }

    /** @return {@code md} as gRPC metadata, without the reserved keys of this transport */
    static Metadata toGrpc(dev.rdmarpc.rpc.Metadata md) {
        List<byte[]> kv = new ArrayList<>();
        for (String key : md.keys()) {
            if (key.equals(PATH) || key.equals(AUTHORITY) || key.equals(STATUS) || key.equals(MESSAGE)) {
                continue;
            }
            String grpcKey = original(key);
            kv.add(grpcKey.getBytes(StandardCharsets.US_ASCII));
            kv.add(dev.rdmarpc.rpc.Metadata.isBinary(key) ? md.getBytes(key) : md.get(key).getBytes(StandardCharsets.US_ASCII));
        }
        return InternalMetadata.newMetadata(kv.toArray(new byte[0][]));
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

    /** @return headers as the body of a {@link Wire#HEADERS} message */
    static byte[] block(Metadata headers) {
        dev.rdmarpc.rpc.Metadata md = toRdmarpc(headers);
        byte[] b = new byte[md.encodedLength()];
        md.writeTo(MemorySegment.ofArray(b), 0);
        return b;
    }

    /** @return the headers of a {@link Wire#HEADERS} message's body */
    static Metadata fromBlock(byte[] block) {
        return toGrpc(dev.rdmarpc.rpc.Metadata.readFrom(MemorySegment.ofArray(block), 0));
    }

    /** @return trailers with the status, as the metadata of the stream's end */
    static dev.rdmarpc.rpc.Metadata trailers(Status status, Metadata trailers) {
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
