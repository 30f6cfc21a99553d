package dev.rdmarpc.grpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.Status;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import io.grpc.stub.StreamObserver;
import io.grpc.testing.integration.EmptyProtos.Empty;
import io.grpc.testing.integration.Messages.ResponseParameters;
import io.grpc.testing.integration.Messages.SimpleRequest;
import io.grpc.testing.integration.Messages.SimpleResponse;
import io.grpc.testing.integration.Messages.StreamingOutputCallRequest;
import io.grpc.testing.integration.Messages.StreamingOutputCallResponse;
import io.grpc.testing.integration.TestServiceGrpc;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * The transport's own promises beyond the interop cases: message size limits at and one byte over,
 * deadlines on a server stream, flow control with a slow reader, graceful and abrupt shutdown, and
 * the copies a message costs. Subclassed per transport with the interop cases it inherits.
 */
abstract class GrpcTransportContract extends GrpcInteropContract {
    /** @return a request whose serialized size is exactly {@code size} bytes */
    static SimpleRequest requestOfSize(int size) {
        return requestOfSize(size, 0);
    }

    /** @return a request for {@code responseSize} bytes whose serialized size is exactly {@code size} bytes */
    static SimpleRequest requestOfSize(int size, int responseSize) {
        int payload = size;
        SimpleRequest r;
        do {
            r = SimpleRequest.newBuilder().setResponseSize(responseSize).setPayload(InteropService.zeros(payload)).build();
            payload -= r.getSerializedSize() - size;
        } while (r.getSerializedSize() != size && payload > 0);
        assertEquals(size, r.getSerializedSize());
        return r;
    }

    /**
     * Sixteen unary calls of 4 KiB in flight on one channel, 1,000 in all, with both sides' gRPC on the
     * I/O threads (directExecutor, as the bench runs it): several calls' frames arrive in one receive,
     * and the server lets each request's frame go as soon as it has parsed it, while the frames after it
     * are still to be read from the same buffer. Every call must answer (over RDMA the receive buffer went
     * back to the pool under the frames still to be read, and the client saw "wrong magic").
     */
    @Test
    void manyUnaryCallsInFlightOnOneChannelAllAnswer() throws Exception {
        Server direct = serverBuilder().directExecutor().addService(new InteropService()).build().start();
        ManagedChannel ch = channelBuilder(host() + ":" + direct.getPort()).directExecutor().build();
        try {
            TestServiceGrpc.TestServiceStub stub = TestServiceGrpc.newStub(ch);
            int total = 1000;
            Semaphore window = new Semaphore(16);
            CountDownLatch answered = new CountDownLatch(total);
            AtomicReference<Throwable> failure = new AtomicReference<>();
            SimpleRequest request = requestOfSize(4096, 4096);
            for (int i = 0; i < total && failure.get() == null; i++) {
                assertTrue(window.tryAcquire(120, TimeUnit.SECONDS), "no answer for 2 minutes after " + i + " calls");
                stub.unaryCall(request, new StreamObserver<SimpleResponse>() {
                    @Override
                    public void onNext(SimpleResponse r) {
                        if (r.getPayload().getBody().size() != 4096) {
                            failure.compareAndSet(null, new AssertionError("a response of " + r.getPayload().getBody().size()));
                        }
                    }

                    @Override
                    public void onError(Throwable t) {
                        failure.compareAndSet(null, t);
                        window.release();
                        answered.countDown();
                    }

                    @Override
                    public void onCompleted() {
                        window.release();
                        answered.countDown();
                    }
                });
            }
            Throwable f = failure.get();
            if (f != null) {
                throw new AssertionError("a call failed: " + f, f);
            }
            assertTrue(answered.await(120, TimeUnit.SECONDS), "calls left unanswered: " + answered.getCount());
            assertEquals(null, failure.get());
        } finally {
            ch.shutdownNow();
            direct.shutdownNow();
            ch.awaitTermination(10, TimeUnit.SECONDS);
            direct.awaitTermination(10, TimeUnit.SECONDS);
        }
    }

