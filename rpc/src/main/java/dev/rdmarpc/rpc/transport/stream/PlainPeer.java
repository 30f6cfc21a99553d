package dev.rdmarpc.rpc.transport.stream;

import dev.rdmarpc.rpc.transport.ProtocolException;
import dev.rdmarpc.rpc.transport.frame.ConnectionErrors;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import javax.net.ssl.SSLException;

/** A TLS connection's peer that sent plain rdmarpc where a TLS record belongs: how a {@link TlsWire} tells, and what it fails with. */
final class PlainPeer {
    private PlainPeer() {
    }

    /** @return true when the bytes in hand ({@code netIn}, write mode) begin with this protocol's magic: the peer speaks plain rdmarpc */
    static boolean startsWithFrame(ByteBuffer netIn) {
        return netIn.position() >= 4 && netIn.get(0) == 'R' && netIn.get(1) == 'D' && netIn.get(2) == 'M' && netIn.get(3) == 'R';
    }

    /**
     * The peer sent a plain rdmarpc frame where a TLS record belongs. On a server: a client without
     * TLS, refused with a reason it can read ({@code TlsWire.lastWordWire} answers in plain). On a client:
     * the server has no TLS, or refused this connection before its handshake (over a connection
     * limit); its frame says why.
     *
     * @return the failure to throw, or null while a client waits for the rest of the frame
     */
    static IOException failure(boolean client, ByteBuffer netIn) {
        if (!client) {
            return new ProtocolException("a client without TLS connected to this server, which requires TLS:"
                    + " turn TLS on for the client (TcpConfig.tls), or off for the server");
        }
        String prefix = "the server answered without TLS, in plain rdmarpc: ";
        IOException said = ConnectionErrors.exception(MemorySegment.ofBuffer(netIn.duplicate().flip()), 0, netIn.position(),
                prefix, SSLException::new);
        if (said != null || netIn.hasRemaining()) {
            return said; // null: the rest of it is on its way
        }
        return new SSLException(prefix + "it has no TLS, or refused this connection before its handshake");
    }
}
