package dev.rdmarpc.rdmacm;

import dev.rdmarpc.ibverbs.verbs.Access;
import dev.rdmarpc.ibverbs.verbs.CompletionChannel;
import dev.rdmarpc.ibverbs.verbs.CompletionQueue;
import dev.rdmarpc.ibverbs.verbs.Context;
import dev.rdmarpc.ibverbs.verbs.FdPoller;
import dev.rdmarpc.ibverbs.verbs.MemoryRegion;
import dev.rdmarpc.ibverbs.verbs.ProtectionDomain;
import dev.rdmarpc.ibverbs.verbs.QpState;
import dev.rdmarpc.ibverbs.verbs.QueuePair;
import dev.rdmarpc.ibverbs.verbs.QueuePairCapabilities;
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
import java.time.Duration;
import java.util.concurrent.TimeUnit;

import static dev.rdmarpc.rdmacm.CmConnectionRdmaTest.EVENT_WAIT;
import static dev.rdmarpc.rdmacm.CmConnectionRdmaTest.RESOLVE_TIMEOUT;
import static dev.rdmarpc.rdmacm.CmConnectionRdmaTest.next;
import static dev.rdmarpc.rdmacm.CmConnectionRdmaTest.pollOne;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The connection manager as a user of raw verbs meets it (issue 16, point 4), on real devices in the
 * Soft-RoCE VM: the sizes a queue pair made through the CM was granted, {@code accept}/{@code connect}
 * that leave the parameters to librdmacm, one thread waiting on a CM event channel and a completion
 * channel together ({@link FdPoller}), and a queue pair the caller created, driven through the
 * connection by {@link CmId#moveQueuePair} and {@link CmId#establish()}.
 */
@RdmaTest
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class CmUserApiRdmaTest {

    /** A listener on address 1 and a client id on address 0 whose route to it is resolved; closed by {@code cleanup}. */
    private record Resolved(EventChannel serverChannel, EventChannel clientChannel, CmId listener, CmId client) {
        static Resolved open(CmConnectionRdmaTest.Cleanup cleanup, RdmaEnvironment rdma) throws Exception {
            EventChannel serverChannel = cleanup.add(EventChannel.open());
            EventChannel clientChannel = cleanup.add(EventChannel.open());
            CmId listener = cleanup.add(serverChannel.createId());
            listener.bind(new InetSocketAddress(InetAddress.getByName(rdma.address1()), 0));
            listener.listen(4);
            CmId client = cleanup.add(clientChannel.createId());
            client.resolveAddress(new InetSocketAddress(InetAddress.getByName(rdma.address0()), 0),
                    listener.localAddress(), RESOLVE_TIMEOUT);
            next(clientChannel, CmEventType.ADDR_RESOLVED);
            client.resolveRoute(RESOLVE_TIMEOUT);
            next(clientChannel, CmEventType.ROUTE_RESOLVED);
            return new Resolved(serverChannel, clientChannel, listener, client);
        }
    }

    @Test
    void aQueuePairMadeThroughTheCmReportsTheSizesTheDeviceGranted(RdmaEnvironment rdma) throws Exception {
        long verbsBefore = VerbsResources.liveTotal();
        try (EventChannel channel = EventChannel.open();
             CmId id = channel.createId()) {
            id.bind(new InetSocketAddress(InetAddress.getByName(rdma.address0()), 0));
            try (Context context = Context.wrap(id.verbsContext());
                 ProtectionDomain pd = context.allocateProtectionDomain();
                 CompletionQueue cq = context.createCompletionQueue(64)) {
                QueuePairInit init = new QueuePairInit().completionQueue(cq).maxSendWr(16).maxRecvWr(2)
                        .maxInlineData(0);
                QueuePair viaCm = id.createQueuePair(pd, init);
                try {
                    QueuePairCapabilities granted = viaCm.capabilities();
                    QueuePairCapabilities queried = viaCm.queryCapabilities();
                    System.out.println("asked 16/2/inline 0; rdma_create_qp granted " + granted
                            + "; ibv_query_qp says " + queried);
                    assertEquals(queried, granted, "capabilities() is what the device granted, as ibv_query_qp reports");
                    assertTrue(granted.maxSendWr() >= 16 && granted.maxRecvWr() >= 2, granted.toString());
                } finally {
                    viaCm.close();
                }
                try (QueuePair viaVerbs = pd.createQueuePair(init)) {
                    assertEquals(viaVerbs.queryCapabilities(), viaVerbs.capabilities(), "ibv_create_qp alike");
                }
            }
        }
        assertEquals(verbsBefore, VerbsResources.liveTotal(), VerbsResources.snapshot().toString());
    }

    /**
     * {@code accept(null, null)} and {@code connect(null, null)} leave the parameters to librdmacm;
     * the server's one thread then waits on its CM channel and its completion channel together: the
     * client's SEND wakes it on the completion channel, the client's disconnect on the CM channel,
     * each at once rather than at the end of a timed wait on the other.
     */
    @Test
    void oneThreadWaitsOnTheCmChannelAndACompletionChannelTogether(RdmaEnvironment rdma) throws Exception {
        long cmBefore = RdmaCmCounters.liveObjects();
        long verbsBefore = VerbsResources.liveTotal();
        try (CmConnectionRdmaTest.Cleanup cleanup = new CmConnectionRdmaTest.Cleanup();
             Arena memory = Arena.ofShared()) {
            Resolved pair = Resolved.open(cleanup, rdma);
            EventChannel serverChannel = pair.serverChannel();
            EventChannel clientChannel = pair.clientChannel();
            CmId client = pair.client();
            Context clientContext = cleanup.add(Context.wrap(client.verbsContext()));
            ProtectionDomain clientPd = cleanup.add(clientContext.allocateProtectionDomain());
            CompletionQueue clientCq = cleanup.add(clientContext.createCompletionQueue(8));
            QueuePair clientQp = cleanup.add(client.createQueuePair(clientPd,
                    new QueuePairInit().completionQueue(clientCq).maxSendWr(4).maxRecvWr(4)));
            assertThrows(IllegalArgumentException.class, () -> client.connect(null, new byte[]{1}),
                    "private data needs parameters to travel in");
            client.connect(null, null);

            CmEvent request = next(serverChannel, CmEventType.CONNECT_REQUEST);
            System.out.println("librdmacm's own parameters, as the server sees them: " + request.params());
            assertTrue(request.params().responderResources() >= 1, "the device's read depth: " + request.params());
            CmId connection = cleanup.add(request.id());
            Context serverContext = cleanup.add(Context.wrap(connection.verbsContext()));
            ProtectionDomain serverPd = cleanup.add(serverContext.allocateProtectionDomain());
            CompletionChannel completions = cleanup.add(serverContext.createCompletionChannel());
            CompletionQueue serverCq = cleanup.add(serverContext.createCompletionQueue(8, completions, 0));
            QueuePair serverQp = cleanup.add(connection.createQueuePair(serverPd,
                    new QueuePairInit().completionQueue(serverCq).maxSendWr(4).maxRecvWr(4)));
            MemorySegment receiveBuffer = memory.allocate(64, 8);
            MemorySegment sendBuffer = memory.allocate(64, 8);
            sendBuffer.set(JAVA_LONG, 0, 0x5EED_F00DL);
            MemoryRegion receiveMr = cleanup.add(serverPd.register(receiveBuffer, Access.LOCAL));
            MemoryRegion sendMr = cleanup.add(clientPd.register(sendBuffer, Access.LOCAL));
            ReceiveWorkRequests receives = cleanup.add(new ReceiveWorkRequests(1, 1));
            SendWorkRequests sends = cleanup.add(new SendWorkRequests(1, 1));
            WorkCompletions wc = cleanup.add(new WorkCompletions(4));
            receives.get(0).wrId(1).buffer(receiveMr, 0, 64);
            assertEquals(0, serverQp.postReceive(receives, 1));
            serverCq.requestNotify(false);
            connection.accept(null, null);
            next(clientChannel, CmEventType.ESTABLISHED);
            next(serverChannel, CmEventType.ESTABLISHED);

            FdPoller poller = cleanup.add(new FdPoller(serverChannel.fd(), completions.fd()));
            assertEquals(0, poller.await(Duration.ZERO), "quiet after the handshake");

            sends.get(0).wrId(2).send(sendMr, 0, 8).signaled(true);
            long sent = System.nanoTime();
            assertEquals(0, clientQp.postSend(sends, 1));
            assertEquals(1, poller.await(EVENT_WAIT), "the SEND's completion wakes the poller");
            long wokeMs = (System.nanoTime() - sent) / 1_000_000;
            assertTrue(poller.isReadable(1), "completion channel");
            assertFalse(poller.isReadable(0), "no CM event");
            assertSame(serverCq, completions.awaitEvent(0));
            assertEquals(1, pollOne(serverCq, wc));
            assertTrue(wc.isSuccess(0), wc.describe(0));
            assertEquals(WcOpcode.RECV, wc.opcode(0));
            assertEquals(0x5EED_F00DL, receiveBuffer.get(JAVA_LONG, 0));
            serverCq.acknowledgeEvents();
            assertEquals(1, pollOne(clientCq, wc));

            client.disconnect();
            long disconnected = System.nanoTime();
            assertEquals(1, poller.await(EVENT_WAIT), "the disconnect wakes the poller");
            long disconnectMs = (System.nanoTime() - disconnected) / 1_000_000;
            assertTrue(poller.isReadable(0), "CM channel");
            CmEvent event = serverChannel.poll(Duration.ZERO);
            assertNotNull(event, "readable means an event is waiting");
            assertEquals(CmEventType.DISCONNECTED, event.type(), event.toString());
            System.out.println("one poller: woken by the SEND after " + wokeMs + " ms, by the disconnect after "
                    + disconnectMs + " ms");
            // both are well under the 1 s slice a user alternating timed waits would use
            assertTrue(wokeMs < 1_000 && disconnectMs < 1_000, wokeMs + " ms, " + disconnectMs + " ms");
            connection.disconnect();
            next(clientChannel, CmEventType.DISCONNECTED);

            clientQp.close();
            serverQp.close();
        }
        assertEquals(cmBefore, RdmaCmCounters.liveObjects());
        assertEquals(verbsBefore, VerbsResources.liveTotal(), VerbsResources.snapshot().toString());
    }

    /**
     * A queue pair the caller made with the verbs layer (RESET), taken through INIT, RTR and RTS by
     * the CM's attributes: client {@code CONNECT_RESPONSE} then {@code establish()}, server all three
     * states before {@code accept}; then a SEND each way, an RDMA WRITE and READ by the server into the
     * client's memory, and a disconnect.
     */
    @Test
    void aQueuePairTheCallerCreatedIsDrivenThroughTheConnectionByTheCm(RdmaEnvironment rdma) throws Exception {
        long cmBefore = RdmaCmCounters.liveObjects();
        long verbsBefore = VerbsResources.liveTotal();
        try (CmConnectionRdmaTest.Cleanup cleanup = new CmConnectionRdmaTest.Cleanup();
             Arena memory = Arena.ofShared()) {
            Resolved pair = Resolved.open(cleanup, rdma);
            EventChannel serverChannel = pair.serverChannel();
            EventChannel clientChannel = pair.clientChannel();
            CmId client = pair.client();

            Context clientContext = cleanup.add(Context.wrap(client.verbsContext()));
            ProtectionDomain clientPd = cleanup.add(clientContext.allocateProtectionDomain());
            CompletionQueue clientCq = cleanup.add(clientContext.createCompletionQueue(8));
            QueuePair clientQp = cleanup.add(clientPd.createQueuePair(
                    new QueuePairInit().completionQueue(clientCq).maxSendWr(4).maxRecvWr(4)));
            assertEquals(QpState.RESET, clientQp.state());
            assertThrows(IllegalArgumentException.class, () -> client.moveQueuePair(clientQp, QpState.ERR));
            client.moveQueuePair(clientQp, QpState.INIT);
            assertEquals(QpState.INIT, clientQp.state());
            client.connect(ConnectionParams.DEFAULT.withQpNumber(clientQp.qpNum()), null);

            CmEvent request = next(serverChannel, CmEventType.CONNECT_REQUEST);
            assertEquals(clientQp.qpNum(), request.params().qpNumber());
            CmId connection = cleanup.add(request.id());
            Context serverContext = cleanup.add(Context.wrap(connection.verbsContext()));
            ProtectionDomain serverPd = cleanup.add(serverContext.allocateProtectionDomain());
            CompletionQueue serverCq = cleanup.add(serverContext.createCompletionQueue(8));
            QueuePair serverQp = cleanup.add(serverPd.createQueuePair(
                    new QueuePairInit().completionQueue(serverCq).maxSendWr(4).maxRecvWr(4)));
            assertThrows(IllegalArgumentException.class, () -> connection.moveQueuePair(clientQp, QpState.INIT),
                    "a queue pair of the other device");

            MemorySegment serverBuffer = memory.allocate(64, 8);
            MemorySegment clientBuffer = memory.allocate(64, 8);
            MemoryRegion serverMr = cleanup.add(serverPd.register(serverBuffer, Access.LOCAL));
            // the server RDMA WRITEs into and READs from the client's buffer below
            MemoryRegion clientMr = cleanup.add(clientPd.register(clientBuffer, Access.LOCAL_REMOTE_READ_WRITE));
            ReceiveWorkRequests receives = cleanup.add(new ReceiveWorkRequests(1, 1));
            SendWorkRequests sends = cleanup.add(new SendWorkRequests(1, 1));
            WorkCompletions wc = cleanup.add(new WorkCompletions(4));
            receives.get(0).wrId(1).buffer(serverMr, 0, 64);

            connection.moveQueuePair(serverQp, QpState.INIT);
            assertEquals(0, serverQp.postReceive(receives, 1));
            connection.moveQueuePair(serverQp, QpState.RTR);
            connection.moveQueuePair(serverQp, QpState.RTS);
            assertEquals(QpState.RTS, serverQp.state());
            connection.accept(ConnectionParams.DEFAULT.withQpNumber(serverQp.qpNum()), null);

            CmEvent response = next(clientChannel, CmEventType.CONNECT_RESPONSE);
            assertEquals(serverQp.qpNum(), response.params().qpNumber(), "the server's QP number");
            receives.get(0).wrId(3).buffer(clientMr, 0, 64);
            client.moveQueuePair(clientQp, QpState.RTR);
            assertEquals(0, clientQp.postReceive(receives, 1));
            client.moveQueuePair(clientQp, QpState.RTS);
            assertEquals(QpState.RTS, clientQp.state());
            client.establish();
            next(serverChannel, CmEventType.ESTABLISHED);

            clientBuffer.set(JAVA_LONG, 8, 0xC11E_0001L);
            sends.get(0).wrId(2).send(clientMr, 8, 8).signaled(true);
            assertEquals(0, clientQp.postSend(sends, 1));
            assertEquals(1, pollOne(serverCq, wc));
            assertTrue(wc.isSuccess(0), wc.describe(0));
            assertEquals(0xC11E_0001L, serverBuffer.get(JAVA_LONG, 0));
            assertEquals(1, pollOne(clientCq, wc));
            assertTrue(wc.isSuccess(0), wc.describe(0));

            serverBuffer.set(JAVA_LONG, 8, 0x5E4E_0002L);
            sends.get(0).wrId(4).send(serverMr, 8, 8).signaled(true);
            assertEquals(0, serverQp.postSend(sends, 1));
            assertEquals(1, pollOne(clientCq, wc));
            assertTrue(wc.isSuccess(0), wc.describe(0));
            assertEquals(3, wc.wrId(0));
            assertEquals(0x5E4E_0002L, clientBuffer.get(JAVA_LONG, 0));
            assertEquals(1, pollOne(serverCq, wc));

            // one-sided, into the client's memory: the access rights the second INIT (inside
            // moveQueuePair(RTR)) granted; an INIT taken before connect grants none
            serverBuffer.set(JAVA_LONG, 16, 0x3217_E000L);
            sends.get(0).clear().wrId(5).write(serverMr, 16, 8, clientMr.address(32, 8), clientMr.rkey()).signaled(true);
            assertEquals(0, serverQp.postSend(sends, 1));
            assertEquals(1, pollOne(serverCq, wc));
            assertTrue(wc.isSuccess(0), "RDMA WRITE into the client: " + wc.describe(0));
            assertEquals(0x3217_E000L, clientBuffer.get(JAVA_LONG, 32));
            clientBuffer.set(JAVA_LONG, 40, 0x5EAD_0000L);
            sends.get(0).clear().wrId(6).read(serverMr, 24, 8, clientMr.address(40, 8), clientMr.rkey()).signaled(true);
            assertEquals(0, serverQp.postSend(sends, 1));
            assertEquals(1, pollOne(serverCq, wc));
            assertTrue(wc.isSuccess(0), "RDMA READ from the client: " + wc.describe(0));
            assertEquals(0x5EAD_0000L, serverBuffer.get(JAVA_LONG, 24));

            // the queue pair is the caller's: move it to ERR, then disconnect, as C programs do
            clientQp.toError();
            client.disconnect();
            next(serverChannel, CmEventType.DISCONNECTED);
            serverQp.toError();
            connection.disconnect();
            next(clientChannel, CmEventType.DISCONNECTED);
            assertNull(client.queuePair(), "not the id's queue pair");
            client.close(); // does not refuse: the queue pair is not the id's
            clientQp.close();
            serverQp.close();
        }
        assertEquals(cmBefore, RdmaCmCounters.liveObjects());
        assertEquals(verbsBefore, VerbsResources.liveTotal(), VerbsResources.snapshot().toString());
    }
}
