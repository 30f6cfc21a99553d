package dev.rdmarpc.grpc;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.testing.integration.Messages.BoolValue;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.MetadataUtils;
import io.grpc.stub.StreamObserver;
import io.grpc.testing.integration.EmptyProtos.Empty;
import io.grpc.testing.integration.Messages.EchoStatus;
import io.grpc.testing.integration.Messages.ResponseParameters;
import io.grpc.testing.integration.Messages.SimpleRequest;
import io.grpc.testing.integration.Messages.SimpleResponse;
import io.grpc.testing.integration.Messages.StreamingInputCallRequest;
import io.grpc.testing.integration.Messages.StreamingInputCallResponse;
import io.grpc.testing.integration.Messages.StreamingOutputCallRequest;
import io.grpc.testing.integration.Messages.StreamingOutputCallResponse;
import io.grpc.testing.integration.UnimplementedServiceGrpc;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import io.grpc.Context;
import io.grpc.Deadline;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.testing.integration.TestServiceGrpc;
import java.time.Duration;
import java.util.Optional;

/**
 * The cases of gRPC's interop test description that apply to a transport, each as the description
 * says, against {@link InteropService}.
 */
abstract class GrpcInteropContract extends GrpcContractBase {
    private static final int[] REQUEST_SIZES = {27182, 8, 1828, 45904};
    private static final int[] RESPONSE_SIZES = {31415, 9, 2653, 58979};

    @Test
    void emptyUnary() {
        assertEquals(Empty.getDefaultInstance(), blocking.emptyCall(Empty.getDefaultInstance()));
    }

    @Test
    void largeUnary() {
        SimpleResponse r = blocking.unaryCall(SimpleRequest.newBuilder().setResponseSize(314159)
                .setPayload(InteropService.zeros(271828)).build());
        assertEquals(InteropService.zeros(314159), r.getPayload());
    }

    @Test
    void clientCompressedUnary() {
        SimpleRequest expectCompressed = SimpleRequest.newBuilder().setResponseSize(314159)
                .setPayload(InteropService.zeros(271828)).setExpectCompressed(BoolValue.newBuilder().setValue(true).build()).build();
        assertFails(Status.Code.INVALID_ARGUMENT, () -> blocking.unaryCall(expectCompressed));
        assertEquals(314159, blocking.withCompression("gzip").unaryCall(expectCompressed).getPayload().getBody().size());
        SimpleRequest plain = expectCompressed.toBuilder().setExpectCompressed(BoolValue.newBuilder().setValue(false).build()).build();
        assertEquals(314159, blocking.unaryCall(plain).getPayload().getBody().size());
    }

    @Test
    void serverCompressedUnary() {
        for (boolean compressed : new boolean[]{true, false}) {
            AtomicReference<Metadata> headers = new AtomicReference<>();
            AtomicReference<Metadata> trailers = new AtomicReference<>();
            long copies = MessageCopies.sendCopies();
            SimpleResponse r = blocking.withInterceptors(MetadataUtils.newCaptureMetadataInterceptor(headers, trailers))
                    .unaryCall(SimpleRequest.newBuilder().setResponseSize(314159).setPayload(InteropService.zeros(271828))
                            .setResponseCompressed(BoolValue.newBuilder().setValue(compressed).build()).build());
            assertEquals(InteropService.zeros(314159), r.getPayload());
            assertEquals(compressed, "gzip".equals(headers.get().get(InteropService.ENCODING)));
            // the request drained into its buffer (1); the response too (1), or gzipped, collected and copied in (3)
            assertEquals(compressed ? 4 : 2, MessageCopies.sendCopies() - copies, "the response went compressed: " + compressed);
        }
    }

    @Test
    void clientStreaming() throws Exception {
        CompletableFuture<StreamingInputCallResponse> done = new CompletableFuture<>();
        StreamObserver<StreamingInputCallRequest> requests = async.streamingInputCall(observer(done));
        for (int size : REQUEST_SIZES) {
            requests.onNext(StreamingInputCallRequest.newBuilder().setPayload(InteropService.zeros(size)).build());
        }
        requests.onCompleted();
        assertEquals(74922, done.get(30, TimeUnit.SECONDS).getAggregatedPayloadSize());
    }

