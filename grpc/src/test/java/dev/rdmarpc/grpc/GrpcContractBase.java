package dev.rdmarpc.grpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.ServerInterceptors;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.testing.integration.TestServiceGrpc;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.function.Executable;

/**
 * One server with {@link InteropService} and one channel to it, over the transport a subclass
 * chooses; what the contract's tests share.
 */
abstract class GrpcContractBase {
    /** The largest message the server accepts in these tests. */
    static final int SERVER_MAX_INBOUND = 4 << 20;

    protected InteropService service;
    protected Server server;
    protected ManagedChannel channel;
    protected TestServiceGrpc.TestServiceBlockingStub blocking;
    protected TestServiceGrpc.TestServiceStub async;

    /** @return a server builder on a free port of the transport under test */
    protected abstract RdmarpcServerBuilder serverBuilder();

    /** @return a channel builder for {@code host:port} on the transport under test */
    protected abstract RdmarpcChannelBuilder channelBuilder(String target);

    /** @return the host the server listens on */
    protected abstract String host();

    /** @return how long the slow calls of these tests wait, longer on a slow (emulated) link */
    protected long slowMillis() {
        return 200;
    }

    @BeforeEach
    void startServer() throws Exception {
        service = new InteropService();
        server = serverBuilder().maxInboundMessageSize(SERVER_MAX_INBOUND)
                .addService(ServerInterceptors.intercept(service, new InteropService.EchoMetadata()))
                .build().start();
        channel = newChannel().build();
        blocking = TestServiceGrpc.newBlockingStub(channel);
        async = TestServiceGrpc.newStub(channel);
    }

    protected RdmarpcChannelBuilder newChannel() {
        return channelBuilder(host() + ":" + server.getPort());
    }

    @AfterEach
    void stopServer() throws Exception {
        if (channel != null) {
            channel.shutdownNow();
            channel.awaitTermination(10, TimeUnit.SECONDS);
        }
        if (server != null) {
            server.shutdownNow();
            server.awaitTermination(10, TimeUnit.SECONDS);
        }
    }

    static Status.Code failsWith(Executable call) {
        return assertThrows(StatusRuntimeException.class, call).getStatus().getCode();
    }

    static void assertFails(Status.Code code, Executable call) {
        assertEquals(code, failsWith(call));
    }
}
