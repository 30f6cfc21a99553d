package dev.rdmarpc.rpc.transport.tcp;

import javax.net.ssl.SSLException;

/** Reads a TLS 1.3 server's alert after a client's handshake: is it a refusal of the client's certificate, and why. */
final class CertificateRefusal {
    private CertificateRefusal() {
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
