package dev.rdmarpc.rdmacm;

import dev.rdmarpc.ibverbs.VerbsNative;
import dev.rdmarpc.ibverbs.verbs.Access;
import dev.rdmarpc.ibverbs.verbs.CompletionQueue;
import dev.rdmarpc.ibverbs.verbs.Context;
import dev.rdmarpc.ibverbs.verbs.MemoryRegion;
import dev.rdmarpc.ibverbs.verbs.ProtectionDomain;
import dev.rdmarpc.ibverbs.verbs.QpState;
import dev.rdmarpc.ibverbs.verbs.QueuePair;
import dev.rdmarpc.ibverbs.verbs.QueuePairInit;
import dev.rdmarpc.ibverbs.verbs.ReceiveWorkRequests;
import dev.rdmarpc.ibverbs.verbs.SendWorkRequests;
import dev.rdmarpc.ibverbs.verbs.VerbsResources;
import dev.rdmarpc.ibverbs.verbs.WcOpcode;
import dev.rdmarpc.ibverbs.verbs.WorkCompletions;
import dev.rdmarpc.testsupport.RdmaEnvironment;
import dev.rdmarpc.testsupport.RdmaTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * The connection manager over real RDMA devices (in the Soft-RoCE VM: rxe0 on 198.18.0.1, rxe1 on
 * 198.18.0.2): a listener on address 1, a client from address 0, connect/accept/reject with private
 * data both ways, one SEND/RECV over the queue pairs made on the ids, disconnect on both sides,
 * address resolution that fails, and resources that all close again.
 *
 * <p>Both sides run on the test thread: each operation returns at once, and its outcome is polled
 * from the side's channel. Waits are generous because the VM emulates its CPU.
 */
