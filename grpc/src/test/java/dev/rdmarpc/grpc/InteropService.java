package dev.rdmarpc.grpc;

import com.google.protobuf.ByteString;
import io.grpc.Context;
import io.grpc.Contexts;
import io.grpc.ForwardingServerCall.SimpleForwardingServerCall;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import io.grpc.testing.integration.EmptyProtos.Empty;
import io.grpc.testing.integration.Messages.EchoStatus;
import io.grpc.testing.integration.Messages.Payload;
import io.grpc.testing.integration.Messages.ResponseParameters;
import io.grpc.testing.integration.Messages.SimpleRequest;
import io.grpc.testing.integration.Messages.SimpleResponse;
import io.grpc.testing.integration.Messages.StreamingInputCallRequest;
import io.grpc.testing.integration.Messages.StreamingInputCallResponse;
import io.grpc.testing.integration.Messages.StreamingOutputCallRequest;
import io.grpc.testing.integration.Messages.StreamingOutputCallResponse;
import io.grpc.testing.integration.TestServiceGrpc;
import java.util.Iterator;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/**
 * The interop test description's TestService, written for these tests: unary calls answer with
 * the requested size and status, streams send what {@code response_parameters} ask for (waiting
 * {@code interval_us} before each, and only while the call is ready: a slow reader holds it back).
 */
final class InteropService extends TestServiceGrpc.TestServiceImplBase {
    static final Metadata.Key<String> ECHO_INITIAL = Metadata.Key.of("x-grpc-test-echo-initial", Metadata.ASCII_STRING_MARSHALLER);
    static final Metadata.Key<byte[]> ECHO_TRAILING = Metadata.Key.of("x-grpc-test-echo-trailing-bin",
            Metadata.BINARY_BYTE_MARSHALLER);
    static final Metadata.Key<String> ENCODING = Metadata.Key.of("grpc-encoding", Metadata.ASCII_STRING_MARSHALLER);
    static final Context.Key<Metadata> HEADERS = Context.key("headers");

    /** Streamed messages handed to gRPC so far (for the flow-control test). */
    final AtomicInteger streamed = new AtomicInteger();
    /** Calls whose context was cancelled (for the cancellation tests). */
    final AtomicInteger cancelled = new AtomicInteger();

    static Payload zeros(int size) {
        return Payload.newBuilder().setBody(ByteString.copyFrom(new byte[size])).build();
    }

    @Override
    public void emptyCall(Empty request, StreamObserver<Empty> out) {
        out.onNext(Empty.getDefaultInstance());
        out.onCompleted();
    }

    @Override
    public void unaryCall(SimpleRequest request, StreamObserver<SimpleResponse> out) {
        ServerCallStreamObserver<SimpleResponse> o = (ServerCallStreamObserver<SimpleResponse>) out;
        if (request.hasResponseStatus() && request.getResponseStatus().getCode() != 0) {
            out.onError(status(request.getResponseStatus()).asRuntimeException());
            return;
        }
        if (request.getExpectCompressed().getValue() && !"gzip".equals(HEADERS.get().get(ENCODING))) {
            out.onError(Status.INVALID_ARGUMENT.withDescription("expected a compressed request").asRuntimeException());
            return;
        }
        if (request.getResponseCompressed().getValue()) {
            o.setCompression("gzip");
        }
        o.setMessageCompression(request.getResponseCompressed().getValue());
        out.onNext(SimpleResponse.newBuilder().setPayload(zeros(request.getResponseSize())).build());
        out.onCompleted();
    }

    private static Status status(EchoStatus s) {
        return Status.fromCodeValue(s.getCode()).withDescription(s.getMessage());
    }

