package dev.rdmarpc.rpc;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.rdmarpc.rpc.protocol.FrameDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** {@link CallControlContract} over TCP loopback, and the timeout field of a request written by hand. */
@Timeout(300)
class CallControlTcpTest extends CallControlContract {
    @Override
    protected RpcServer.Builder serverBuilder() {
        return RpcServer.builder().bind(new InetSocketAddress("127.0.0.1", 0));
    }

    @Override
    protected RpcClient connect(RpcServer server) {
        return RpcClient.connect(server.address());
    }

    @Override
    protected Duration cancelBound() {
        return Duration.ofMillis(500);
    }

    @Override
    protected Duration chainDeadline() {
        return Duration.ofMillis(300);
    }

    /**
     * A request whose timeout field says 1 microsecond: by the time a thread takes the blocking call,
     * its deadline has passed, so the handler never runs and the answer is DEADLINE_EXCEEDED; an
     * inline method still runs (it cannot be stopped) and sees its time gone.
     */
    @Test
    void aBlockingCallPastItsDeadlineBeforeItStartsIsNotRun() throws Exception {
        try (SocketChannel ch = TestSupport.open(server.address())) {
            byte[] wait = TestSupport.requestFrame(7, WAIT.id(), "x".getBytes(java.nio.charset.StandardCharsets.UTF_8), new byte[0]);
            MemorySegment.ofArray(wait).set(ValueLayout.JAVA_INT_UNALIGNED, FrameDescriptor.TIMEOUT_OFFSET, 1);
            TestSupport.write(ch, wait);
            ByteBuffer response = TestSupport.readFrame(ch);
            assertEquals(7, response.getLong(FrameDescriptor.REQUEST_ID_OFFSET));
            assertEquals(Status.DEADLINE_EXCEEDED.code(), response.getShort(FrameDescriptor.STATUS_OFFSET));
            assertEquals(1, started.getCount(), "the handler never ran");
            assertEquals(1, server.metrics().timeouts());
        }
    }
}