    @Test
    void serverStreaming() {
        StreamingOutputCallRequest.Builder req = StreamingOutputCallRequest.newBuilder();
        for (int size : RESPONSE_SIZES) {
            req.addResponseParameters(ResponseParameters.newBuilder().setSize(size));
        }
        List<Integer> sizes = new ArrayList<>();
        blocking.streamingOutputCall(req.build()).forEachRemaining(r -> sizes.add(r.getPayload().getBody().size()));
        assertEquals(List.of(31415, 9, 2653, 58979), sizes);
    }

    @Test
    void pingPong() throws Exception {
        BlockingQueue<Object> responses = new LinkedBlockingQueue<>();
        StreamObserver<StreamingOutputCallRequest> requests = async.fullDuplexCall(queueing(responses));
        for (int i = 0; i < REQUEST_SIZES.length; i++) {
            requests.onNext(StreamingOutputCallRequest.newBuilder().setPayload(InteropService.zeros(REQUEST_SIZES[i]))
                    .addResponseParameters(ResponseParameters.newBuilder().setSize(RESPONSE_SIZES[i])).build());
            Object r = responses.poll(30, TimeUnit.SECONDS);
            assertEquals(RESPONSE_SIZES[i], ((StreamingOutputCallResponse) r).getPayload().getBody().size());
        }
        requests.onCompleted();
        assertEquals("completed", responses.poll(30, TimeUnit.SECONDS));
    }

    @Test
    void emptyStream() throws Exception {
        BlockingQueue<Object> responses = new LinkedBlockingQueue<>();
        StreamObserver<StreamingOutputCallRequest> requests = async.fullDuplexCall(queueing(responses));
        requests.onCompleted();
        assertEquals("completed", responses.poll(30, TimeUnit.SECONDS));
    }

    @Test
    void cancelAfterBegin() throws Exception {
        CompletableFuture<StreamingInputCallResponse> done = new CompletableFuture<>();
        ClientCallStreamObserver<StreamingInputCallRequest> requests =
                (ClientCallStreamObserver<StreamingInputCallRequest>) async.streamingInputCall(observer(done));
        requests.cancel("cancelled by the test", null);
        assertEquals(Status.Code.CANCELLED, failure(done).getCode());
    }

    @Test
    void cancelAfterFirstResponse() throws Exception {
        BlockingQueue<Object> responses = new LinkedBlockingQueue<>();
        ClientCallStreamObserver<StreamingOutputCallRequest> requests =
                (ClientCallStreamObserver<StreamingOutputCallRequest>) async.fullDuplexCall(queueing(responses));
        requests.onNext(StreamingOutputCallRequest.newBuilder().setPayload(InteropService.zeros(27182))
                .addResponseParameters(ResponseParameters.newBuilder().setSize(31415)).build());
        assertEquals(31415, ((StreamingOutputCallResponse) responses.poll(30, TimeUnit.SECONDS)).getPayload().getBody().size());
        requests.cancel("cancelled by the test", null);
        assertEquals(Status.Code.CANCELLED, ((Status) responses.poll(30, TimeUnit.SECONDS)).getCode());
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (service.cancelled.get() == 0 && System.nanoTime() < end) {
            Thread.sleep(10);
        }
        assertEquals(1, service.cancelled.get(), "the server saw the cancellation");
    }

    @Test
    void timeoutOnSleepingServer() throws Exception {
        BlockingQueue<Object> responses = new LinkedBlockingQueue<>();
        StreamObserver<StreamingOutputCallRequest> requests = async.withDeadlineAfter(slowMillis(), TimeUnit.MILLISECONDS)
                .fullDuplexCall(queueing(responses));
        requests.onNext(StreamingOutputCallRequest.newBuilder().setPayload(InteropService.zeros(27182))
                .addResponseParameters(ResponseParameters.newBuilder().setSize(1).setIntervalUs((int) (slowMillis() * 10_000)))
                .build());
        assertEquals(Status.Code.DEADLINE_EXCEEDED, ((Status) responses.poll(60, TimeUnit.SECONDS)).getCode());
    }

