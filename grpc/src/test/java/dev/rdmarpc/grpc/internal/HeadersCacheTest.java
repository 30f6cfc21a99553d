package dev.rdmarpc.grpc.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;

import io.grpc.InternalMetadata;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import java.io.ByteArrayInputStream;
import java.io.InputStream;
import org.junit.jupiter.api.Test;

/**
 * The metadata a call converts is converted once per distinct content and shared, never changed by
 * a later call or by what an application does with its own metadata.
 */
class HeadersCacheTest {
    private static final Metadata.Key<String> ASCII = Metadata.Key.of("tenant", Metadata.ASCII_STRING_MARSHALLER);
    private static final Metadata.Key<byte[]> BIN = Metadata.Key.of("token-bin", Metadata.BINARY_BYTE_MARSHALLER);
    private static final MethodDescriptor<byte[], byte[]> A = method("svc/A");
    private static final MethodDescriptor<byte[], byte[]> B = method("svc/B");

    @Test
    void aCallStartsWithTheOptionsOfTheLastCallWithTheSameHeadersMethodAndAuthority() {
        MetadataCache<dev.rdmarpc.rpc.CallOptions> cache = new MetadataCache<>();
        dev.rdmarpc.rpc.CallOptions first = Headers.startOptions(headers("t1", new byte[] {1}), A, null, cache);
        assertSame(first, Headers.startOptions(headers("t1", new byte[] {1}), A, null, cache),
                "the same headers and method: converted once");
        assertEquals("/svc/A", first.metadata().get(Headers.PATH));
        assertEquals("t1", first.metadata().get("tenant"));
        assertArrayEquals(new byte[] {1}, first.metadata().getBytes("token-bin"));
        assertNull(first.metadata().get(Headers.AUTHORITY));

        dev.rdmarpc.rpc.CallOptions other = Headers.startOptions(headers("t2", new byte[] {1}), A, null, cache);
        assertEquals("t2", other.metadata().get("tenant"), "other headers: converted anew");
        assertEquals("/svc/B", Headers.startOptions(headers("t2", new byte[] {1}), B, null, cache).metadata().get(Headers.PATH));
        assertEquals("example.org", Headers.startOptions(headers("t2", new byte[] {1}), A, "example.org", cache)
                .metadata().get(Headers.AUTHORITY));
    }

    @Test
    void anApplicationThatChangesItsValueArrayAfterACallGetsItsNewValueSent() {
        MetadataCache<dev.rdmarpc.rpc.CallOptions> cache = new MetadataCache<>();
        byte[] token = {1, 2};
        assertArrayEquals(new byte[] {1, 2}, Headers.startOptions(headers("t", token), A, null, cache)
                .metadata().getBytes("token-bin"));
        token[0] = 9; // gRPC keeps the application's array in its metadata
        assertArrayEquals(new byte[] {9, 2}, Headers.startOptions(headers("t", token), A, null, cache)
                .metadata().getBytes("token-bin"));
    }

    @Test
    void receivedHeadersAreConvertedOnceButEachCallGetsMetadataOfItsOwn() {
        MetadataCache<Headers.Received> cache = new MetadataCache<>();
        byte[] block = Headers.headersOut(headers("t1", new byte[] {5, 6}), new MetadataCache<>()).bytes;
        Metadata first = Headers.fromBlock(block, cache);
        Metadata second = Headers.fromBlock(block.clone(), cache);
        assertEquals("t1", second.get(ASCII));
        byte[] firstToken = first.get(BIN);
        firstToken[0] = 42; // an application may change the array gRPC hands it
        first.discardAll(ASCII);
        assertArrayEquals(new byte[] {5, 6}, second.get(BIN), "another call's value is its own");
        assertEquals("t1", second.get(ASCII));
        assertArrayEquals(new byte[] {5, 6}, Headers.fromBlock(block, cache).get(BIN));
        byte[][] a = InternalMetadata.serialize(Headers.fromBlock(block, cache));
        byte[][] b = InternalMetadata.serialize(Headers.fromBlock(block, cache));
        for (int i = 0; i < a.length; i += 2) { // the ASCII values, which the application only gets parsed, are shared
            boolean bin = new String(a[i], java.nio.charset.StandardCharsets.US_ASCII).endsWith("-bin");
            assertEquals(!bin, a[i + 1] == b[i + 1], new String(a[i], java.nio.charset.StandardCharsets.US_ASCII));
        }
    }

