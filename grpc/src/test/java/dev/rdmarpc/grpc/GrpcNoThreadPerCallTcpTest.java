package dev.rdmarpc.grpc;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.google.common.util.concurrent.MoreExecutors;
import com.google.protobuf.ByteString;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.stub.StreamObserver;
import io.grpc.testing.integration.Messages.Payload;
import io.grpc.testing.integration.Messages.SimpleRequest;
import io.grpc.testing.integration.Messages.SimpleResponse;
import io.grpc.testing.integration.Messages.StreamingOutputCallRequest;
import io.grpc.testing.integration.Messages.StreamingOutputCallResponse;
import io.grpc.testing.integration.TestServiceGrpc;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The transport runs gRPC calls without a thread per call or per message: with gRPC's direct
 * executor on both ends (so that gRPC itself starts none), a burst of unary and bidirectional calls
 * after a warm-up starts no thread at all, platform or virtual, as JFR's thread-start events show.
 */
@Timeout(120)
class GrpcNoThreadPerCallTcpTest {
    static {
        // the tests run in the transport's module, which does not read jdk.jfr
        ModuleLayer.boot().findModule("jdk.jfr").ifPresent(GrpcNoThreadPerCallTcpTest.class.getModule()::addReads);
    }

    @Test
    void callsStartNoThreads(@org.junit.jupiter.api.io.TempDir Path dir) throws Exception {
        Server server = RdmarpcServerBuilder.forAddress(new java.net.InetSocketAddress("127.0.0.1", 0))
                .directExecutor().addService(new InteropService()).build().start();
        ManagedChannel channel = RdmarpcChannelBuilder.forTarget("127.0.0.1:" + server.getPort())
                .directExecutor().build();
        try {
            TestServiceGrpc.TestServiceStub stub = TestServiceGrpc.newStub(channel);
            burst(stub, 20); // warm-up: the connection, gRPC's and rdmarpc's lazily started parts
            try (Recording r = new Recording()) {
                r.enable("jdk.ThreadStart");
                r.enable("jdk.VirtualThreadStart");
                r.start();
                burst(stub, 200);
                r.stop();
                Path file = dir.resolve("threads.jfr");
                r.dump(file);
                List<RecordedEvent> started = RecordingFile.readAllEvents(file);
                assertEquals(List.of(), started.stream().map(e -> e.getEventType().getName() + " "
                        + (e.getThread() == null ? "?" : e.getThread().getJavaName())).toList(),
                        "threads started during 200 unary and 200 bidirectional calls");
                Files.deleteIfExists(file);
            }
        } finally {
            channel.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
            server.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
        }
    }

    /** {@code n} unary calls and {@code n} bidirectional calls of three messages, all at once. */
    private static void burst(TestServiceGrpc.TestServiceStub stub, int n) throws Exception {
        CountDownLatch done = new CountDownLatch(2 * n);
        CompletableFuture<Throwable> failure = new CompletableFuture<>();
        SimpleRequest req = SimpleRequest.newBuilder().setResponseSize(64)
                .setPayload(Payload.newBuilder().setBody(ByteString.copyFrom(new byte[64]))).build();
        for (int i = 0; i < n; i++) {
            stub.unaryCall(req, new StreamObserver<>() {
                @Override
                public void onNext(SimpleResponse value) {
                }

                @Override
                public void onError(Throwable t) {
                    failure.complete(t);
                    done.countDown();
                }

                @Override
                public void onCompleted() {
                    done.countDown();
                }
            });
            StreamObserver<StreamingOutputCallRequest> out = stub.fullDuplexCall(new StreamObserver<>() {
                @Override
                public void onNext(StreamingOutputCallResponse value) {
                }

                @Override
                public void onError(Throwable t) {
                    failure.complete(t);
                    done.countDown();
                }

                @Override
                public void onCompleted() {
                    done.countDown();
                }
            });
            for (int k = 0; k < 3; k++) {
                out.onNext(StreamingOutputCallRequest.newBuilder()
                        .addResponseParameters(io.grpc.testing.integration.Messages.ResponseParameters.newBuilder().setSize(32))
                        .build());
            }
            out.onCompleted();
        }
        if (!done.await(60, TimeUnit.SECONDS)) {
            throw new AssertionError("calls did not end: " + done.getCount() + " left");
        }
        if (failure.isDone()) {
            throw new AssertionError("a call failed", failure.get());
        }
    }
}
