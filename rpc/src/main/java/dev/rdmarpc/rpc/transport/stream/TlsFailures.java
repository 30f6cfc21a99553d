package dev.rdmarpc.rpc.transport.stream;

import dev.rdmarpc.rpc.transport.CertificateRefusedException;
import dev.rdmarpc.rpc.transport.ResourceExhaustedException;
import dev.rdmarpc.rpc.transport.tls.TlsConfig;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;

/**
 * How a transport's TLS handshakes end badly: a connecting side waits for its handshake
 * and fails with the reason ({@link #awaitHandshake}); a server counts and logs the accepted
 * connections that closed before theirs was done.
 */
public final class TlsFailures {
    private static final System.Logger LOG = System.getLogger("dev.rdmarpc.rpc.transport.tcp.TcpTransport");

    private final AtomicLong failures = new AtomicLong();
    private final SparseLog log = new SparseLog();

    /**
     * An accepted connection closed before its TLS handshake was done: counted, and logged at
     * WARNING with its reason at most every 10 s (a port scanner must not flood the log).
     */
    void failed(InetSocketAddress peer, Throwable cause) {
        failures.incrementAndGet();
        long since = log.occurred();
        if (since > 0) {
            LOG.log(System.Logger.Level.WARNING, "TLS handshake with " + peer + " failed: "
                    + (cause == null ? "closed before it was done" : TlsConfig.describe(cause))
                    + (since > 1 ? " (" + since + " failed handshakes since the last such message)" : ""));
        }
    }

    /** @return accepted connections that closed before their TLS handshake was done */
    public long count() {
        return failures.get();
    }

    /** Waits for a connected TLS connection's handshake: its failure, or the timeout, fails the connect with the reason. */
    public static void awaitHandshake(TcpConnection c, InetSocketAddress address, Duration timeout) throws IOException {
        try {
            c.secured().get(Math.max(1, timeout.toMillis()), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            c.close(e);
            throw new InterruptedIOException("interrupted during the TLS handshake with " + address);
        } catch (TimeoutException e) {
            c.close(new IOException("TLS handshake timed out"));
            throw new IOException("the TLS handshake with " + address + " did not complete within " + timeout.toMillis()
                    + " ms (a server that does not speak TLS?)", e);
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            String msg = "the TLS handshake with " + address + " failed: " + TlsConfig.describe(cause);
            if (cause instanceof ResourceExhaustedException) {
                throw new ResourceExhaustedException(msg); // refused before the handshake, over a limit
            }
            if (cause instanceof CertificateRefusedException) {
                throw new CertificateRefusedException(cause.getMessage(), cause);
            }
            throw new IOException(msg, cause);
        }
    }
}