    @Test
    void requestHeadersAreConvertedOnceWithTheirMethodAndAuthorityButWithoutTheReservedKeys() {
        MetadataCache<Headers.Request> cache = new MetadataCache<>();
        dev.rdmarpc.rpc.Metadata md = Headers.toRdmarpc(headers("t1", new byte[] {7})).with(Headers.PATH, "/svc/A")
                .with(Headers.AUTHORITY, "example.org");
        Headers.Request first = Headers.request(md, cache);
        assertSame(first, Headers.request(md, cache));
        assertEquals("svc/A", first.method());
        assertEquals("example.org", first.authority());
        Metadata firstHeaders = Headers.own(first.headers());
        firstHeaders.get(BIN)[0] = 1; // an application may change the array gRPC hands it
        Metadata second = Headers.own(Headers.request(md, cache).headers());
        assertEquals(2, InternalMetadata.headerCount(second), "tenant and token-bin, not the reserved keys");
        assertArrayEquals(new byte[] {7}, second.get(BIN));
        Headers.Request other = Headers.request(md.with(Headers.PATH, "/svc/B").without(Headers.AUTHORITY), cache);
        assertEquals("svc/B", other.method());
        assertNull(other.authority());
        assertNull(Headers.request(md.without(Headers.PATH), cache), "no method");
        assertNull(Headers.request(md.with(Headers.PATH, "svc/A"), cache), "a path without its slash");
    }

    @Test
    void receivedTrailersAreConvertedOnceWithTheirStatus() {
        MetadataCache<Headers.Trailers> cache = new MetadataCache<>();
        dev.rdmarpc.rpc.Metadata md = Headers.trailers(Status.NOT_FOUND.withDescription("gone"), headers("t1", new byte[] {7}));
        Headers.Trailers first = Headers.trailers(md, cache);
        assertSame(first, Headers.trailers(md, cache));
        assertEquals(Status.Code.NOT_FOUND, first.status().getCode());
        assertEquals("gone", first.status().getDescription());
        Metadata trailers = Headers.own(first.trailers());
        assertEquals(2, InternalMetadata.headerCount(trailers), "tenant and token-bin, not the status");
        assertEquals("t1", trailers.get(ASCII));
        assertEquals(Status.Code.OK, Headers.trailers(Headers.trailers(Status.OK, new Metadata()), cache).status().getCode());
        assertEquals(Status.Code.INTERNAL, Headers.trailers(dev.rdmarpc.rpc.Metadata.EMPTY, cache).status().getCode(),
                "no status: INTERNAL");
    }

    @Test
    void responseHeadersAreSharedWhileTheHeadersAreTheSame() {
        MetadataCache<Wire.Out> cache = new MetadataCache<>();
        Wire.Out first = Headers.headersOut(headers("t1", new byte[] {1}), cache);
        assertSame(first, Headers.headersOut(headers("t1", new byte[] {1}), cache));
        Wire.Out other = Headers.headersOut(headers("t1", new byte[] {2}), cache);
        assertNotSame(first, other);
        assertEquals(Wire.HEADERS, other.kind);
        Metadata back = Headers.fromBlock(other.bytes, new MetadataCache<>());
        assertArrayEquals(new byte[] {2}, back.get(BIN));
    }

