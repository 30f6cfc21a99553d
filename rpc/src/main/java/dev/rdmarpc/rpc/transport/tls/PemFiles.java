package dev.rdmarpc.rpc.transport.tls;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.PrivateKey;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collection;
import java.util.List;

/** Reads the PEM files a {@link TlsConfig} is made from: failures name the file and what is wrong with it. */
final class PemFiles {
    private PemFiles() {
    }

    static List<Certificate> certificates(Path file) {
        try (InputStream in = Files.newInputStream(file)) {
            Collection<? extends Certificate> certs = CertificateFactory.getInstance("X.509").generateCertificates(in);
            if (certs.isEmpty()) {
                throw new IllegalArgumentException("no certificate in " + file);
            }
            return new ArrayList<>(certs);
        } catch (IOException | GeneralSecurityException e) {
            throw new IllegalArgumentException("cannot read the certificates in " + file + ": " + e.getMessage(), e);
        }
    }

    static PrivateKey privateKey(Path file) {
        String pem;
        try {
            pem = Files.readString(file, StandardCharsets.US_ASCII);
        } catch (IOException e) {
            throw new IllegalArgumentException("cannot read the private key in " + file + ": " + e.getMessage(), e);
        }
        String begin = "-----BEGIN PRIVATE KEY-----";
        int from = pem.indexOf(begin);
        int to = pem.indexOf("-----END PRIVATE KEY-----");
        if (from < 0 || to < from) {
            String kind = pem.contains("ENCRYPTED PRIVATE KEY") ? "an encrypted key"
                    : pem.contains("RSA PRIVATE KEY") || pem.contains("EC PRIVATE KEY") ? "a key in the older PKCS#1 or SEC1 form"
                    : "no private key";
            throw new IllegalArgumentException(file + " holds " + kind + "; an unencrypted PKCS#8 key is needed"
                    + " (openssl pkcs8 -topk8 -nocrypt -in KEY -out KEY.pk8), or use a key store");
        }
        byte[] der = Base64.getMimeDecoder().decode(pem.substring(from + begin.length(), to));
        PKCS8EncodedKeySpec spec = new PKCS8EncodedKeySpec(der);
        for (String alg : new String[] {"RSA", "EC", "Ed25519", "Ed448", "RSASSA-PSS"}) {
            try {
                return KeyFactory.getInstance(alg).generatePrivate(spec);
            } catch (GeneralSecurityException e) {
                // try the next algorithm
            }
        }
        throw new IllegalArgumentException("the private key in " + file + " is not an RSA, EC or EdDSA key this JDK reads");
    }
}
