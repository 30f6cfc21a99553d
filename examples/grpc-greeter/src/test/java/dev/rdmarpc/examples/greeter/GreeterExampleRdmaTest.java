package dev.rdmarpc.examples.greeter;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.rdmarpc.testsupport.RdmaEnvironment;
import dev.rdmarpc.testsupport.RdmaTest;
import io.grpc.Server;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The example over RDMA, for real in the Soft-RoCE VM: the server on rxe1's address. */
@RdmaTest
@Timeout(600)
class GreeterExampleRdmaTest {
    @Test
    void greetsOverRdma() throws Exception {
        String address = RdmaEnvironment.discover().address1();
        Server server = GreeterServer.start(address, 0, true);
        try {
            assertEquals(List.of("hello Ada", "hello Ada #1", "hello Ada #2", "hello Ada #3"),
                    GreeterClient.greet(address, server.getPort(), "Ada", true));
        } finally {
            server.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
        }
    }
}
