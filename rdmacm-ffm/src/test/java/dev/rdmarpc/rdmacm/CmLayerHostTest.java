package dev.rdmarpc.rdmacm;

import dev.rdmarpc.ibverbs.VerbsNative;
import dev.rdmarpc.rdmacm.raw.rdmacm_h;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The connection-manager layer without an RDMA device: values, validation, errors and the
 * channel's outcome on a host whose kernel may have no RDMA connection manager.
 */
class CmLayerHostTest {
    private static final Path RDMA_CM_DEVICE = Path.of("/dev/infiniband/rdma_cm");

    @Test
    void eventTypesAreTheCValuesAndNames() {
        assumeTrue(Rdmacm.isAvailable(), "librdmacm not loadable");
        int[] c = {
            rdmacm_h.RDMA_CM_EVENT_ADDR_RESOLVED(), rdmacm_h.RDMA_CM_EVENT_ADDR_ERROR(),
            rdmacm_h.RDMA_CM_EVENT_ROUTE_RESOLVED(), rdmacm_h.RDMA_CM_EVENT_ROUTE_ERROR(),
            rdmacm_h.RDMA_CM_EVENT_CONNECT_REQUEST(), rdmacm_h.RDMA_CM_EVENT_CONNECT_RESPONSE(),
            rdmacm_h.RDMA_CM_EVENT_CONNECT_ERROR(), rdmacm_h.RDMA_CM_EVENT_UNREACHABLE(),
            rdmacm_h.RDMA_CM_EVENT_REJECTED(), rdmacm_h.RDMA_CM_EVENT_ESTABLISHED(),
            rdmacm_h.RDMA_CM_EVENT_DISCONNECTED(), rdmacm_h.RDMA_CM_EVENT_DEVICE_REMOVAL(),
            rdmacm_h.RDMA_CM_EVENT_MULTICAST_JOIN(), rdmacm_h.RDMA_CM_EVENT_MULTICAST_ERROR(),
            rdmacm_h.RDMA_CM_EVENT_ADDR_CHANGE(), rdmacm_h.RDMA_CM_EVENT_TIMEWAIT_EXIT(),
        };
        assertEquals(c.length, CmEventType.values().length);
        for (int i = 0; i < c.length; i++) {
            CmEventType type = CmEventType.values()[i];
            assertEquals(c[i], type.value(), type.name());
            assertSame(type, CmEventType.of(c[i]));
            assertEquals(rdmacm_h.rdma_event_str(c[i]).reinterpret(64).getString(0), type.nativeName());
        }
        assertEquals("unknown rdma_cm_event_type 16",
                assertThrows(IllegalArgumentException.class, () -> CmEventType.of(16)).getMessage());
        assertThrows(IllegalArgumentException.class, () -> CmEventType.of(-1));
    }

    @Test
    void eventChannelOpensOrFailsClearlyAndCountsStayBalanced() {
        assumeTrue(Rdmacm.isAvailable(), "librdmacm not loadable");
        long before = RdmaCmCounters.liveObjects();
        EventChannel channel;
        try {
            channel = EventChannel.open();
        } catch (RdmaCmUnavailableException e) {
            throw e;
        } catch (RdmaCmException e) {
            System.out.println("EventChannel.open: " + e.getMessage());
            assertFalse(Files.exists(RDMA_CM_DEVICE), RDMA_CM_DEVICE + " exists, yet: " + e.getMessage());
            assertEquals("rdma_create_event_channel", e.operation());
            assertTrue(e.errno() > 0, e.getMessage());
            assertTrue(e.getMessage().startsWith("rdma_create_event_channel failed: "), e.getMessage());
            assertEquals(before, RdmaCmCounters.liveObjects(), "a failed open counts nothing");
            return;
        }
        // a host with the RDMA CM: the channel works without any device traffic
        try {
            assertEquals(before + 1, RdmaCmCounters.liveObjects());
            assertTrue(channel.fd() >= 0);
            assertNull(channel.poll(Duration.ofMillis(20)), "no id, no event");
        } finally {
            channel.close();
            channel.close();
        }
        assertTrue(channel.isClosed());
        assertEquals(before, RdmaCmCounters.liveObjects());
        assertThrows(IllegalStateException.class, () -> channel.poll(Duration.ZERO));
        assertThrows(IllegalStateException.class, channel::createId);
    }

