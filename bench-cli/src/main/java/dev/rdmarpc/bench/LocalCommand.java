package dev.rdmarpc.bench;

import dev.rdmarpc.bench.load.EchoServer;
import dev.rdmarpc.bench.load.EchoStack;
import dev.rdmarpc.bench.load.MatrixPlan;
import dev.rdmarpc.bench.load.StackOptions;
import dev.rdmarpc.bench.load.TlsSettings;
import dev.rdmarpc.bench.tls.ThrowawayCertificates;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** Server and client in one JVM, on 127.0.0.1 by default: the README's run. */
@Command(name = "local", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"Starts the echo server(s) on 127.0.0.1 (with --transport rdma: the address of the first active",
            "RoCE v2 port) and runs the matrix against them from this JVM.",
            "Closed loop: each of N callers sends its next call when the previous one returns;",
            "with --rate, open loop: calls due on a fixed schedule, latency counted from the due time.",
            "With --workload stream, server streaming instead: per cell, N streams each receive messages of",
            "one size as fast as flow control allows; messages/s, Gb/s of payload, gaps between messages.",
            "With --tls, every connection is TLS 1.3, with a throwaway CA and server certificate made at start.",
            "With the defaults (30 cells of 1s warm-up + 2s measured) it takes about 95 s."})
final class LocalCommand extends MatrixCommand {

    @Option(names = "--address", paramLabel = "IP",
            description = "Address the servers listen on and the client connects to (default: 127.0.0.1; with "
                    + "--transport rdma, the IPv4 address of the first active RoCE v2 port, of --device if given).")
    InetAddress address;

    @Override
    public Integer call() {
        List<EchoStack> stacks = stacks();
        List<EchoServer> servers = new ArrayList<>();
        ThrowawayCertificates certificates = null;
        try {
            MatrixPlan plan = matrix.plan();
            StackOptions options = matrix.stackOptions(plan);
            InetSocketAddress listen = new InetSocketAddress(
                    address != null ? address : matrix.transport.localAddress(matrix.device), 0);
            if (matrix.tls) {
                // Servers and clients alike: the servers show the throwaway chain, the clients trust its CA only.
                certificates = ThrowawayCertificates.create(List.of(listen.getAddress()));
                options = options.withTls(new TlsSettings(certificates.serverCertificateChain(),
                        certificates.serverPrivateKey(), certificates.caCertificate(), true));
            }
            List<InetSocketAddress> addresses = new ArrayList<>();
            for (EchoStack stack : stacks) {
                EchoServer server = startServer(stack, listen, options);
                servers.add(server);
                addresses.add(server.address());
            }
            String where = (listen.getAddress().isLoopbackAddress() ? " loopback " : " ")
                    + listen.getAddress().getHostAddress();
            return measure(stacks, addresses, plan, options, matrix.transport + where + ", server and client in one JVM");
        } finally {
            closeAll(servers);
            closeAll(stacks);
            if (certificates != null) {
                certificates.close();
            }
        }
    }
}