    /** @return a response size whose serialized SimpleResponse is exactly {@code size} bytes */
    static int responsePayloadFor(int size) {
        int payload = size;
        while (true) {
            int s = io.grpc.testing.integration.Messages.SimpleResponse.newBuilder()
                    .setPayload(InteropService.zeros(payload)).build().getSerializedSize();
            if (s == size) {
                return payload;
            }
            payload -= s - size;
        }
    }

    @Test
    void requestAtTheServersMaxInboundSizeArrivesOneByteOverFailsThatCallOnly() {
        assertEquals(0, blocking.unaryCall(requestOfSize(SERVER_MAX_INBOUND)).getPayload().getBody().size());
        Status.Code over = failsWith(() -> blocking.unaryCall(requestOfSize(SERVER_MAX_INBOUND + 1)));
        assertEquals(Status.Code.RESOURCE_EXHAUSTED, over);
        assertEquals(Empty.getDefaultInstance(), blocking.emptyCall(Empty.getDefaultInstance()), "the connection carries on");
    }

    @Test
    void responseAtTheChannelsMaxInboundSizeArrivesOneByteOverFailsThatCallOnly() throws Exception {
        int max = 1 << 20;
        ManagedChannel small = newChannel().maxInboundMessageSize(max).build();
        try {
            TestServiceGrpc.TestServiceBlockingStub stub = TestServiceGrpc.newBlockingStub(small);
            int at = responsePayloadFor(max);
            assertEquals(at, stub.unaryCall(SimpleRequest.newBuilder().setResponseSize(at).build()).getPayload().getBody().size());
            int over = responsePayloadFor(max + 1);
            assertFails(Status.Code.RESOURCE_EXHAUSTED, () -> stub.unaryCall(SimpleRequest.newBuilder().setResponseSize(over).build()));
            assertEquals(Empty.getDefaultInstance(), stub.emptyCall(Empty.getDefaultInstance()));
        } finally {
            small.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
        }
    }

    @Test
    void maxOutboundSizeAtPassesOneByteOverFails() {
        int max = 64 * 1024;
        TestServiceGrpc.TestServiceBlockingStub limited = blocking.withMaxOutboundMessageSize(max);
        assertEquals(0, limited.unaryCall(requestOfSize(max)).getPayload().getBody().size());
        assertFails(Status.Code.RESOURCE_EXHAUSTED, () -> limited.unaryCall(requestOfSize(max + 1)));
        assertEquals(Empty.getDefaultInstance(), limited.emptyCall(Empty.getDefaultInstance()));
    }

    @Test
    void veryLargeRequestAndResponseAtTheMaximum() {
        int at = responsePayloadFor(4 << 20);
        assertEquals(at, blocking.withMaxInboundMessageSize(4 << 20).unaryCall(requestOfSize(SERVER_MAX_INBOUND, at))
                .getPayload().getBody().size());
    }

    @Test
    void deadlineExceededOnAServerStream() {
        StreamingOutputCallRequest.Builder req = StreamingOutputCallRequest.newBuilder();
        for (int i = 0; i < 20; i++) {
            req.addResponseParameters(ResponseParameters.newBuilder().setSize(10).setIntervalUs((int) (slowMillis() * 1000)));
        }
        java.util.Iterator<StreamingOutputCallResponse> it = blocking.withDeadlineAfter(slowMillis() * 3, TimeUnit.MILLISECONDS)
                .streamingOutputCall(req.build());
        int[] got = {0};
        assertFails(Status.Code.DEADLINE_EXCEEDED, () -> {
            while (it.hasNext()) {
                it.next();
                got[0]++;
            }
        });
        assertTrue(got[0] < 20, "the stream ended early: " + got[0]);
    }