    @Override
    public void streamingOutputCall(StreamingOutputCallRequest request, StreamObserver<StreamingOutputCallResponse> out) {
        ServerCallStreamObserver<StreamingOutputCallResponse> o = (ServerCallStreamObserver<StreamingOutputCallResponse>) out;
        o.setOnCancelHandler(cancelled::incrementAndGet);
        Iterator<ResponseParameters> it = request.getResponseParametersList().iterator();
        boolean[] done = {false};
        Runnable pump = () -> {
            while (!done[0] && o.isReady() && it.hasNext() && !o.isCancelled()) {
                ResponseParameters p = it.next();
                if (p.getIntervalUs() > 0) {
                    LockSupport.parkNanos(p.getIntervalUs() * 1000L);
                }
                streamed.incrementAndGet();
                o.onNext(StreamingOutputCallResponse.newBuilder().setPayload(zeros(p.getSize())).build());
            }
            if (!done[0] && !it.hasNext() && !o.isCancelled()) {
                done[0] = true;
                if (request.hasResponseStatus() && request.getResponseStatus().getCode() != 0) {
                    o.onError(status(request.getResponseStatus()).asRuntimeException());
                } else {
                    o.onCompleted();
                }
            }
        };
        o.setOnReadyHandler(pump);
    }

    @Override
    public StreamObserver<StreamingInputCallRequest> streamingInputCall(StreamObserver<StreamingInputCallResponse> out) {
        ((ServerCallStreamObserver<StreamingInputCallResponse>) out).setOnCancelHandler(cancelled::incrementAndGet);
        return new StreamObserver<>() {
            private int size;

            @Override
            public void onNext(StreamingInputCallRequest value) {
                size += value.getPayload().getBody().size();
            }

            @Override
            public void onError(Throwable t) {
            }

            @Override
            public void onCompleted() {
                out.onNext(StreamingInputCallResponse.newBuilder().setAggregatedPayloadSize(size).build());
                out.onCompleted();
            }
        };
    }

    @Override
    public StreamObserver<StreamingOutputCallRequest> fullDuplexCall(StreamObserver<StreamingOutputCallResponse> out) {
        ((ServerCallStreamObserver<StreamingOutputCallResponse>) out).setOnCancelHandler(cancelled::incrementAndGet);
        return new StreamObserver<>() {
            private boolean failed;

            @Override
            public void onNext(StreamingOutputCallRequest request) {
                if (failed) {
                    return;
                }
                if (request.hasResponseStatus() && request.getResponseStatus().getCode() != 0) {
                    failed = true;
                    out.onError(status(request.getResponseStatus()).asRuntimeException());
                    return;
                }
                for (ResponseParameters p : request.getResponseParametersList()) {
                    if (p.getIntervalUs() > 0) {
                        LockSupport.parkNanos(p.getIntervalUs() * 1000L);
                    }
                    out.onNext(StreamingOutputCallResponse.newBuilder().setPayload(zeros(p.getSize())).build());
                }
            }

            @Override
            public void onError(Throwable t) {
            }

            @Override
            public void onCompleted() {
                if (!failed) {
                    out.onCompleted();
                }
            }
        };
    }

    /** Echoes the interop metadata keys and keeps the request headers in the call's context. */
    static final class EchoMetadata implements ServerInterceptor {
        @Override
        public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers, ServerCallHandler<Q, R> next) {
            String initial = headers.get(ECHO_INITIAL);
            byte[] trailing = headers.get(ECHO_TRAILING);
            ServerCall<Q, R> echoing = new SimpleForwardingServerCall<>(call) {
                @Override
                public void sendHeaders(Metadata responseHeaders) {
                    if (initial != null) {
                        responseHeaders.put(ECHO_INITIAL, initial);
                    }
                    super.sendHeaders(responseHeaders);
                }

                @Override
                public void close(Status status, Metadata trailers) {
                    if (trailing != null) {
                        trailers.put(ECHO_TRAILING, trailing);
                    }
                    super.close(status, trailers);
                }
            };
            return Contexts.interceptCall(Context.current().withValue(HEADERS, headers), echoing, headers, next);
        }
    }
}