    @Test
    void connectionParamsAreCheckedWhenMade() {
        ConnectionParams d = ConnectionParams.DEFAULT;
        assertEquals(new ConnectionParams(1, 1, 1, 7, 7, false, 0), d);
        assertEquals(ConnectionParams.MAX, d.withResponderResources(ConnectionParams.MAX).responderResources());
        assertEquals(3, d.withRetryCount(3).retryCount());
        assertEquals(0, d.withRnrRetryCount(0).rnrRetryCount());
        assertTrue(d.withSrq(true).srq());
        assertEquals(0xFF_FFFF, d.withQpNumber(0xFF_FFFF).qpNumber());
        assertEquals("retryCount must be in 0..7, was 8",
                assertThrows(IllegalArgumentException.class, () -> d.withRetryCount(8)).getMessage());
        assertEquals("rnrRetryCount must be in 0..7, was -1",
                assertThrows(IllegalArgumentException.class, () -> d.withRnrRetryCount(-1)).getMessage());
        assertEquals("responderResources must be in 0..255, was 256",
                assertThrows(IllegalArgumentException.class, () -> d.withResponderResources(256)).getMessage());
        assertThrows(IllegalArgumentException.class, () -> d.withInitiatorDepth(-1));
        assertThrows(IllegalArgumentException.class, () -> d.withFlowControl(2));
        assertThrows(IllegalArgumentException.class, () -> d.withQpNumber(1 << 24));
    }

    @Test
    void privateDataLongerThanTheTransportCarriesIsRefused() {
        CmId.checkPrivateDataLength("rdma_connect", 56, CmId.MAX_CONNECT_PRIVATE_DATA, true);
        assertEquals("rdma_connect: 57 bytes of private data; InfiniBand and RoCE carry at most 56",
                assertThrows(IllegalArgumentException.class,
                        () -> CmId.checkPrivateDataLength("rdma_connect", 57, CmId.MAX_CONNECT_PRIVATE_DATA, true))
                        .getMessage());
        CmId.checkPrivateDataLength("rdma_accept", 196, CmId.MAX_ACCEPT_PRIVATE_DATA, true);
        assertThrows(IllegalArgumentException.class,
                () -> CmId.checkPrivateDataLength("rdma_reject", 149, CmId.MAX_REJECT_PRIVATE_DATA, true));
        // other transports (iWARP) take more, up to what the uint8_t length can say
        CmId.checkPrivateDataLength("rdma_connect", 255, CmId.MAX_CONNECT_PRIVATE_DATA, false);
        assertEquals("rdma_connect: 256 bytes of private data; at most 255 fit in struct rdma_conn_param",
                assertThrows(IllegalArgumentException.class,
                        () -> CmId.checkPrivateDataLength("rdma_connect", 256, CmId.MAX_CONNECT_PRIVATE_DATA, false))
                        .getMessage());
    }

    @Test
    void timeoutsMustFitInMilliseconds() {
        assertEquals(1, CmId.timeoutMillis(Duration.ofNanos(1)));
        assertEquals(2000, CmId.timeoutMillis(Duration.ofSeconds(2)));
        assertEquals(Integer.MAX_VALUE, CmId.timeoutMillis(Duration.ofMillis(Integer.MAX_VALUE)));
        assertThrows(IllegalArgumentException.class, () -> CmId.timeoutMillis(Duration.ZERO));
        assertThrows(IllegalArgumentException.class, () -> CmId.timeoutMillis(Duration.ofMillis(-5)));
        assertThrows(IllegalArgumentException.class, () -> CmId.timeoutMillis(Duration.ofMillis(Integer.MAX_VALUE + 1L)));
    }

    @Test
    void socketAddressesRoundTripThroughSockaddr() throws Exception {
        assumeTrue(Rdmacm.isAvailable(), "librdmacm not loadable");
        try (Arena arena = Arena.ofConfined()) {
            InetSocketAddress v4 = new InetSocketAddress(InetAddress.getByName("198.18.0.2"), 50_123);
            MemorySegment sa = SocketAddresses.toNative(v4, arena);
            assertEquals(SocketAddresses.AF_INET, sa.get(java.lang.foreign.ValueLayout.JAVA_SHORT, 0));
            // port and address in network byte order, as C has them
            assertEquals((byte) (50_123 >> 8), sa.get(java.lang.foreign.ValueLayout.JAVA_BYTE, 2));
            assertEquals((byte) 198, sa.get(java.lang.foreign.ValueLayout.JAVA_BYTE, 4));
            assertEquals(v4, SocketAddresses.fromNative(sa));

            InetSocketAddress v6 = new InetSocketAddress(InetAddress.getByName("fe80::1"), 7);
            assertEquals(v6, SocketAddresses.fromNative(SocketAddresses.toNative(v6, arena)));
            InetSocketAddress any = new InetSocketAddress(0);
            assertEquals(any.getPort(), SocketAddresses.fromNative(SocketAddresses.toNative(any, arena)).getPort());

            assertNull(SocketAddresses.fromNative(arena.allocate(128)), "AF_UNSPEC is no address");
            assertThrows(IllegalArgumentException.class,
                    () -> SocketAddresses.toNative(InetSocketAddress.createUnresolved("example.invalid", 1), arena));
        }
    }