    @Test
    void slowReaderHoldsTheServerStreamBack() throws Exception {
        int size = 64 * 1024;
        int count = 200;
        AtomicReference<ClientCallStreamObserver<StreamingOutputCallRequest>> call = new AtomicReference<>();
        BlockingQueue<Object> responses = new LinkedBlockingQueue<>();
        streamToASlowReader(size, count, call, responses);
        int read = 0;
        for (; read < 5; read++) {
            assertTrue(responses.poll(30, TimeUnit.SECONDS) instanceof StreamingOutputCallResponse);
            call.get().request(1);
        }
        Thread.sleep(slowMillis() * 3);
        int ahead = service.streamed.get() - read;
        // the stream's window (1 MiB: 16 messages), the on-ready threshold's message and one in hand, with room
        assertTrue(ahead <= 24, "the server ran " + ahead + " messages ahead of a reader that stopped");
        call.get().request(Integer.MAX_VALUE);
        Object o;
        while ((o = responses.poll(60, TimeUnit.SECONDS)) instanceof StreamingOutputCallResponse) {
            read++;
        }
        assertEquals("completed", o);
        assertEquals(count, read);
    }

    @Test
    void shutdownLetsCallsInFlightEndAndRefusesNewOnes() throws Exception {
        StreamingOutputCallRequest.Builder req = StreamingOutputCallRequest.newBuilder();
        for (int i = 0; i < 3; i++) {
            req.addResponseParameters(ResponseParameters.newBuilder().setSize(100).setIntervalUs((int) (slowMillis() * 1000)));
        }
        BlockingQueue<Object> responses = new LinkedBlockingQueue<>();
        async.streamingOutputCall(req.build(), queueing(responses));
        assertTrue(responses.poll(30, TimeUnit.SECONDS) instanceof StreamingOutputCallResponse);
        server.shutdown();
        assertFails(Status.Code.UNAVAILABLE, () -> blocking.withDeadlineAfter(10, TimeUnit.SECONDS)
                .emptyCall(Empty.getDefaultInstance()));
        assertTrue(responses.poll(30, TimeUnit.SECONDS) instanceof StreamingOutputCallResponse);
        assertTrue(responses.poll(30, TimeUnit.SECONDS) instanceof StreamingOutputCallResponse);
        assertEquals("completed", responses.poll(30, TimeUnit.SECONDS));
        assertTrue(server.awaitTermination(30, TimeUnit.SECONDS));
    }

    @Test
    void shutdownNowCancelsCallsInFlight() throws Exception {
        StreamingOutputCallRequest.Builder req = StreamingOutputCallRequest.newBuilder();
        for (int i = 0; i < 100; i++) {
            req.addResponseParameters(ResponseParameters.newBuilder().setSize(100).setIntervalUs((int) (slowMillis() * 1000)));
        }
        BlockingQueue<Object> responses = new LinkedBlockingQueue<>();
        async.streamingOutputCall(req.build(), queueing(responses));
        assertTrue(responses.poll(30, TimeUnit.SECONDS) instanceof StreamingOutputCallResponse);
        server.shutdownNow();
        assertTrue(server.awaitTermination(30, TimeUnit.SECONDS));
        Object o;
        while ((o = responses.poll(30, TimeUnit.SECONDS)) instanceof StreamingOutputCallResponse) {
            // messages sent before the cancel
        }
        assertTrue(o instanceof Status s && s.getCode() == Status.Code.UNAVAILABLE, "ended with " + o);
    }

    @Test
    void channelShutdownNowCancelsItsCalls() throws Exception {
        CompletableFuture<io.grpc.testing.integration.Messages.StreamingInputCallResponse> done = new CompletableFuture<>();
        async.streamingInputCall(observer(done));
        Thread.sleep(slowMillis());
        channel.shutdownNow();
        assertEquals(Status.Code.UNAVAILABLE, failure(done).getCode());
        assertTrue(channel.awaitTermination(10, TimeUnit.SECONDS));
    }

    /**
     * @return copies of a received message's bytes out of the receive buffer by this transport: 0 where
     *         it keeps the frame for the message (TCP, RDMA with private receive queues), 1 where it does not
     */
    protected abstract int receiveCopiesPerMessage();

