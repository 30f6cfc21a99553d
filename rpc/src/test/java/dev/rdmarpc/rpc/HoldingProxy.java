package dev.rdmarpc.rpc;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A loopback TCP proxy that holds each connection it accepts for a while before it forwards a byte
 * either way: a TLS handshake through it takes at least that long. Bounded: it forwards until either
 * side closes, and {@link #close} ends every connection.
 */
final class HoldingProxy implements AutoCloseable {
    private final ServerSocket listener;
    private final InetSocketAddress target;
    private final Duration hold;
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();
    private final Thread acceptor;

    HoldingProxy(InetSocketAddress target, Duration hold) throws IOException {
        this(target.getAddress(), target, hold);
    }

    /** @param bind the address it listens on (a free port) */
    HoldingProxy(InetAddress bind, InetSocketAddress target, Duration hold) throws IOException {
        this.target = target;
        this.hold = hold;
        this.listener = new ServerSocket(0, 16, bind);
        this.acceptor = Thread.ofVirtual().name("holding-proxy").start(this::acceptLoop);
    }

    /** @return where clients connect */
    InetSocketAddress address() {
        return new InetSocketAddress(listener.getInetAddress(), listener.getLocalPort());
    }

    private void acceptLoop() {
        while (!listener.isClosed()) {
            try {
                Socket client = listener.accept();
                sockets.add(client);
                Thread.ofVirtual().start(() -> serve(client));
            } catch (IOException e) {
                return;
            }
        }
    }

    private void serve(Socket client) {
        try {
            Thread.sleep(hold.toMillis());
            Socket server = new Socket(target.getAddress(), target.getPort());
            sockets.add(server);
            Thread.ofVirtual().start(() -> pump(server, client));
            pump(client, server);
        } catch (IOException | InterruptedException e) {
            closeQuietly(client);
        }
    }

    private void pump(Socket from, Socket to) {
        byte[] buf = new byte[64 * 1024];
        try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
            for (int n; (n = in.read(buf)) >= 0; ) {
                out.write(buf, 0, n);
            }
        } catch (IOException e) {
            // either side closed
        } finally {
            closeQuietly(from);
            closeQuietly(to);
        }
    }

    private static void closeQuietly(Socket s) {
        try {
            s.close();
        } catch (IOException e) {
            // closing
        }
    }

    @Override
    public void close() throws IOException {
        listener.close();
        acceptor.interrupt();
        for (Socket s : sockets) {
            closeQuietly(s);
        }
    }
}
