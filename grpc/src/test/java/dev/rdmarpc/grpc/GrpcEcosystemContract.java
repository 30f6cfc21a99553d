package dev.rdmarpc.grpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.EquivalentAddressGroup;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.NameResolver;
import io.grpc.NameResolverProvider;
import io.grpc.NameResolverRegistry;
import io.grpc.Server;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.ServerInterceptors;
import io.grpc.Status;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.opentelemetry.GrpcOpenTelemetry;
import io.grpc.protobuf.services.HealthStatusManager;
import io.grpc.protobuf.services.ProtoReflectionServiceV1;
import io.grpc.reflection.v1.ServerReflectionGrpc;
import io.grpc.reflection.v1.ServerReflectionRequest;
import io.grpc.reflection.v1.ServerReflectionResponse;
import io.grpc.stub.StreamObserver;
import io.grpc.testing.integration.EmptyProtos.Empty;
import io.grpc.testing.integration.TestServiceGrpc;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.metrics.SdkMeterProvider;
import io.opentelemetry.sdk.metrics.data.MetricData;
import io.opentelemetry.sdk.testing.exporter.InMemoryMetricReader;
import java.net.InetSocketAddress;
import java.net.URI;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * gRPC's own machinery over this transport: round_robin over three servers, one of them killed,
 * retry and hedging policies from service config, the health and reflection services, OpenTelemetry
 * metrics.
 */
abstract class GrpcEcosystemContract {
    private static final AtomicInteger SCHEMES = new AtomicInteger();
    private final List<Server> servers = new ArrayList<>();
    private final List<ManagedChannel> channels = new ArrayList<>();

    protected abstract RdmarpcServerBuilder serverBuilder();

    protected abstract RdmarpcChannelBuilder channelBuilder(String target);

    protected abstract String host();

    @AfterEach
    void stop() throws Exception {
        for (ManagedChannel c : channels) {
            c.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
        }
        for (Server s : servers) {
            s.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
        }
    }

    private Server start(RdmarpcServerBuilder b) throws Exception {
        Server s = b.build().start();
        servers.add(s);
        return s;
    }

    private ManagedChannel channel(RdmarpcChannelBuilder b) {
        ManagedChannel c = b.build();
        channels.add(c);
        return c;
    }