    @Test
    void aProtobufMessageIsCopiedOnceOnSendAndAsReceivedAsTheTransportKeepsFrames() {
        blocking.unaryCall(SimpleRequest.newBuilder().setResponseSize(1000).build()); // warm: the connection is up
        long sent = MessageCopies.sent();
        long sendCopies = MessageCopies.sendCopies();
        long received = MessageCopies.received();
        long receiveCopies = MessageCopies.receiveCopies();
        blocking.unaryCall(SimpleRequest.newBuilder().setResponseSize(100_000).setPayload(InteropService.zeros(50_000)).build());
        assertEquals(2, MessageCopies.sent() - sent, "request and response");
        assertEquals(2, MessageCopies.received() - received);
        assertEquals(2, MessageCopies.sendCopies() - sendCopies, "each drained straight into its send buffer");
        assertEquals(2 * receiveCopiesPerMessage(), MessageCopies.receiveCopies() - receiveCopies,
                "each parsed from its receive buffer (0) or copied out of it once (1): " + receiveCopiesPerMessage());
        assertEquals(0, MessageCopies.heldNow(), "every receive buffer went back once the messages were parsed");
    }

    /**
     * A reader that stops leaves messages in its stream's window, kept in their receive buffers (as many as
     * the transport keeps, copied beyond); cancelling the call, or the channel's shutdownNow, drops them and
     * every receive buffer goes back.
     */
    @Test
    void messagesLeftUnreadGiveTheirReceiveBuffersBackOnCancelAndShutdownNow() throws Exception {
        long wait = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (MessageCopies.heldNow() != 0 && System.nanoTime() < wait) {
            Thread.sleep(5); // an earlier test's last messages, parsed on gRPC's executor
        }
        assertEquals(0, MessageCopies.heldNow());
        for (boolean cancel : new boolean[] {true, false}) {
            AtomicReference<ClientCallStreamObserver<StreamingOutputCallRequest>> call = new AtomicReference<>();
            BlockingQueue<Object> responses = new LinkedBlockingQueue<>();
            streamToASlowReader(2000, 40, call, responses);
            assertTrue(responses.poll(30, TimeUnit.SECONDS) instanceof StreamingOutputCallResponse);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (service.streamed.get() < 40 && System.nanoTime() < deadline) {
                Thread.sleep(10);
            }
            Thread.sleep(slowMillis());
            if (receiveCopiesPerMessage() == 0) {
                assertTrue(MessageCopies.heldNow() > 0, "messages wait unread in their receive buffers");
            }
            if (cancel) {
                call.get().cancel("the reader stops", null);
            } else {
                channel.shutdownNow();
            }
            assertTrue(responses.poll(30, TimeUnit.SECONDS) instanceof Status);
            deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (MessageCopies.heldNow() != 0 && System.nanoTime() < deadline) {
                Thread.sleep(5);
            }
            assertEquals(0, MessageCopies.heldNow(), "every receive buffer went back (" + (cancel ? "cancel" : "shutdownNow") + ")");
            service.streamed.set(0);
        }
    }

    /**
     * Asks for {@code count} server-stream responses of {@code size} bytes and reads them one at a time:
     * the call goes to {@code call} (only the first message is requested), each response, the error's
     * status or "completed" to {@code responses}.
     */
    private void streamToASlowReader(int size, int count,
                                     AtomicReference<ClientCallStreamObserver<StreamingOutputCallRequest>> call,
                                     BlockingQueue<Object> responses) {
        StreamingOutputCallRequest.Builder req = StreamingOutputCallRequest.newBuilder();
        for (int i = 0; i < count; i++) {
            req.addResponseParameters(ResponseParameters.newBuilder().setSize(size));
        }
        async.streamingOutputCall(req.build(), new ClientResponseObserver<StreamingOutputCallRequest, StreamingOutputCallResponse>() {
            @Override
            public void beforeStart(ClientCallStreamObserver<StreamingOutputCallRequest> r) {
                call.set(r);
                r.disableAutoRequestWithInitial(1);
            }

            @Override
            public void onNext(StreamingOutputCallResponse value) {
                responses.add(value);
            }

            @Override
            public void onError(Throwable t) {
                responses.add(Status.fromThrowable(t));
            }

            @Override
            public void onCompleted() {
                responses.add("completed");
            }
        });
    }
}
