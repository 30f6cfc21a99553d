package dev.rdmarpc.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.rdmarpc.bench.tls.ThrowawayCertificates;
import java.io.OutputStream;
import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyFactory;
import java.security.KeyPairGenerator;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.security.spec.ECGenParameterSpec;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.Base64;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** {@code doctor}'s TLS checks: good files load and are described, bad ones say why not and exit 1. */
@Timeout(120)
class DoctorTlsTest {
    static ThrowawayCertificates certs;
    @TempDir
    static Path dir;

    @BeforeAll
    static void makeCertificates() {
        certs = ThrowawayCertificates.create(List.of(InetAddress.getLoopbackAddress()));
    }

    @AfterAll
    static void removeCertificates() {
        certs.close();
    }

    /** The part of doctor's report from its TLS section to the end. */
    private static String tlsSection(BenchCliTest.Run r) {
        int at = r.out().indexOf("\nTLS\n");
        assertTrue(at >= 0, r.out() + r.err());
        return r.out().substring(at + 1);
    }

    @Test
    void aGoodKeyAndCertificateAndTrustFileLoad() {
        BenchCliTest.Run r = BenchCliTest.run("doctor", "--tls-cert", certs.serverCertificateChain().toString(),
                "--tls-key", certs.serverPrivateKey().toString(), "--tls-trust", certs.caCertificate().toString());
        assertEquals(0, r.code(), r.out() + r.err());
        String tls = tlsSection(r);
        assertTrue(tls.contains("key and certificate (" + certs.serverCertificateChain()), tls);
        assertTrue(tls.contains("): loaded\n"), tls);
        assertTrue(tls.contains("subject     CN=rdmarpc bench server"), tls);
        assertTrue(tls.contains("issuer      CN=rdmarpc bench throwaway CA"), tls);
        assertTrue(tls.matches("(?s).*valid       from \\S+ \\S+ UTC until \\S+ \\S+ UTC \\(expires in \\d+ day\\(s\\)\\).*"), tls);
        assertTrue(tls.contains("key         EC secp256r1 (256 bits)"), tls);
        assertTrue(tls.contains("names       IP 127.0.0.1, DNS localhost"), tls);
        assertTrue(tls.contains("handshake   a TLS 1.3 handshake on loopback with this key and certificate works"), tls);
        assertTrue(tls.contains("trusted issuers (" + certs.caCertificate() + "): loaded"), tls);
        assertTrue(tls.contains("trusts      CN=rdmarpc bench throwaway CA (a CA)"), tls);
        assertFalse(tls.contains("CANNOT"), tls);
    }

    @Test
    void aKeyThatIsNotTheCertificatesIsCaught() throws Exception {
        KeyPairGenerator g = KeyPairGenerator.getInstance("EC");
        g.initialize(new ECGenParameterSpec("secp256r1"));
        Path other = dir.resolve("other.key");
        Files.writeString(other, pem("PRIVATE KEY", g.generateKeyPair().getPrivate().getEncoded()));
        BenchCliTest.Run r = BenchCliTest.run("doctor", "--tls-cert", certs.serverCertificateChain().toString(),
                "--tls-key", other.toString());
        assertEquals(1, r.code(), r.out() + r.err());
        String tls = tlsSection(r);
        assertTrue(tls.contains("CANNOT BE USED - the private key does not belong to the certificate"), tls);
        assertTrue(tls.contains("- the TLS key and certificate given cannot be used: "), "in the summary too: " + tls);
        assertFalse(r.err().contains("WARNING"), "the probe's own failure is not logged: " + r.err());
    }

    @Test
    void filesThatAreNotPemSayWhy() throws Exception {
        Path junk = dir.resolve("junk.pem");
        Files.writeString(junk, "not a certificate\n");
        BenchCliTest.Run r = BenchCliTest.run("doctor", "--tls-trust", junk.toString(), "--tls-cert", junk.toString(),
                "--tls-key", certs.serverPrivateKey().toString());
        assertEquals(1, r.code(), r.out() + r.err());
        String tls = tlsSection(r);
        assertTrue(tls.contains("trusted issuers (" + junk + "): CANNOT BE USED - cannot read the certificates in " + junk), tls);
        assertTrue(tls.contains("key and certificate (" + junk + ", " + certs.serverPrivateKey()
                + "): CANNOT BE USED - cannot read the certificates in " + junk), tls);
        BenchCliTest.Run key = BenchCliTest.run("doctor", "--tls-cert", certs.serverCertificateChain().toString(),
                "--tls-key", certs.serverCertificateChain().toString());
        assertEquals(1, key.code());
        assertTrue(tlsSection(key).contains("an unencrypted PKCS#8 key is needed"), tlsSection(key));
    }

    @Test
    void aKeyStoreLoadsWithItsPasswordAndNotWithAnother() throws Exception {
        Path store = dir.resolve("server.p12");
        KeyStore ks = KeyStore.getInstance("PKCS12");
        ks.load(null, null);
        List<? extends Certificate> chain;
        try (var in = Files.newInputStream(certs.serverCertificateChain())) {
            chain = List.copyOf(CertificateFactory.getInstance("X.509").generateCertificates(in));
        }
        String pem = Files.readString(certs.serverPrivateKey());
        byte[] der = Base64.getMimeDecoder().decode(pem.replaceAll("-----[A-Z ]+-----", ""));
        PrivateKey key = KeyFactory.getInstance("EC").generatePrivate(new PKCS8EncodedKeySpec(der));
        ks.setKeyEntry("server", key, "s3cret".toCharArray(), chain.toArray(new Certificate[0]));
        try (OutputStream out = Files.newOutputStream(store)) {
            ks.store(out, "s3cret".toCharArray());
        }
        BenchCliTest.Run good = BenchCliTest.run("doctor", "--tls-keystore", store.toString(), "--tls-keystore-password", "s3cret");
        assertEquals(0, good.code(), good.out() + good.err());
        assertTrue(tlsSection(good).contains("key store (" + store + "): loaded"), tlsSection(good));
        assertTrue(tlsSection(good).contains("key entries: server"), tlsSection(good));
        assertTrue(tlsSection(good).contains("handshake   a TLS 1.3 handshake"), tlsSection(good));
        BenchCliTest.Run bad = BenchCliTest.run("doctor", "--tls-keystore", store.toString(), "--tls-keystore-password", "wrong");
        assertEquals(1, bad.code(), bad.out() + bad.err());
        assertTrue(tlsSection(bad).contains("CANNOT BE USED - cannot open the key store " + store + ": the password is wrong"),
                tlsSection(bad));
    }

    @Test
    void tlsOptionsComeInPairs() {
        BenchCliTest.Run r = BenchCliTest.run("doctor", "--tls-key", certs.serverPrivateKey().toString());
        assertEquals(2, r.code());
        assertTrue(r.err().contains("--tls-key needs --tls-cert"), r.err());
        BenchCliTest.Run p = BenchCliTest.run("doctor", "--tls-keystore-password", "x");
        assertEquals(2, p.code());
        assertTrue(p.err().contains("--tls-keystore-password only applies with --tls-keystore"), p.err());
    }

    private static String pem(String type, byte[] der) {
        return "-----BEGIN " + type + "-----\n" + Base64.getMimeEncoder(64, new byte[] {'\n'}).encodeToString(der)
                + "\n-----END " + type + "-----\n";
    }
}
