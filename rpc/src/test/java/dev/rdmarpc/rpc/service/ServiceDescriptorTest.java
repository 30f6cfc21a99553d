package dev.rdmarpc.rpc.service;

import static org.junit.jupiter.api.Assertions.*;

import dev.rdmarpc.rpc.CallContext;
import dev.rdmarpc.rpc.CallOptions;
import dev.rdmarpc.rpc.RpcClient;
import dev.rdmarpc.rpc.RpcServer;
import dev.rdmarpc.rpc.codec.Codec;
import dev.rdmarpc.rpc.codec.Codecs;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Flow;
import org.junit.jupiter.api.Test;

/** What a service interface may not be: each refusal is an IllegalArgumentException that names the problem. */
class ServiceDescriptorTest {
    interface NotAnnotated {
        String a(String s);
    }

    @RpcService
    static class NotAnInterface {
    }

    @RpcService
    interface Overloaded {
        String a(String s);

        String a(int i);
    }

    @RpcService
    interface TwoRequests {
        String a(String s, int i);
    }

    @RpcService
    interface NoCodec {
        String a(Thread t);
    }

    @RpcService
    interface GenericType {
        List<String> a(String s);
    }

    @RpcService
    interface CheckedException {
        String a(String s) throws IOException;
    }

    @RpcService
    interface OptionsFirst {
        String a(CallOptions o, String s);
    }

    @RpcService
    interface ContextParameter {
        String a(CallContext c, String s);
    }

    @RpcService
    interface GenericMethod {
        <T> T a(T t);
    }

    @RpcService
    interface RawFuture {
        @SuppressWarnings("rawtypes")
        CompletableFuture a(String s);
    }

    @RpcService
    interface OtherFuture {
        CompletionStage<String> a(String s);
    }

    @RpcService
    interface PublisherResponse {
        Flow.Publisher<String> a(String s);
    }

    @RpcService
    interface RawStreaming {
        @SuppressWarnings("rawtypes")
        Streaming a();
    }

    @RpcService
    interface WildcardStreaming {
        Streaming<?, String> a();
    }

    @RpcService
    interface GenericStreamingService<T> {
        Streaming<T, String> a();
    }

    @RpcService
    interface StreamingWithParameter {
        Streaming<String, String> a(String first);
    }

    @RpcService
    interface StreamingWithOptions {
        Streaming<String, String> a(CallOptions options);
    }

    @RpcService
    interface InlineStreaming {
        @RpcMethod(inline = true)
        Streaming<String, String> a();
    }

    interface MyStreaming extends Streaming<String, String> {
    }

    @RpcService
    interface StreamingSubtype {
        MyStreaming a();
    }

    @RpcService
    interface StreamingRequest {
        String a(Streaming<String, String> s);
    }

    @RpcService
    interface FutureOfStreaming {
        CompletableFuture<Streaming<String, String>> a();
    }

    @RpcService
    interface StreamingNoCodec {
        Streaming<String, Thread> a();
    }

    @RpcService
    interface StreamingGenericMessage {
        Streaming<List<String>, String> a();
    }

    @RpcService
    interface StreamingChecked {
        Streaming<String, String> a() throws IOException;
    }

    @RpcService
    interface InlineAsync {
        @RpcMethod(inline = true)
        CompletableFuture<String> a(String s);
    }

    @RpcService(name = "a/b")
    interface SlashInName {
        String a(String s);
    }

    @RpcService
    interface SameWireName {
        @RpcMethod(name = "x")
        String a(String s);

        @RpcMethod(name = "x")
        String b(String s);
    }

    @RpcService
    interface NoMethods {
        default String a(String s) {
            return s;
        }
    }

    @RpcService
    interface AnnotatedDefault {
        String a(String s);

        @RpcMethod(name = "b")
        default String b(String s) {
            return s;
        }
    }

    record Bad(Thread t) {
    }

    @RpcService
    interface BadRecord {
        String a(Bad b);
    }

    @RpcService
    interface Fine {
        String a(String s);
    }

    interface Base {
        String base(String s);
    }

    @RpcService(name = "Derived")
    interface Inherits extends Base {
        String own(String s);
    }

