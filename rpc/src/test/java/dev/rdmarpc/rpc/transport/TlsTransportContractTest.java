package dev.rdmarpc.rpc.transport;

import dev.rdmarpc.rpc.TestCertificates;
import dev.rdmarpc.rpc.transport.tcp.TcpConfig;
import dev.rdmarpc.rpc.transport.tcp.TcpTransport;
import dev.rdmarpc.rpc.transport.tls.TlsConfig;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;

/**
 * The transport contract, answered by TCP over TLS (issue 18): one transport that serves with a
 * test CA's certificate for 127.0.0.1 and connects trusting that CA, so every frame of the contract
 * goes through the TLS wire both ways.
 */
class TlsTransportContractTest extends TransportContractTest {
    private static TlsConfig tls;

    private static synchronized TlsConfig tls() {
        if (tls == null) {
            try {
                Path dir = Files.createTempDirectory("rdmarpc-tls-contract");
                TestCertificates certs = new TestCertificates(dir);
                Path ca = certs.ca("contract-ca");
                KeyStore keys = certs.key("contract-server", "contract-ca", "ip:127.0.0.1", null, 2);
                tls = TlsConfig.forServer(keys, TestCertificates.PASSWORD.toCharArray()).trust(ca);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            } catch (Exception e) {
                throw new IllegalStateException("cannot make the test certificates", e);
            }
        }
        return tls;
    }

    @Override
    protected Transport createTransport() {
        return TcpTransport.create(new TcpConfig().loop(l -> l.ioThreads(2)).tls(tls()));
    }

    @Override
    protected InetSocketAddress listenAddress() {
        return new InetSocketAddress("127.0.0.1", 0);
    }
}
