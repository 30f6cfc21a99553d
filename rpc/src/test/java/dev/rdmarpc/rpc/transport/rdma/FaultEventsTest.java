package dev.rdmarpc.rpc.transport.rdma;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.rdmarpc.ibverbs.verbs.AsyncEvent;
import dev.rdmarpc.ibverbs.verbs.AsyncEventType;
import dev.rdmarpc.rpc.Attachment;
import dev.rdmarpc.rpc.Metadata;
import dev.rdmarpc.rpc.Method;
import dev.rdmarpc.rpc.RpcException;
import dev.rdmarpc.rpc.RpcServer;
import dev.rdmarpc.rpc.Status;
import dev.rdmarpc.rpc.codec.Codecs;
import dev.rdmarpc.rpc.core.client.CallKind;
import dev.rdmarpc.rpc.core.client.ClientCore;
import dev.rdmarpc.rpc.core.Counters;
import dev.rdmarpc.rpc.protocol.FrameDescriptor;
import dev.rdmarpc.rpc.protocol.MetadataBlock;
import dev.rdmarpc.rpc.transport.Connection;
import dev.rdmarpc.testsupport.RdmaTest;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Queue pair and device failures (issue 15, point 5): the transport closes the connections an
 * async event names at once, with its reason, and no other. Soft-RoCE raises neither event (it has
 * no hardware to fail; a port going down, which it does raise, is {@link PortDownTest}'s), so this
 * test hands the transport's device table the event the verbs layer would deliver: a real
 * connection's own queue pair for {@code IBV_EVENT_QP_FATAL}, its real device for
 * {@code IBV_EVENT_DEVICE_FATAL}. Everything from the event on is the transport's real path.
 */
@RdmaTest
@Timeout(180)
class FaultEventsTest {
    static final Method<byte[], byte[]> ECHO = Method.of("echo", Codecs.BYTES, Codecs.BYTES);
    static final Method<byte[], byte[]> HANG = Method.of("hang", Codecs.BYTES, Codecs.BYTES);

    /** A client connection made the way RpcClient makes one, keeping its transport connection at hand. */
    private record Client(ClientCore core, RdmaConnection connection) {
        byte[] echo(byte[] b) {
            return core.start(ECHO, b, Attachment.NONE, null, 0, CallKind.CALL, Metadata.EMPTY).await();
        }

        CompletableFuture<byte[]> hang() {
            return core.start(HANG, new byte[8], Attachment.NONE, null, TimeUnit.SECONDS.toNanos(90),
                    CallKind.CALL_ASYNC, Metadata.EMPTY).future();
        }
    }

    private static Client connect(RdmaTransport t, RpcServer server) throws Exception {
        int max = FrameDescriptor.DEFAULT_MAX_FRAME_LENGTH;
        ClientCore core = new ClientCore(new Counters(), 16, max, TimeUnit.SECONDS.toNanos(30), 8 << 20, t.name(),
                MetadataBlock.DEFAULT_MAX_BYTES, List.of());
        Connection c = t.connect(server.address(), max, core.frameHandler(), Duration.ofSeconds(30));
        core.attach(c);
        return new Client(core, (RdmaConnection) c);
    }

    private static RpcException failure(CompletableFuture<byte[]> call) {
        ExecutionException e = assertThrows(ExecutionException.class, () -> call.get(30, TimeUnit.SECONDS));
        return assertInstanceOf(RpcException.class, e.getCause());
    }

    @Test
    void aQueuePairOrDeviceFailureClosesItsConnectionsAtOnceWithTheReason() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        CountDownLatch started = new CountDownLatch(2);
        try (RpcServer server = RpcServer.builder().bind(RdmaTestEnv.serverBind()).rdma(RdmaTestEnv.smallConfig())
                .register(ECHO, (ctx, b) -> b)
                .registerBlocking(HANG, (ctx, b) -> {
                    started.countDown();
                    release.await(60, TimeUnit.SECONDS);
                    return b;
                }).start();
             RdmaTransport t = RdmaTransport.create(RdmaTestEnv.smallConfig())) {
            Client a = connect(t, server);
            Client b = connect(t, server);
            assertArrayEquals(new byte[] {1}, a.echo(new byte[] {1}));
            assertArrayEquals(new byte[] {2}, b.echo(new byte[] {2}));
            DeviceTable.Device device = a.connection().loopDevice.device;
            assertTrue(device == b.connection().loopDevice.device, "both on one device");

            CompletableFuture<byte[]> onA = a.hang();
            CompletableFuture<byte[]> onB = b.hang();
            assertTrue(started.await(60, TimeUnit.SECONDS), "the server took both calls");

            // IBV_EVENT_QP_FATAL for a's queue pair: a's call fails at once, b's goes on
            long t0 = System.nanoTime();
            t.devices().onAsyncEvent(device, new AsyncEvent(device.context, AsyncEventType.QP_FATAL, 0,
                    a.connection().qp.segment().address(), a.connection().qp));
            RpcException ea = failure(onA);
            long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
            System.out.println("QP_FATAL: the call failed after " + ms + " ms: " + ea.getMessage());
            assertEquals(Status.CONNECTION_CLOSED, ea.status(), ea.getMessage());
            assertTrue(ea.getMessage().contains("RDMA queue pair " + a.connection().qp.qpNum() + " on " + device.context.name()
                    + " failed (IBV_EVENT_QP_FATAL"), ea.getMessage());
            assertTrue(ms < 10_000, "at once, not at the call's 90 s deadline: " + ms + " ms");
            assertTrue(!onB.isDone(), "the other connection's call is untouched");
            assertArrayEquals(new byte[] {3}, b.echo(new byte[] {3}), "and that connection still serves");

            // IBV_EVENT_DEVICE_FATAL: every connection on the device closes, with the reason
            t0 = System.nanoTime();
            t.devices().onAsyncEvent(device, new AsyncEvent(device.context, AsyncEventType.DEVICE_FATAL, 0, 0, null));
            RpcException eb = failure(onB);
            ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
            System.out.println("DEVICE_FATAL: the call failed after " + ms + " ms: " + eb.getMessage());
            assertEquals(Status.CONNECTION_CLOSED, eb.status(), eb.getMessage());
            assertTrue(eb.getMessage().contains("RDMA device " + device.context.name() + " failed (IBV_EVENT_DEVICE_FATAL"),
                    eb.getMessage());
            assertTrue(ms < 10_000, "at once: " + ms + " ms");
            RpcException later = assertThrows(RpcException.class, () -> b.echo(new byte[] {4}));
            assertEquals(Status.CONNECTION_CLOSED, later.status(), "the connection is closed for good");
            release.countDown();
        } finally {
            release.countDown();
        }
    }
}