    private static void refused(Class<?> type, String... words) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> ServiceDescriptor.of(type, MethodHandles.lookup()));
        for (String w : words) {
            assertTrue(e.getMessage().contains(w), "'" + w + "' in: " + e.getMessage());
        }
    }

    @Test
    void refusesWhatCannotBeAService() {
        refused(NotAnnotated.class, "not annotated @RpcService");
        refused(NotAnInterface.class, "is not an interface");
        refused(Overloaded.class, "Overloaded.a", "overloaded");
        refused(TwoRequests.class, "TwoRequests.a", "more than one request parameter", "record");
        refused(NoCodec.class, "NoCodec.a", "request type java.lang.Thread has no codec", "CodecRegistry.with");
        refused(GenericType.class, "GenericType.a", "response generic type java.util.List<java.lang.String>");
        refused(CheckedException.class, "CheckedException.a", "checked java.io.IOException");
        refused(OptionsFirst.class, "OptionsFirst.a", "CallOptions must be the last parameter");
        refused(ContextParameter.class, "ContextParameter.a", "CallContext", "Services.context()");
        refused(GenericMethod.class, "GenericMethod.a", "is generic");
        refused(RawFuture.class, "RawFuture.a", "raw CompletableFuture");
        refused(OtherFuture.class, "OtherFuture.a", "CompletionStage", "CompletableFuture<R>");
        refused(PublisherResponse.class, "PublisherResponse.a", "Publisher response", "streaming signature",
                "Streaming<Q, R> m()");
        refused(InlineAsync.class, "InlineAsync.a", "inline = true", "asynchronous");
        refused(SlashInName.class, "'a/b'", "without '/'");
        refused(SameWireName.class, "wire name SameWireName/x is used twice");
        refused(NoMethods.class, "has no RPC methods");
        refused(AnnotatedDefault.class, "AnnotatedDefault.b", "not an RPC method");
        refused(BadRecord.class, "BadRecord.a", "record " + Bad.class.getName() + " has no codec");
    }

    @Test
    void refusesWhatCannotBeAStreamingMethod() {
        refused(RawStreaming.class, "RawStreaming.a", "raw Streaming", "Streaming<Q, R>");
        refused(WildcardStreaming.class, "WildcardStreaming.a", "Streaming<?, java.lang.String>", "concrete");
        refused(GenericStreamingService.class, "GenericStreamingService.a", "concrete");
        refused(StreamingWithParameter.class, "StreamingWithParameter.a", "streaming method with parameters", "takes none");
        refused(StreamingWithOptions.class, "StreamingWithOptions.a", "with parameters", "Streaming.open(options)");
        refused(InlineStreaming.class, "InlineStreaming.a", "inline = true", "streaming method", "virtual thread");
        refused(StreamingSubtype.class, "StreamingSubtype.a", MyStreaming.class.getName(), "Streaming<Q, R> itself");
        refused(StreamingRequest.class, "StreamingRequest.a", "a Streaming request", "takes no parameters");
        refused(FutureOfStreaming.class, "FutureOfStreaming.a", "a Streaming response");
        refused(StreamingNoCodec.class, "StreamingNoCodec.a", "server message type java.lang.Thread has no codec");
        refused(StreamingGenericMessage.class, "StreamingGenericMessage.a",
                "client message generic type java.util.List<java.lang.String>", "record");
        refused(StreamingChecked.class, "StreamingChecked.a", "checked java.io.IOException");
    }

    @RpcService
    interface Streams {
        Streaming<String, String> echo();

        /** Registered before echo (methods go by Java name) if registration did not check everything first. */
        String before(String s);
    }

    /** echo() returns what {@code value} gives; before() is fine. */
    record StreamsImpl(java.util.function.Supplier<Streaming<String, String>> value) implements Streams {
        @Override
        public Streaming<String, String> echo() {
            return value.get();
        }

        @Override
        public String before(String s) {
            return s;
        }
    }

    private static void refusedAtRegistration(Streams impl, String... words) {
        RpcServer.Builder builder = RpcServer.builder();
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> Services.register(builder, Streams.class, impl, MethodHandles.lookup()));
        for (String w : words) {
            assertTrue(e.getMessage().contains(w), "'" + w + "' in: " + e.getMessage());
        }
        // Nothing was registered: the same builder takes a good implementation of the whole service.
        Services.register(builder, Streams.class, new StreamsImpl(() -> Streaming.serve(s -> { })), MethodHandles.lookup());
    }

    @Test
    void registrationTakesOnlyWhatStreamingServeReturns() {
        refusedAtRegistration(new StreamsImpl(() -> null), "Streams.echo() returned null", "Streaming.serve(handler)");
        refusedAtRegistration(new StreamsImpl(() -> options -> null), "Streams.echo() returned ", "Streaming.serve(handler)");
        refusedAtRegistration(new StreamsImpl(() -> {
            throw new IllegalStateException("not ready");
        }), "Streams.echo() threw at registration", "not ready");
        try (RpcServer server = Services.register(RpcServer.builder(), Streams.class,
                new StreamsImpl(() -> Streaming.serve(s -> { })), MethodHandles.lookup()).start();
             RpcClient client = RpcClient.connect(server.address())) {
            Streams serviceClient = Services.client(client, Streams.class, MethodHandles.lookup());
            refusedAtRegistration(new StreamsImpl(serviceClient::echo), "Streams.echo() returned a service client's Streaming (Streams/echo over ",
                    "Streaming.serve(handler)");
        }
    }

    @Test
    void registrationCallsTheStreamingMethodOnce() {
        java.util.concurrent.atomic.AtomicInteger calls = new java.util.concurrent.atomic.AtomicInteger();
        Services.register(RpcServer.builder(), Streams.class, new StreamsImpl(() -> {
            calls.incrementAndGet();
            return Streaming.serve(s -> { });
        }), MethodHandles.lookup());
        assertEquals(1, calls.get());
    }

    @Test
    void inheritedMethodsAreRpcMethods() {
        ServiceDescriptor<Inherits> d = ServiceDescriptor.of(Inherits.class, MethodHandles.lookup());
        assertEquals(List.of("Derived/base", "Derived/own"), d.methods().stream().map(m -> m.method().name()).toList());
    }

    @Test
    @SuppressWarnings({"unchecked", "rawtypes"})
    void refusesAnImplementationOfAnotherInterface() {
        ServiceDescriptor d = ServiceDescriptor.of(Fine.class, MethodHandles.lookup());
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> Services.register(RpcServer.builder(), d, new Object()));
        assertTrue(e.getMessage().contains("does not implement " + Fine.class.getName()), e.getMessage());
    }

    @Test
    void aWireIdRegisteredAlreadyIsRefused() {
        RpcServer.Builder builder = RpcServer.builder().register(
                dev.rdmarpc.rpc.Method.of("Fine/a", Codecs.STRING, Codecs.STRING), (ctx, s) -> s);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> Services.register(builder, Fine.class, s -> s, MethodHandles.lookup()));
        assertTrue(e.getMessage().contains("Fine/a is already registered"), e.getMessage());
    }

    @Test
    void clientNeedsAFullPrivilegeLookup() {
        ServiceDescriptor<Fine> d = ServiceDescriptor.of(Fine.class, MethodHandles.lookup().dropLookupMode(MethodHandles.Lookup.PRIVATE));
        try (RpcServer server = RpcServer.builder().start(); RpcClient client = RpcClient.connect(server.address())) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Services.client(client, d));
            assertTrue(e.getMessage().contains("full privilege"), e.getMessage());
        }
    }

    record Pt(int x, int y) {
    }

    @Test
    void codecRegistryPicksExplicitThenBuiltInThenRecord() {
        CodecRegistry r = CodecRegistry.of(MethodHandles.lookup());
        assertSame(Codecs.INT, r.codec(Integer.class));
        assertSame(Codecs.INT, r.codec(int.class));
        assertSame(Codecs.VOID, r.codec(void.class));
        assertSame(Codecs.BYTES, r.codec(byte[].class));
        assertSame(Codecs.SEGMENT, r.codec(MemorySegment.class));
        Codec<Integer> other = new Codec<>() {
            @Override
            public int encodedSize(Integer v) {
                return 4;
            }

            @Override
            public void encode(Integer v, MemorySegment dst, long offset) {
                dst.set(Codecs.INT_LE, offset, -v);
            }

            @Override
            public Integer decode(MemorySegment src, long offset, int length) {
                return -src.get(Codecs.INT_LE, offset);
            }
        };
        assertSame(other, r.with(Integer.class, other).codec(int.class), "explicit first, for the primitive too");
        assertSame(Codecs.INT, r.codec(int.class), "with() returns a copy");
        Pt p = new Pt(3, 4);
        MemorySegment buf = MemorySegment.ofArray(new byte[r.codec(Pt.class).encodedSize(p)]);
        r.codec(Pt.class).encode(p, buf, 0);
        assertEquals(p, r.codec(Pt.class).decode(buf, 0, (int) buf.byteSize()), "records through the lookup");
        assertThrows(IllegalArgumentException.class, () -> r.with(int.class, Codecs.INT));
        assertThrows(IllegalArgumentException.class, () -> r.codec(Thread.class));
    }
}
