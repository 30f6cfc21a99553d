package dev.rdmarpc.rpc.transport.stream;

import dev.rdmarpc.posix.Posix;
import dev.rdmarpc.posix.Sockets;
import dev.rdmarpc.rpc.TestCertificates;
import dev.rdmarpc.rpc.transport.ProtocolException;
import dev.rdmarpc.rpc.transport.loop.PolledSocket;
import dev.rdmarpc.rpc.transport.tls.TlsConfig;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The TLS wire over {@link PolledSocket}s (raw descriptors a loop polls with {@code poll(2)}) as over
 * a {@code SocketChannel}: a handshake, bytes both ways, and a client without TLS refused with the
 * reason a plain peer reads.
 */
class TlsWireOverPolledSocketTest {
    private static TlsConfig tls;

    private int listener = -1;
    private PolledSocket client;
    private PolledSocket server;

    @BeforeAll
    static void certificates() throws Exception {
        Path dir = Files.createTempDirectory("rdmarpc-tls-polled");
        TestCertificates certs = new TestCertificates(dir);
        Path ca = certs.ca("polled-ca");
        KeyStore keys = certs.key("polled-server", "polled-ca", "ip:127.0.0.1", null, 2);
        tls = TlsConfig.forServer(keys, TestCertificates.PASSWORD.toCharArray()).trust(ca);
    }

    @AfterEach
    void close() {
        if (client != null) {
            client.close();
        }
        if (server != null) {
            server.close();
        }
        if (listener >= 0) {
            Posix.close(listener);
        }
    }

    private void connect() throws IOException {
        listener = Sockets.listen(new InetSocketAddress("127.0.0.1", 0), 4);
        client = PolledSocket.connect(Sockets.localAddress(listener));
        long deadline = System.nanoTime() + 5_000_000_000L;
        int fd = -1;
        while (fd < 0 || !client.finishConnect()) {
            assertTrue(System.nanoTime() < deadline, "connected within 5 s");
            if (fd < 0) {
                fd = Sockets.accept(listener);
            }
            Thread.onSpinWait();
        }
        server = PolledSocket.accepted(fd);
    }

    /** Reads and flushes both wires until {@code done} or 10 s: what each read, in {@code in[0]} and {@code in[1]}. */
    private static void pump(Wire a, Wire b, ByteBuffer[] in, java.util.function.BooleanSupplier done) throws IOException {
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (!done.getAsBoolean()) {
            assertTrue(System.nanoTime() < deadline, "not done within 10 s");
            a.flushPending();
            b.flushPending();
            a.read(in[0]);
            b.read(in[1]);
        }
    }

    @Test
    void aHandshakeAndBytesBothWays() throws Exception {
        connect();
        TlsWire c = new TlsWire(client, tls, true, client.remoteAddress(), () -> { });
        TlsWire s = new TlsWire(server, tls, false, server.remoteAddress(), () -> { });
        c.begin();
        s.begin();
        ByteBuffer[] in = {ByteBuffer.allocateDirect(64 * 1024), ByteBuffer.allocateDirect(64 * 1024)};
        pump(c, s, in, () -> c.ready() && s.ready());
        assertEquals("CN=polled-server", c.session().getPeerPrincipal().getName());

        byte[] hello = "hello over a polled socket".getBytes(StandardCharsets.US_ASCII);
        ByteBuffer big = ByteBuffer.allocateDirect(200_000); // several records, more than one write takes
        for (int i = 0; i < big.capacity(); i++) {
            big.put(i, (byte) i);
        }
        ByteBuffer[] out = {ByteBuffer.allocateDirect(hello.length).put(hello).flip(), big};
        long taken = 0;
        long deadline = System.nanoTime() + 10_000_000_000L;
        ByteBuffer got = ByteBuffer.allocateDirect(hello.length + big.capacity());
        while (got.hasRemaining()) {
            assertTrue(System.nanoTime() < deadline, "all bytes within 10 s: " + got);
            if (out[1].hasRemaining()) {
                taken += c.write(out, 0, 2);
            }
            c.flushPending();
            s.read(got);
        }
        assertEquals(hello.length + big.capacity(), taken);
        byte[] first = new byte[hello.length];
        got.flip().get(first);
        assertEquals("hello over a polled socket", new String(first, StandardCharsets.US_ASCII));
        for (int i = 0; i < big.capacity(); i++) {
            assertEquals((byte) i, got.get(), "byte " + i);
        }

        ByteBuffer back = ByteBuffer.allocateDirect(3).put(new byte[] {1, 2, 3}).flip();
        assertEquals(3, s.write(new ByteBuffer[] {back}, 0, 1));
        ByteBuffer[] both = {ByteBuffer.allocateDirect(8), ByteBuffer.allocateDirect(8)};
        pump(c, s, both, () -> both[0].position() == 3);
        assertEquals(2, both[0].get(1));
    }

    @Test
    void aClientWithoutTlsIsRefusedWithAReasonItReads() throws Exception {
        connect();
        TlsWire s = new TlsWire(server, tls, false, server.remoteAddress(), () -> { });
        s.begin();
        PlainWire c = new PlainWire(client);
        // a frame header's magic, as a plain rdmarpc client sends first
        ByteBuffer magic = ByteBuffer.allocateDirect(16).put("RDMR".getBytes(StandardCharsets.US_ASCII)).put(new byte[12]).flip();
        assertEquals(16, c.write(new ByteBuffer[] {magic}, 0, 1));
        ProtocolException refused = null;
        long deadline = System.nanoTime() + 5_000_000_000L;
        while (refused == null) {
            assertTrue(System.nanoTime() < deadline, "refused within 5 s");
            try {
                s.read(ByteBuffer.allocateDirect(1024));
            } catch (ProtocolException e) {
                refused = e;
            }
        }
        assertTrue(refused.getMessage().contains("without TLS"), refused.getMessage());
        assertFalse(s.ready());
        assertTrue(s.lastWordWire() instanceof PlainWire, "a server that sent no TLS bytes answers in plain");
    }
}