    /** Counts the calls a server answered. */
    private static ServerInterceptor counting(AtomicInteger calls) {
        return new ServerInterceptor() {
            @Override
            public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata h, ServerCallHandler<Q, R> next) {
                calls.incrementAndGet();
                return next.startCall(call, h);
            }
        };
    }

    /** @return a target whose resolver gives the addresses of {@code ss}, through a provider registered for it */
    private String targetFor(List<Server> ss) {
        String scheme = "rdmarpctest" + SCHEMES.incrementAndGet();
        List<EquivalentAddressGroup> groups = ss.stream()
                .map(s -> new EquivalentAddressGroup(new InetSocketAddress(host(), s.getPort()))).toList();
        NameResolverRegistry.getDefaultRegistry().register(new NameResolverProvider() {
            @Override
            public NameResolver newNameResolver(URI targetUri, NameResolver.Args args) {
                return scheme.equals(targetUri.getScheme()) ? new NameResolver() {
                    @Override
                    public String getServiceAuthority() {
                        return "three";
                    }

                    @Override
                    public void start(Listener2 listener) {
                        listener.onResult(ResolutionResult.newBuilder().setAddressesOrError(
                                io.grpc.StatusOr.fromValue(groups)).build());
                    }

                    @Override
                    public void shutdown() {
                    }
                } : null;
            }

            @Override
            public String getDefaultScheme() {
                return scheme;
            }

            @Override
            protected boolean isAvailable() {
                return true;
            }

            @Override
            protected int priority() {
                return 5;
            }

            @Override
            public Collection<Class<? extends java.net.SocketAddress>> getProducedSocketAddressTypes() {
                return List.of(InetSocketAddress.class);
            }
        });
        return scheme + ":///three";
    }

    @Test
    void roundRobinSpreadsCallsOverThreeServersAndSkipsAKilledOne() throws Exception {
        AtomicInteger[] calls = {new AtomicInteger(), new AtomicInteger(), new AtomicInteger()};
        List<Server> three = new ArrayList<>();
        for (AtomicInteger c : calls) {
            three.add(start(serverBuilder().addService(ServerInterceptors.intercept(new InteropService(), counting(c)))));
        }
        ManagedChannel ch = channel(channelBuilder(targetFor(three)).defaultLoadBalancingPolicy("round_robin"));
        TestServiceGrpc.TestServiceBlockingStub stub = TestServiceGrpc.newBlockingStub(ch).withWaitForReady();
        for (int i = 0; i < 60; i++) {
            stub.withDeadlineAfter(30, TimeUnit.SECONDS).emptyCall(Empty.getDefaultInstance());
        }
        for (AtomicInteger c : calls) {
            assertTrue(c.get() > 0, "every server answered some: " + List.of(calls));
        }
        three.get(1).shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
        int before = calls[1].get();
        int failed = 0;
        for (int i = 0; i < 60; i++) {
            try {
                stub.withDeadlineAfter(30, TimeUnit.SECONDS).emptyCall(Empty.getDefaultInstance());
            } catch (io.grpc.StatusRuntimeException e) {
                failed++;
            }
        }
        assertEquals(0, failed, "no call is lost once the server is down");
        assertEquals(before, calls[1].get(), "the killed server got nothing more");
    }

    @Test
    void aCallThatADrainingServerRefusesIsSentAgainToAnotherWithoutARetryPolicy() throws Exception {
        AtomicInteger[] calls = {new AtomicInteger(), new AtomicInteger()};
        List<Server> two = new ArrayList<>();
        for (AtomicInteger c : calls) {
            two.add(start(serverBuilder().addService(ServerInterceptors.intercept(new InteropService(), counting(c)))));
        }
        ManagedChannel ch = channel(channelBuilder(targetFor(two)).defaultLoadBalancingPolicy("round_robin"));
        TestServiceGrpc.TestServiceBlockingStub stub = TestServiceGrpc.newBlockingStub(ch).withWaitForReady();
        for (int i = 0; i < 10; i++) {
            stub.withDeadlineAfter(30, TimeUnit.SECONDS).emptyCall(Empty.getDefaultInstance());
        }
        assertTrue(calls[0].get() > 0 && calls[1].get() > 0, "both servers answered some: " + List.of(calls));
        // a stream held open keeps server 0 draining after shutdown(): it refuses new calls (SHUTTING_DOWN)
        ManagedChannel direct = channel(channelBuilder(host() + ":" + two.get(0).getPort()));
        // connected first: the held stream then waits on nothing but server 0
        TestServiceGrpc.newBlockingStub(direct).withWaitForReady().withDeadlineAfter(30, TimeUnit.SECONDS)
                .emptyCall(Empty.getDefaultInstance());
        int before = calls[0].get();
        BlockingQueue<Object> heldResponses = new LinkedBlockingQueue<>();
        StreamObserver<io.grpc.testing.integration.Messages.StreamingOutputCallRequest> held =
                TestServiceGrpc.newStub(direct).withWaitForReady().fullDuplexCall(GrpcInteropContract.queueing(heldResponses));
        held.onNext(io.grpc.testing.integration.Messages.StreamingOutputCallRequest.getDefaultInstance());
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (calls[0].get() == before && System.nanoTime() < end) {
            Thread.sleep(5);
        }
        assertEquals(before + 1, calls[0].get(), "the held stream reached server 0; the channel is "
                + direct.getState(false) + ", the stream saw " + heldResponses);
        two.get(0).shutdown();
        int failed = 0;
        io.grpc.StatusRuntimeException first = null;
        for (int i = 0; i < 20; i++) {
            try {
                stub.withDeadlineAfter(30, TimeUnit.SECONDS).emptyCall(Empty.getDefaultInstance());
            } catch (io.grpc.StatusRuntimeException e) {
                failed++;
                first = first == null ? e : first;
            }
        }
        assertEquals(0, failed, "a refused call goes to the other server; the first failure: " + first);
        assertEquals(before + 1, calls[0].get(), "the draining server started no new call");
        held.onCompleted();
    }

    @Test
    void retryPolicyTurnsAFirstUnavailableIntoSuccess() throws Exception {
        AtomicInteger attempts = new AtomicInteger();
        ServerInterceptor failFirst = new ServerInterceptor() {
            @Override
            public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata h, ServerCallHandler<Q, R> next) {
                if (attempts.incrementAndGet() == 1) {
                    call.close(Status.UNAVAILABLE.withDescription("first attempt fails"), new Metadata());
                    return new ServerCall.Listener<>() {
                    };
                }
                return next.startCall(call, h);
            }
        };
        Server s = start(serverBuilder().addService(ServerInterceptors.intercept(new InteropService(), failFirst)));
        Map<String, Object> retry = Map.of("maxAttempts", 3.0, "initialBackoff", "0.01s", "maxBackoff", "0.1s",
                "backoffMultiplier", 2.0, "retryableStatusCodes", List.of("UNAVAILABLE"));
        Map<String, Object> config = Map.of("methodConfig", List.of(Map.of(
                "name", List.of(Map.of("service", "grpc.testing.TestService")), "retryPolicy", retry)));
        ManagedChannel ch = channel(channelBuilder(host() + ":" + s.getPort()).defaultServiceConfig(config).enableRetry());
        assertEquals(Empty.getDefaultInstance(), TestServiceGrpc.newBlockingStub(ch).emptyCall(Empty.getDefaultInstance()));
        assertEquals(2, attempts.get());
    }

    @Test
    void hedgingPolicyAnswersFromTheSecondAttemptAndCancelsTheFirst() throws Exception {
        AtomicInteger attempts = new AtomicInteger();
        java.util.concurrent.CountDownLatch firstCancelled = new java.util.concurrent.CountDownLatch(1);
        ServerInterceptor holdFirst = new ServerInterceptor() {
            @Override
            public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata h, ServerCallHandler<Q, R> next) {
                if (attempts.incrementAndGet() == 1) {
                    call.request(1);
                    return new ServerCall.Listener<>() {
                        @Override
                        public void onCancel() {
                            firstCancelled.countDown();
                        }
                    };
                }
                return next.startCall(call, h);
            }
        };
        Server s = start(serverBuilder().addService(ServerInterceptors.intercept(new InteropService(), holdFirst)));
        Map<String, Object> hedging = Map.of("maxAttempts", 2.0, "hedgingDelay", "0.1s");
        Map<String, Object> config = Map.of("methodConfig", List.of(Map.of(
                "name", List.of(Map.of("service", "grpc.testing.TestService")), "hedgingPolicy", hedging)));
        ManagedChannel ch = channel(channelBuilder(host() + ":" + s.getPort()).defaultServiceConfig(config).enableRetry());
        assertEquals(Empty.getDefaultInstance(), TestServiceGrpc.newBlockingStub(ch).withDeadlineAfter(60, TimeUnit.SECONDS)
                .emptyCall(Empty.getDefaultInstance()));
        assertEquals(2, attempts.get());
        assertTrue(firstCancelled.await(30, TimeUnit.SECONDS), "the losing attempt was cancelled on the server");
    }

    @Test
    void healthAndReflectionServicesAnswer() throws Exception {
        HealthStatusManager health = new HealthStatusManager();
        Server s = start(serverBuilder().addService(new InteropService()).addService(health.getHealthService())
                .addService(ProtoReflectionServiceV1.newInstance()));
        health.setStatus("grpc.testing.TestService", HealthCheckResponse.ServingStatus.SERVING);
        ManagedChannel ch = channel(channelBuilder(host() + ":" + s.getPort()));
        assertEquals(HealthCheckResponse.ServingStatus.SERVING, HealthGrpc.newBlockingStub(ch)
                .check(HealthCheckRequest.newBuilder().setService("grpc.testing.TestService").build()).getStatus());

        BlockingQueue<Object> responses = new LinkedBlockingQueue<>();
        StreamObserver<ServerReflectionRequest> requests = ServerReflectionGrpc.newStub(ch)
                .serverReflectionInfo(GrpcInteropContract.queueing(responses));
        requests.onNext(ServerReflectionRequest.newBuilder().setListServices("").build());
        Object r = responses.poll(30, TimeUnit.SECONDS);
        requests.onCompleted();
        Set<String> names = ((ServerReflectionResponse) r).getListServicesResponse().getServiceList().stream()
                .map(x -> x.getName()).collect(Collectors.toSet());
        assertTrue(names.contains("grpc.testing.TestService"), names.toString());
        assertTrue(names.contains("grpc.health.v1.Health"), names.toString());
    }

    @Test
    void openTelemetryRecordsPerCallMetrics() throws Exception {
        InMemoryMetricReader reader = InMemoryMetricReader.create();
        OpenTelemetrySdk sdk = OpenTelemetrySdk.builder()
                .setMeterProvider(SdkMeterProvider.builder().registerMetricReader(reader).build()).build();
        GrpcOpenTelemetry otel = GrpcOpenTelemetry.newBuilder().sdk(sdk).build();
        RdmarpcServerBuilder sb = serverBuilder().addService(new InteropService());
        otel.configureServerBuilder(sb);
        Server s = start(sb);
        RdmarpcChannelBuilder cb = channelBuilder(host() + ":" + s.getPort());
        otel.configureChannelBuilder(cb);
        ManagedChannel ch = channel(cb);
        for (int i = 0; i < 3; i++) {
            TestServiceGrpc.newBlockingStub(ch).emptyCall(Empty.getDefaultInstance());
        }
        Set<String> names = reader.collectAllMetrics().stream().map(MetricData::getName).collect(Collectors.toSet());
        for (String m : List.of("grpc.client.attempt.started", "grpc.client.attempt.duration", "grpc.client.call.duration",
                "grpc.server.call.started", "grpc.server.call.duration")) {
            assertTrue(names.contains(m), m + " in " + names);
        }
        sdk.close();
    }
}