    @Test
    void customMetadata() throws Exception {
        byte[] trailing = {(byte) 0xab, (byte) 0xab, (byte) 0xab};
        Metadata extra = new Metadata();
        extra.put(InteropService.ECHO_INITIAL, "test_initial_metadata_value");
        extra.put(InteropService.ECHO_TRAILING, trailing);
        AtomicReference<Metadata> headers = new AtomicReference<>();
        AtomicReference<Metadata> trailers = new AtomicReference<>();
        blocking.withInterceptors(MetadataUtils.newAttachHeadersInterceptor(extra),
                        MetadataUtils.newCaptureMetadataInterceptor(headers, trailers))
                .unaryCall(SimpleRequest.newBuilder().setResponseSize(314159).setPayload(InteropService.zeros(271828)).build());
        assertEquals("test_initial_metadata_value", headers.get().get(InteropService.ECHO_INITIAL));
        assertArrayEquals(trailing, trailers.get().get(InteropService.ECHO_TRAILING));

        headers.set(null);
        trailers.set(null);
        Iterator<StreamingOutputCallResponse> it = blocking.withInterceptors(MetadataUtils.newAttachHeadersInterceptor(extra),
                        MetadataUtils.newCaptureMetadataInterceptor(headers, trailers))
                .streamingOutputCall(StreamingOutputCallRequest.newBuilder()
                        .addResponseParameters(ResponseParameters.newBuilder().setSize(314159)).build());
        assertEquals(314159, it.next().getPayload().getBody().size());
        assertTrue(!it.hasNext());
        assertEquals("test_initial_metadata_value", headers.get().get(InteropService.ECHO_INITIAL));
        assertArrayEquals(trailing, trailers.get().get(InteropService.ECHO_TRAILING));
    }

    @Test
    void repeatedMetadataKeysKeepEveryValueInOrder() {
        Metadata.Key<String> ascii = Metadata.Key.of("x-repeated", Metadata.ASCII_STRING_MARSHALLER);
        Metadata.Key<byte[]> bin = Metadata.Key.of("x-repeated-bin", Metadata.BINARY_BYTE_MARSHALLER);
        Metadata extra = new Metadata();
        extra.put(ascii, "one");
        extra.put(ascii, "two");
        extra.put(bin, new byte[]{1});
        extra.put(bin, new byte[]{2, 3});
        AtomicReference<Metadata> seen = new AtomicReference<>();
        io.grpc.ServerInterceptor capture = new io.grpc.ServerInterceptor() {
            @Override
            public <Q, R> io.grpc.ServerCall.Listener<Q> interceptCall(io.grpc.ServerCall<Q, R> call, Metadata h,
                                                                    io.grpc.ServerCallHandler<Q, R> next) {
                seen.set(h);
                return next.startCall(call, h);
            }
        };
        server.shutdownNow();
        try {
            server = serverBuilder().addService(io.grpc.ServerInterceptors.intercept(service, capture)).build().start();
            channel.shutdownNow();
            channel = newChannel().build();
            io.grpc.testing.integration.TestServiceGrpc.newBlockingStub(channel)
                    .withInterceptors(MetadataUtils.newAttachHeadersInterceptor(extra)).emptyCall(Empty.getDefaultInstance());
        } catch (java.io.IOException e) {
            throw new AssertionError(e);
        }
        List<String> values = new ArrayList<>();
        seen.get().getAll(ascii).forEach(values::add);
        assertEquals(List.of("one", "two"), values);
        List<byte[]> bins = new ArrayList<>();
        seen.get().getAll(bin).forEach(bins::add);
        assertEquals(2, bins.size());
        assertArrayEquals(new byte[]{1}, bins.get(0));
        assertArrayEquals(new byte[]{2, 3}, bins.get(1));
    }

    @Test
    void statusCodeAndMessage() throws Exception {
        checkStatus("test status message");
    }

    @Test
    void specialStatusMessage() throws Exception {
        checkStatus("\t\ntest with whitespace\r\nand Unicode BMP \u263A and non-BMP \uD83D\uDE08\t\n");
    }

