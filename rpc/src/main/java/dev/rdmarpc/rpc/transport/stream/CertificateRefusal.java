package dev.rdmarpc.rpc.transport.stream;

import dev.rdmarpc.rpc.transport.tls.TlsConfig;
import java.net.InetSocketAddress;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLSession;

/**
 * The refusal of a client's certificate: on a server, what its {@link TlsConfig.ClientCheck} says of a
 * client; on a client, a TLS 1.3 server's alert after the handshake: is it such a refusal, and why.
 */
final class CertificateRefusal {
    private static final System.Logger LOG = System.getLogger(TlsWire.class.getName());

    private CertificateRefusal() {
    }

    /** @return why the server's {@code check} refuses the client of {@code session}, or null when it may go on */
    static String byCheck(TlsConfig.ClientCheck check, SSLSession session, InetSocketAddress peer) {
        try {
            return check.refusal(session, peer).orElse(null);
        } catch (Exception e) {
            LOG.log(System.Logger.Level.WARNING, "the check of TLS client " + peer + " failed; refusing it", e);
            return "the server's check of its clients failed";
        }
    }

    /** @return true when {@code e} is the server's alert about this client's certificate or its lack of one */
    static boolean isOne(SSLException e) {
        String m = String.valueOf(e.getMessage());
        return m.contains("certificate") || m.contains("unknown_ca") || m.contains("access_denied");
    }

    /** @return a sentence saying that the server refused this client's certificate and, as far as its alert tells, why */
    static String describe(SSLException e) {
        String m = String.valueOf(e.getMessage());
        String why;
        if (m.contains("certificate_required")) {
            why = "it requires a client certificate from an issuer it trusts, and this client showed none: it has no"
                    + " certificate (TlsConfig.keys), or none from an issuer the server trusts";
        } else if (m.contains("unknown_ca") || m.contains("certificate_unknown") || m.contains("bad_certificate")) {
            why = "it does not trust it (not issued by an issuer the server trusts, or not valid for a client)";
        } else if (m.contains("certificate_expired")) {
            why = "it has expired";
        } else if (m.contains("certificate_revoked")) {
            why = "it has been revoked";
        } else if (m.contains("unsupported_certificate")) {
            why = "it is of a kind the server does not take";
        } else {
            why = "see its alert";
        }
        return "the server refused this client's certificate: " + why + " (" + m + ")";
    }
}