@RdmaTest
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class CmConnectionRdmaTest {
    static final Duration EVENT_WAIT = Duration.ofSeconds(30);
    static final Duration RESOLVE_TIMEOUT = Duration.ofSeconds(5);
    private static final long COMPLETION_WAIT_NANOS = TimeUnit.SECONDS.toNanos(30);

    static CmEvent next(EventChannel channel, CmEventType expected) {
        long start = System.nanoTime();
        CmEvent event = channel.poll(EVENT_WAIT);
        if (event == null) {
            fail("no event within " + EVENT_WAIT + " on " + channel + "; expected " + expected.nativeName());
        }
        System.out.println("event after " + (System.nanoTime() - start) / 1_000_000 + " ms: " + event);
        return event.require(expected);
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.US_ASCII);
    }

    /** The sender's bytes first, then zeros up to the transport's fixed length. */
    private static void assertPrivateData(byte[] sent, int transportLength, CmEvent event) {
        byte[] got = event.privateData();
        assertEquals(transportLength, got.length, "private data length of " + event);
        assertArrayEquals(sent, Arrays.copyOf(got, sent.length), "private data of " + event);
        for (int i = sent.length; i < got.length; i++) {
            assertEquals(0, got[i], "padding byte " + i + " of " + event);
        }
    }

    static int pollOne(CompletionQueue cq, WorkCompletions wc) {
        long deadline = System.nanoTime() + COMPLETION_WAIT_NANOS;
        while (System.nanoTime() < deadline) {
            int n = cq.poll(wc, 1);
            if (n > 0) {
                return n;
            }
            Thread.onSpinWait();
        }
        return fail("no completion on " + cq + " within 30 s");
    }

    /** Closes what was added, last first, also when the test fails; every resource closes once, so explicit closes are fine. */
    static final class Cleanup implements AutoCloseable {
        private final java.util.ArrayDeque<AutoCloseable> stack = new java.util.ArrayDeque<>();

        <T extends AutoCloseable> T add(T resource) {
            stack.push(resource);
            return resource;
        }

        @Override
        public void close() throws Exception {
            Exception failure = null;
            while (!stack.isEmpty()) {
                try {
                    stack.pop().close();
                } catch (Exception e) {
                    if (failure == null) {
                        failure = e;
                    } else {
                        failure.addSuppressed(e);
                    }
                }
            }
            if (failure != null) {
                throw failure;
            }
        }
    }

    private static long live() {
        return RdmaCmCounters.liveObjects();
    }

    @Test
    void connectAcceptSendReceiveAndDisconnectWithPrivateDataBothWays(RdmaEnvironment rdma) throws Exception {
        long cmBefore = live();
        long verbsBefore = VerbsResources.liveTotal();
        InetAddress serverIp = InetAddress.getByName(rdma.address1());
        InetAddress clientIp = InetAddress.getByName(rdma.address0());
        byte[] hello = bytes("hello from the client");
        byte[] welcome = bytes("welcome, said the server");
        byte[] ping = bytes("ping over RDMA SEND");
        ConnectionParams clientParams = ConnectionParams.DEFAULT.withResponderResources(2).withInitiatorDepth(1)
                .withRetryCount(5).withRnrRetryCount(6);

        try (Cleanup cleanup = new Cleanup();
             Arena memory = Arena.ofShared()) {
            EventChannel serverChannel = cleanup.add(EventChannel.open());
            EventChannel clientChannel = cleanup.add(EventChannel.open());
            assertEquals(cmBefore + 2, live());
            CmId listener = cleanup.add(serverChannel.createId());
            listener.bind(new InetSocketAddress(serverIp, 0));
            listener.listen(8);
            InetSocketAddress listening = listener.localAddress();
            assertEquals(serverIp, listening.getAddress());
            assertTrue(listening.getPort() > 0, "port 0 picks a port: " + listening);
            assertEquals(rdma.device1(), listener.deviceName(), "binding to the address binds to its device");

            CmId client = cleanup.add(clientChannel.createId());
            assertNull(client.deviceName(), "not bound yet");
            client.resolveAddress(new InetSocketAddress(clientIp, 0), listening, RESOLVE_TIMEOUT);
            assertSame(client, next(clientChannel, CmEventType.ADDR_RESOLVED).id());
            assertEquals(rdma.device0(), client.deviceName());
            assertEquals(rdma.port0(), client.portNumber());
            client.resolveRoute(RESOLVE_TIMEOUT);
            next(clientChannel, CmEventType.ROUTE_RESOLVED);
            assertEquals(listening, client.remoteAddress());

            // the client's queue pair, on the device librdmacm bound the id to
            Context clientContext = cleanup.add(Context.wrap(client.verbsContext()));
            ProtectionDomain clientPd = cleanup.add(clientContext.allocateProtectionDomain());
            CompletionQueue clientCq = cleanup.add(clientContext.createCompletionQueue(16));
            QueuePair clientQp = cleanup.add(client.createQueuePair(clientPd,
                    new QueuePairInit().completionQueue(clientCq).maxSendWr(4).maxRecvWr(4)));
            assertSame(clientQp, client.queuePair());
            assertEquals(QpState.INIT, clientQp.state(), "rdma_create_qp leaves the queue pair in INIT");
            assertEquals("CmId[0x" + Long.toHexString(client.handle().address()) + "] still has a queue pair ("
                    + clientQp + "); close it before the id",
                    assertThrows(IllegalStateException.class, client::close).getMessage());

            client.connect(clientParams, hello);

            CmEvent request = next(serverChannel, CmEventType.CONNECT_REQUEST);
            CmId connection = cleanup.add(request.id());
            assertSame(listener, request.listenId());
            assertFalse(connection == listener);
            assertEquals(2, serverChannel.openIds(), "the request's id belongs to the poller");
            assertPrivateData(hello, CmId.MAX_CONNECT_PRIVATE_DATA, request);
            // as the server sees them: the client's initiator depth is what it must answer for
            assertEquals(clientParams.initiatorDepth(), request.params().responderResources(), request.toString());
            assertEquals(clientParams.responderResources(), request.params().initiatorDepth(), request.toString());
            assertEquals(clientParams.retryCount(), request.params().retryCount());
            assertEquals(clientParams.rnrRetryCount(), request.params().rnrRetryCount());
            assertEquals(clientQp.qpNum(), request.params().qpNumber(), "the client's QP number");
            assertEquals(rdma.device1(), connection.deviceName());
            assertEquals(new InetSocketAddress(clientIp, client.localAddress().getPort()), connection.remoteAddress());

            Context serverContext = cleanup.add(Context.wrap(connection.verbsContext()));
            ProtectionDomain serverPd = cleanup.add(serverContext.allocateProtectionDomain());
            CompletionQueue serverCq = cleanup.add(serverContext.createCompletionQueue(16));
            assertThrows(IllegalArgumentException.class, () -> connection.createQueuePair(clientPd,
                    new QueuePairInit().completionQueue(clientCq)), "a domain of the other device");
            QueuePair serverQp = cleanup.add(connection.createQueuePair(serverPd,
                    new QueuePairInit().completionQueue(serverCq).maxSendWr(4).maxRecvWr(4)));

            MemorySegment receiveBuffer = memory.allocate(64);
            MemorySegment sendBuffer = memory.allocate(64);
            MemorySegment.copy(ping, 0, sendBuffer, JAVA_BYTE, 0, ping.length);
            try (MemoryRegion receiveMr = serverPd.register(receiveBuffer, Access.LOCAL);
                 MemoryRegion sendMr = clientPd.register(sendBuffer, Access.LOCAL);
                 ReceiveWorkRequests receives = new ReceiveWorkRequests(1, 1);
                 SendWorkRequests sends = new SendWorkRequests(1, 1);
                 WorkCompletions wc = new WorkCompletions(4)) {
                receives.get(0).wrId(7).buffer(receiveMr, 0, 64);
                assertEquals(0, serverQp.postReceive(receives, 1));

                connection.accept(ConnectionParams.DEFAULT, welcome);
                CmEvent established = next(clientChannel, CmEventType.ESTABLISHED);
                assertSame(client, established.id());
                assertPrivateData(welcome, CmId.MAX_ACCEPT_PRIVATE_DATA, established);
                assertEquals(serverQp.qpNum(), established.params().qpNumber(), "the server's QP number");
                assertSame(connection, next(serverChannel, CmEventType.ESTABLISHED).id());
                assertEquals(QpState.RTS, clientQp.state());
                assertEquals(QpState.RTS, serverQp.state());

                sends.get(0).wrId(9).send(sendMr, 0, ping.length).signaled(true);
                long sent = System.nanoTime();
                assertEquals(0, clientQp.postSend(sends, 1));
                assertEquals(1, pollOne(clientCq, wc));
                assertTrue(wc.isSuccess(0), wc.describe(0));
                assertEquals(9, wc.wrId(0));
                assertEquals(1, pollOne(serverCq, wc));
                assertTrue(wc.isSuccess(0), wc.describe(0));
                assertEquals(7, wc.wrId(0));
                assertEquals(WcOpcode.RECV, wc.opcode(0));
                assertEquals(ping.length, wc.byteLength(0));
                assertArrayEquals(ping, receiveBuffer.asSlice(0, ping.length).toArray(JAVA_BYTE));
                System.out.println("SEND/RECV completed after " + (System.nanoTime() - sent) / 1_000_000 + " ms");
            }

            // the client disconnects; the server sees it and answers with its own disconnect, which
            // completes the client's (on IB/RoCE: DREQ, then DREP)
            client.disconnect();
            assertEquals(QpState.ERR, clientQp.state(), "disconnect moves the queue pair to ERR");
            assertSame(connection, next(serverChannel, CmEventType.DISCONNECTED).id());
            connection.disconnect();
            assertSame(client, next(clientChannel, CmEventType.DISCONNECTED).id());
            assertEquals(QpState.ERR, serverQp.state());

            // dependents first: the channel refuses while ids are open, an id while its QP is
            assertThrows(IllegalStateException.class, serverChannel::close);
            assertFalse(serverChannel.isClosed());
            clientQp.close();
            clientQp.close();
            assertNull(client.queuePair());
            serverQp.close();
            clientCq.close();
            serverCq.close();
            clientPd.close();
            serverPd.close();
            clientContext.close();
            serverContext.close();
            client.close();
            client.close();
            connection.close();
            listener.close();
            assertEquals(0, serverChannel.openIds());
            assertThrows(IllegalStateException.class, client::disconnect);
        }
        assertEquals(cmBefore, live(), "every channel, id and QP closed");
        assertEquals(verbsBefore, VerbsResources.liveTotal(), "every verbs resource closed: " + VerbsResources.snapshot());
    }

    @Test
    void rejectCarriesPrivateDataToTheClient(RdmaEnvironment rdma) throws Exception {
        long before = live();
        byte[] request = bytes("may I?");
        byte[] refusal = bytes("no: server full");
        try (EventChannel serverChannel = EventChannel.open();
             EventChannel clientChannel = EventChannel.open();
             CmId listener = serverChannel.createId();
             CmId client = clientChannel.createId()) {
            listener.bind(new InetSocketAddress(InetAddress.getByName(rdma.address1()), 0));
            listener.listen(1);
            client.resolveAddress(new InetSocketAddress(InetAddress.getByName(rdma.address0()), 0),
                    listener.localAddress(), RESOLVE_TIMEOUT);
            next(clientChannel, CmEventType.ADDR_RESOLVED);
            client.resolveRoute(RESOLVE_TIMEOUT);
            next(clientChannel, CmEventType.ROUTE_RESOLVED);
            // no queue pair: the connection parameters name the QP number instead
            client.connect(ConnectionParams.DEFAULT.withQpNumber(0x1234), request);

            CmEvent connectRequest = next(serverChannel, CmEventType.CONNECT_REQUEST);
            assertPrivateData(request, CmId.MAX_CONNECT_PRIVATE_DATA, connectRequest);
            assertEquals(0x1234, connectRequest.params().qpNumber());
            try (CmId connection = connectRequest.id()) {
                assertThrows(IllegalArgumentException.class, () -> connection.reject(new byte[CmId.MAX_REJECT_PRIVATE_DATA + 1]));
                connection.reject(refusal);
            }

            CmEvent rejected = clientChannel.poll(EVENT_WAIT);
            assertNotNull(rejected, "no REJECTED within " + EVENT_WAIT);
            System.out.println("event: " + rejected);
            assertEquals(CmEventType.REJECTED, rejected.type(), rejected.toString());
            assertSame(client, rejected.id());
            assertEquals(CmEvent.REJECT_CONSUMER_DEFINED, rejected.status());
            assertPrivateData(refusal, CmId.MAX_REJECT_PRIVATE_DATA, rejected);
            CmEventException e = assertThrows(CmEventException.class, () -> rejected.require(CmEventType.ESTABLISHED));
            assertTrue(e.getMessage().startsWith("expected RDMA_CM_EVENT_ESTABLISHED, got RDMA_CM_EVENT_REJECTED: "
                    + "reject reason 28 (rejected by the peer)"), e.getMessage());
        }
        assertEquals(before, live());
    }

    @Test
    void privateDataLongerThanRoceCarriesIsRefusedBeforeTheKernel(RdmaEnvironment rdma) throws Exception {
        try (EventChannel channel = EventChannel.open();
             CmId id = channel.createId()) {
            id.resolveAddress(new InetSocketAddress(InetAddress.getByName(rdma.address0()), 0),
                    new InetSocketAddress(InetAddress.getByName(rdma.address1()), 1), RESOLVE_TIMEOUT);
            next(channel, CmEventType.ADDR_RESOLVED);
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> id.connect(ConnectionParams.DEFAULT, new byte[CmId.MAX_CONNECT_PRIVATE_DATA + 1]));
            assertEquals("rdma_connect: 57 bytes of private data; InfiniBand and RoCE carry at most 56", e.getMessage());
        }
    }

    @Test
    void resolvingAnAddressWithoutAnRdmaPeerGivesAnAddrErrorNamingTheErrno(RdmaEnvironment rdma) throws Exception {
        long before = live();
        // on the test subnet, but nobody has it: neighbour resolution gets no answer
        InetAddress nobody = InetAddress.getByName(rdma.address0().replaceAll("\\.\\d+$", ".77"));
        try (EventChannel channel = EventChannel.open();
             CmId id = channel.createId()) {
            long start = System.nanoTime();
            id.resolveAddress(new InetSocketAddress(InetAddress.getByName(rdma.address0()), 0),
                    new InetSocketAddress(nobody, 4791), Duration.ofMillis(500));
            CmEvent event = channel.poll(EVENT_WAIT);
            assertNotNull(event, "no event within " + EVENT_WAIT);
            System.out.println("event after " + (System.nanoTime() - start) / 1_000_000 + " ms: " + event);
            assertEquals(CmEventType.ADDR_ERROR, event.type(), event.toString());
            assertSame(id, event.id());
            assertTrue(event.status() < 0, "status is a negated errno: " + event);
            CmEventException e = assertThrows(CmEventException.class, () -> event.require(CmEventType.ADDR_RESOLVED));
            assertEquals("expected RDMA_CM_EVENT_ADDR_RESOLVED, got RDMA_CM_EVENT_ADDR_ERROR: "
                    + VerbsNative.strerror(event.errno()) + " (errno " + event.errno() + ") on " + id, e.getMessage());
            assertEquals(event.errno(), e.errno());
            assertNull(channel.poll(Duration.ofMillis(100)), "one outcome only");
        }
        assertEquals(before, live());
    }

    @Test
    void thousandsOfIdsAndChannelsCloseBackToZero(RdmaEnvironment rdma) throws Exception {
        long before = live();
        long verbsBefore = VerbsResources.liveTotal();
        InetAddress local = InetAddress.getByName(rdma.address0());
        int channels = 200;
        int idsPerChannel = 10;
        for (int c = 0; c < channels; c++) {
            EventChannel channel = EventChannel.open();
            CmId[] ids = new CmId[idsPerChannel];
            for (int i = 0; i < idsPerChannel; i++) {
                ids[i] = channel.createId();
            }
            ids[0].bind(new InetSocketAddress(local, 0));
            assertEquals(before + 1 + idsPerChannel, live());
            IllegalStateException refused = assertThrows(IllegalStateException.class, channel::close);
            assertEquals("event channel still has " + idsPerChannel + " open CM id(s); close them before the channel",
                    refused.getMessage());
            for (int i = idsPerChannel - 1; i >= 0; i--) {
                ids[i].close();
                ids[i].close();
            }
            channel.close();
            channel.close();
            assertEquals(before, live(), "after channel " + c);
        }
        // queue pairs on ids: the id refuses to close before its queue pair
        long qpsBefore = RdmaCmCounters.liveQueuePairs();
        for (int c = 0; c < 20; c++) {
            try (EventChannel channel = EventChannel.open()) {
                CmId id = channel.createId();
                CmId unbound = channel.createId();
                id.bind(new InetSocketAddress(local, 0));
                try (Context context = Context.wrap(id.verbsContext());
                     ProtectionDomain pd = context.allocateProtectionDomain();
                     CompletionQueue cq = context.createCompletionQueue(4)) {
                    assertTrue(assertThrows(IllegalStateException.class,
                            () -> unbound.createQueuePair(pd, new QueuePairInit().completionQueue(cq))).getMessage()
                            .endsWith(" is not bound to an RDMA device yet: create the queue pair after"
                                    + " ADDR_RESOLVED/ROUTE_RESOLVED, or on the id of a CONNECT_REQUEST"));
                    QueuePair qp = id.createQueuePair(pd, new QueuePairInit().completionQueue(cq).maxSendWr(1).maxRecvWr(1));
                    assertEquals(qpsBefore + 1, RdmaCmCounters.liveQueuePairs());
                    assertThrows(IllegalStateException.class, id::close);
                    assertThrows(IllegalStateException.class, () -> id.createQueuePair(pd, new QueuePairInit().completionQueue(cq)));
                    qp.close();
                }
                id.close();
                unbound.close();
            }
        }
        assertEquals(qpsBefore, RdmaCmCounters.liveQueuePairs());
        assertEquals(before, live());
        assertEquals(verbsBefore, VerbsResources.liveTotal(), VerbsResources.snapshot().toString());
    }
}
