package dev.rdmarpc.examples.greeter;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.grpc.Server;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The example's client against its server over TCP loopback: what a user who copies it sees. */
@Timeout(60)
class GreeterExampleTest {
    @Test
    void greetsOverTcp() throws Exception {
        Server server = GreeterServer.start("127.0.0.1", 0, false);
        try {
            assertEquals(List.of("hello Ada", "hello Ada #1", "hello Ada #2", "hello Ada #3"),
                    GreeterClient.greet("127.0.0.1", server.getPort(), "Ada", false));
        } finally {
            server.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
        }
    }
}