    @Test
    void errorEventsNameTheEventAndTheErrno() {
        CmEvent addrError = new CmEvent(CmEventType.ADDR_ERROR, -110, null, null, new byte[0], ConnectionParams.DEFAULT);
        assertEquals(110, addrError.errno());
        assertTrue(addrError.isError());
        CmEventException e = assertThrows(CmEventException.class, () -> addrError.require(CmEventType.ADDR_RESOLVED));
        assertEquals("expected RDMA_CM_EVENT_ADDR_RESOLVED, got RDMA_CM_EVENT_ADDR_ERROR: " + VerbsNative.strerror(110)
                + " (errno 110)", e.getMessage());
        assertEquals("RDMA_CM_EVENT_ADDR_ERROR", e.operation());
        assertEquals(110, e.errno());
        assertSame(addrError, e.event());
        assertSame(CmEventType.ADDR_RESOLVED, e.expected());

        CmEvent rejected = new CmEvent(CmEventType.REJECTED, CmEvent.REJECT_CONSUMER_DEFINED, null, null,
                new byte[] {7}, ConnectionParams.DEFAULT);
        assertEquals(0, rejected.errno(), "a reject reason is no errno");
        assertEquals("RDMA_CM_EVENT_REJECTED: reject reason 28 (rejected by the peer)",
                rejected.toException().getMessage());

        CmEvent ok = new CmEvent(CmEventType.ESTABLISHED, 0, null, null, new byte[0], ConnectionParams.DEFAULT);
        assertSame(ok, ok.require(CmEventType.ESTABLISHED));
        assertFalse(ok.isError());
        assertEquals("expected RDMA_CM_EVENT_DISCONNECTED, got RDMA_CM_EVENT_ESTABLISHED",
                assertThrows(CmEventException.class, () -> ok.require(CmEventType.DISCONNECTED)).getMessage());
    }

    @Test
    void eventPrivateDataIsACopy() {
        byte[] data = {1, 2, 3, 0, 0};
        CmEvent event = new CmEvent(CmEventType.CONNECT_REQUEST, 0, null, null, data, ConnectionParams.DEFAULT);
        data[0] = 9;
        assertArrayEquals(new byte[] {1, 2, 3, 0, 0}, event.privateData());
        event.privateData()[1] = 9;
        assertEquals(2, event.privateData()[1]);
        byte[] dst = new byte[4];
        assertEquals(3, event.copyPrivateData(dst, 1));
        assertArrayEquals(new byte[] {0, 1, 2, 3}, dst);
        assertEquals(5, event.privateDataLength());
        assertEquals(event, new CmEvent(CmEventType.CONNECT_REQUEST, 0, null, null, new byte[] {1, 2, 3, 0, 0},
                ConnectionParams.DEFAULT));
        assertTrue(event.toString().contains("5 bytes (010203)"), event.toString());
        assertFalse(Arrays.equals(new byte[0], event.privateData()));
    }

    @Test
    void waitingOnADescriptorTimesOutAndBadDescriptorsGiveErrno() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment pollfd = arena.allocate(Libc.POLLFD);
            pollfd.set(java.lang.foreign.ValueLayout.JAVA_INT, Libc.POLLFD_FD, -1); // ignored by poll(2)
            pollfd.set(java.lang.foreign.ValueLayout.JAVA_SHORT, Libc.POLLFD_EVENTS, Libc.POLLIN);
            long start = System.nanoTime();
            assertEquals(0, Libc.poll(pollfd, 30));
            assertTrue(System.nanoTime() - start >= 25_000_000L, "poll returned before its timeout");
        }
        RdmaCmException e = assertThrows(RdmaCmException.class, () -> Libc.setNonBlocking(-1));
        assertEquals("fcntl(F_GETFL)", e.operation());
        assertEquals(9, e.errno()); // EBADF
    }
}