    @Test
    void aStatusWithoutDescriptionOrTrailersEndsWithSharedTrailers() {
        dev.rdmarpc.rpc.Metadata ok = Headers.trailers(Status.OK, new Metadata());
        assertSame(ok, Headers.trailers(Status.OK, new Metadata()));
        assertEquals(Status.Code.OK, Headers.statusOf(ok).getCode());
        assertEquals(Status.Code.NOT_FOUND, Headers.statusOf(Headers.trailers(Status.NOT_FOUND, new Metadata())).getCode());

        Metadata extra = headers("t1", new byte[] {3});
        dev.rdmarpc.rpc.Metadata withExtra = Headers.trailers(Status.OK, extra);
        assertEquals("t1", withExtra.get("tenant"));
        dev.rdmarpc.rpc.Metadata described = Headers.trailers(Status.ABORTED.withDescription("why"), new Metadata());
        assertEquals("why", Headers.statusOf(described).getDescription());
        assertEquals(Status.Code.ABORTED, Headers.statusOf(described).getCode());
    }

    @Test
    void receivedHeaderBytesDecodeOnceWhileTheyRepeat() {
        dev.rdmarpc.rpc.codec.Codec<Object> codec = Wire.method(1 << 20).responseCodec();
        byte[] one = Headers.headersOut(headers("t1", new byte[] {5, 6}), new MetadataCache<>()).bytes;
        byte[] two = Headers.headersOut(headers("t2", new byte[] {5, 6}), new MetadataCache<>()).bytes; // same length
        Wire.In first = (Wire.In) codec.decode(frame(one, 3), 3, 1 + one.length);
        assertArrayEquals(one, first.body());
        assertSame(first, codec.decode(frame(one, 0), 0, 1 + one.length), "the same bytes: the same decoded headers");
        Wire.In other = (Wire.In) codec.decode(frame(two, 0), 0, 1 + two.length);
        assertArrayEquals(two, other.body(), "other bytes of the same length: decoded anew");
        assertEquals("t2", Headers.fromBlock(other.body(), new MetadataCache<>()).get(ASCII));
        assertArrayEquals(one, ((Wire.In) codec.decode(frame(one, 0), 0, 1 + one.length)).body());
    }

    @Test
    void receivedHeadersReadTheirEncodingOnceAsGrpcReadsIt() {
        MetadataCache<Headers.Received> cache = new MetadataCache<>();
        Metadata sent = headers("t1", new byte[] {1});
        sent.put(io.grpc.internal.GrpcUtil.MESSAGE_ENCODING_KEY, "gzip");
        byte[] block = Headers.headersOut(sent, new MetadataCache<>()).bytes;
        Headers.Received first = Headers.received(block, cache);
        assertEquals("gzip", first.encoding());
        assertEquals(first.metadata().get(io.grpc.internal.GrpcUtil.MESSAGE_ENCODING_KEY), first.encoding());
        assertSame(first, Headers.received(block.clone(), cache), "the same bytes: read once");
        byte[] plain = Headers.headersOut(headers("t1", new byte[] {1}), new MetadataCache<>()).bytes;
        assertNull(Headers.received(plain, cache).encoding());
    }

    /** A stream message of kind {@link Wire#HEADERS} carrying {@code block}, at {@code at} of a native segment. */
    private static java.lang.foreign.MemorySegment frame(byte[] block, long at) {
        java.lang.foreign.MemorySegment s = java.lang.foreign.Arena.ofAuto().allocate(at + 1 + block.length);
        s.set(java.lang.foreign.ValueLayout.JAVA_BYTE, at, Wire.HEADERS);
        java.lang.foreign.MemorySegment.copy(block, 0, s, java.lang.foreign.ValueLayout.JAVA_BYTE, at + 1, block.length);
        return s;
    }

    private static Metadata headers(String tenant, byte[] token) {
        Metadata m = new Metadata();
        m.put(ASCII, tenant);
        m.put(BIN, token);
        return m;
    }

    private static MethodDescriptor<byte[], byte[]> method(String name) {
        MethodDescriptor.Marshaller<byte[]> m = new MethodDescriptor.Marshaller<>() {
            @Override
            public InputStream stream(byte[] value) {
                return new ByteArrayInputStream(value);
            }

            @Override
            public byte[] parse(InputStream stream) {
                throw new UnsupportedOperationException();
            }
        };
        return MethodDescriptor.<byte[], byte[]>newBuilder().setType(MethodDescriptor.MethodType.UNARY)
                .setFullMethodName(name).setRequestMarshaller(m).setResponseMarshaller(m).build();
    }
}
