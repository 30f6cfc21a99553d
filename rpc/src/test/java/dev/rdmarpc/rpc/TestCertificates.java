package dev.rdmarpc.rpc;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * Certificates made at run time with the running JDK's {@code keytool} (never fetched): a test CA,
 * and keys it signs, in PKCS#12 stores and as PEM files (the private key in PKCS#8).
 */
public final class TestCertificates {
    public static final String PASSWORD = "changeit";
    private final Path dir;

    public TestCertificates(Path dir) {
        this.dir = dir;
    }

    /** keytool's options whose values are files: made absolute, since the in-process tool resolves them from the JVM's directory. */
    private static final Set<String> FILE_OPTIONS = Set.of("-keystore", "-file", "-infile", "-outfile");

    /**
     * Runs the JDK's keytool with these arguments in the directory; fails with its output. It runs in this JVM
     * when the test JVM exports {@code sun.security.tools.keytool} to this module (the rpc module's Surefire
     * configuration does): in the Soft-RoCE VM's emulated CPU a keytool JVM takes about 20 s to start, and
     * RdmaTlsTest needs a dozen. Elsewhere it starts the JDK's keytool command.
     */
    private void keytool(String... args) throws Exception {
        String[] resolved = args.clone();
        for (int i = 0; i + 1 < resolved.length; i++) {
            if (FILE_OPTIONS.contains(resolved[i])) {
                resolved[i + 1] = dir.resolve(resolved[i + 1]).toString();
            }
        }
        Class<?> tool = Class.forName("sun.security.tools.keytool.Main");
        if (getClass().getModule().canRead(tool.getModule()) && tool.getModule().isExported(tool.getPackageName(), getClass().getModule())) {
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            int rc;
            try (PrintStream ps = new PrintStream(out, true, StandardCharsets.UTF_8)) {
                rc = (int) tool.getMethod("run", String[].class, PrintStream.class)
                        .invoke(tool.getConstructor().newInstance(), resolved, ps);
            }
            if (rc != 0) {
                throw new IOException("keytool " + String.join(" ", args) + " failed (" + rc + "): " + out.toString(StandardCharsets.UTF_8));
            }
            return;
        }
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "keytool").toString());
        // a short-lived JVM each: the C1 compiler only and the serial collector start it fastest
        cmd.addAll(List.of("-J-XX:TieredStopAtLevel=1", "-J-XX:+UseSerialGC"));
        cmd.addAll(List.of(resolved));
        Process p = new ProcessBuilder(cmd).directory(dir.toFile()).redirectErrorStream(true).start();
        byte[] out = p.getInputStream().readAllBytes();
        if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
            throw new IOException("keytool " + String.join(" ", args) + " failed: " + new String(out, StandardCharsets.UTF_8));
        }
    }

    /** A self-signed CA named {@code name}: {@code name.p12} and {@code name.pem}. */
    public Path ca(String name) throws Exception {
        keytool("-genkeypair", "-alias", name, "-keyalg", "EC", "-groupname", "secp256r1", "-dname", "CN=" + name,
                "-ext", "bc:c", "-validity", "2", "-keystore", name + ".p12", "-storetype", "PKCS12", "-storepass", PASSWORD);
        keytool("-exportcert", "-alias", name, "-keystore", name + ".p12", "-storepass", PASSWORD, "-rfc", "-file", name + ".pem");
        return dir.resolve(name + ".pem");
    }

    /**
     * A key {@code name} signed by CA {@code ca}, for the names in {@code san} (e.g.
     * {@code ip:127.0.0.1,dns:localhost}, or null for none), valid from {@code startDate} (keytool's
     * form, e.g. {@code -3d}; null for now) for {@code days}: {@code name.p12} (key and chain),
     * {@code name.crt} (the chain, PEM) and {@code name.key} (PKCS#8 PEM).
     */
    public KeyStore key(String name, String ca, String san, String startDate, int days) throws Exception {
        List<String> gen = new ArrayList<>(List.of("-genkeypair", "-alias", name, "-keyalg", "EC", "-groupname", "secp256r1",
                "-dname", "CN=" + name, "-validity", String.valueOf(days + 1), "-keystore", name + ".p12", "-storetype",
                "PKCS12", "-storepass", PASSWORD));
        keytool(gen.toArray(new String[0]));
        keytool("-certreq", "-alias", name, "-keystore", name + ".p12", "-storepass", PASSWORD, "-file", name + ".csr");
        List<String> sign = new ArrayList<>(List.of("-gencert", "-alias", ca, "-keystore", ca + ".p12", "-storepass", PASSWORD,
                "-infile", name + ".csr", "-outfile", name + ".signed.pem", "-rfc", "-validity", String.valueOf(days)));
        if (san != null) {
            sign.addAll(List.of("-ext", "san=" + san));
        }
        if (startDate != null) {
            sign.addAll(List.of("-startdate", startDate));
        }
        keytool(sign.toArray(new String[0]));
        keytool("-importcert", "-alias", ca, "-file", ca + ".pem", "-keystore", name + ".p12", "-storepass", PASSWORD, "-noprompt");
        keytool("-importcert", "-alias", name, "-file", name + ".signed.pem", "-keystore", name + ".p12", "-storepass", PASSWORD,
                "-noprompt");
        KeyStore ks = KeyStore.getInstance("PKCS12");
        try (InputStream in = Files.newInputStream(dir.resolve(name + ".p12"))) {
            ks.load(in, PASSWORD.toCharArray());
        }
        PrivateKey key = (PrivateKey) ks.getKey(name, PASSWORD.toCharArray());
        Files.writeString(dir.resolve(name + ".key"), "-----BEGIN PRIVATE KEY-----\n"
                + Base64.getMimeEncoder(64, new byte[] {'\n'}).encodeToString(key.getEncoded()) + "\n-----END PRIVATE KEY-----\n");
        StringBuilder chain = new StringBuilder();
        for (java.security.cert.Certificate c : ks.getCertificateChain(name)) {
            chain.append("-----BEGIN CERTIFICATE-----\n")
                    .append(Base64.getMimeEncoder(64, new byte[] {'\n'}).encodeToString(c.getEncoded()))
                    .append("\n-----END CERTIFICATE-----\n");
        }
        Files.writeString(dir.resolve(name + ".crt"), chain);
        return ks;
    }

    public Path crt(String name) {
        return dir.resolve(name + ".crt");
    }

    public Path pkcs8(String name) {
        return dir.resolve(name + ".key");
    }
}