    private void checkStatus(String message) throws Exception {
        EchoStatus echo = EchoStatus.newBuilder().setCode(2).setMessage(message).build();
        StatusRuntimeException e = org.junit.jupiter.api.Assertions.assertThrows(StatusRuntimeException.class,
                () -> blocking.unaryCall(SimpleRequest.newBuilder().setResponseStatus(echo).build()));
        assertEquals(Status.Code.UNKNOWN, e.getStatus().getCode());
        assertEquals(message, e.getStatus().getDescription());

        BlockingQueue<Object> responses = new LinkedBlockingQueue<>();
        StreamObserver<StreamingOutputCallRequest> requests = async.fullDuplexCall(queueing(responses));
        requests.onNext(StreamingOutputCallRequest.newBuilder().setResponseStatus(echo).build());
        requests.onCompleted();
        Status s = (Status) responses.poll(30, TimeUnit.SECONDS);
        assertEquals(Status.Code.UNKNOWN, s.getCode());
        assertEquals(message, s.getDescription());
    }

    @Test
    void unimplementedMethod() {
        assertFails(Status.Code.UNIMPLEMENTED, () -> blocking.unimplementedCall(Empty.getDefaultInstance()));
    }

    @Test
    void unimplementedService() {
        assertFails(Status.Code.UNIMPLEMENTED,
                () -> UnimplementedServiceGrpc.newBlockingStub(channel).unimplementedCall(Empty.getDefaultInstance()));
    }

    // ------------------------------------------------------------------ helpers

    static <T> StreamObserver<T> observer(CompletableFuture<T> done) {
        return new StreamObserver<>() {
            @Override
            public void onNext(T value) {
                done.complete(value);
            }

            @Override
            public void onError(Throwable t) {
                done.completeExceptionally(t);
            }

            @Override
            public void onCompleted() {
                done.complete(null);
            }
        };
    }

    /** Queues each response, then the failure's {@link Status} or the string "completed". */
    static <T> StreamObserver<T> queueing(BlockingQueue<Object> q) {
        return new StreamObserver<>() {
            @Override
            public void onNext(T value) {
                q.add(value);
            }

            @Override
            public void onError(Throwable t) {
                q.add(Status.fromThrowable(t));
            }

            @Override
            public void onCompleted() {
                q.add("completed");
            }
        };
    }

    static Status failure(CompletableFuture<?> f) throws Exception {
        try {
            Object v = f.get(30, TimeUnit.SECONDS);
            assertNull(v, "expected a failure, got " + v);
            throw new AssertionError("expected a failure");
        } catch (java.util.concurrent.ExecutionException e) {
            return Status.fromThrowable(e.getCause());
        }
    }

    /**
     * A gRPC call without a deadline has none: not rdmarpc's default stream timeout (here 200 ms), and
     * the server's handler sees no deadline.
     */
    @Test
    void aCallWithoutADeadlineHasNone() throws Exception {
        AtomicReference<Optional<Deadline>> seen = new AtomicReference<>();
        Server slow = serverBuilder().addService(new TestServiceGrpc.TestServiceImplBase() {
            @Override
            public void emptyCall(Empty request, StreamObserver<Empty> response) {
                seen.set(Optional.ofNullable(Context.current().getDeadline()));
                try {
                    Thread.sleep(600);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                response.onNext(request);
                response.onCompleted();
            }
        }).build().start();
        ManagedChannel ch = channelBuilder(host() + ":" + slow.getPort())
                .rdmarpc(b -> b.defaultStreamTimeout(Duration.ofMillis(200))).build();
        try {
            assertEquals(Empty.getDefaultInstance(), TestServiceGrpc.newBlockingStub(ch).emptyCall(Empty.getDefaultInstance()));
            assertEquals(Optional.empty(), seen.get(), "the server saw a deadline");
        } finally {
            ch.shutdownNow();
            slow.shutdownNow();
            ch.awaitTermination(10, TimeUnit.SECONDS);
            slow.awaitTermination(10, TimeUnit.SECONDS);
        }
    }
}
