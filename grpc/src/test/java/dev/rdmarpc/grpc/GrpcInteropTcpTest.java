package dev.rdmarpc.grpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.testing.integration.EmptyProtos.Empty;
import io.grpc.testing.integration.TestServiceGrpc;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The gRPC transport contract over TCP loopback, and what only TCP can show: an HTTP/2 client refused. */
@Timeout(120)
class GrpcInteropTcpTest extends GrpcTransportContract {
    @Override
    protected RdmarpcServerBuilder serverBuilder() {
        return RdmarpcServerBuilder.forAddress(new java.net.InetSocketAddress("127.0.0.1", 0));
    }

    @Override
    protected RdmarpcChannelBuilder channelBuilder(String target) {
        return RdmarpcChannelBuilder.forTarget(target);
    }

    @Override
    protected String host() {
        return "127.0.0.1";
    }

    @Test
    void anHttp2ClientIsRefusedQuickly() throws Exception {
        ManagedChannel h2 = NettyChannelBuilder.forAddress("127.0.0.1", server.getPort()).usePlaintext().build();
        try {
            long start = System.nanoTime();
            StatusRuntimeException e = org.junit.jupiter.api.Assertions.assertThrows(StatusRuntimeException.class,
                    () -> TestServiceGrpc.newBlockingStub(h2).withDeadlineAfter(60, TimeUnit.SECONDS)
                            .emptyCall(Empty.getDefaultInstance()));
            long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            assertEquals(Status.Code.UNAVAILABLE, e.getStatus().getCode(), e.getStatus().toString());
            assertTrue(millis < 10_000, "refused after " + millis + " ms");
        } finally {
            h2.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
        }
        assertEquals(Empty.getDefaultInstance(), blocking.emptyCall(Empty.getDefaultInstance()), "the server carries on");
    }

    /** TCP keeps the frames of received messages: parsed in place. */
    @Override
    protected int receiveCopiesPerMessage() {
        return 0;
    }
}
