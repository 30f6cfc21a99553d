package dev.rdmarpc.bench;

import dev.rdmarpc.bench.load.CpuMeter;
import dev.rdmarpc.bench.load.EchoStack;
import dev.rdmarpc.bench.load.MatrixPlan;
import dev.rdmarpc.bench.load.StackOptions;
import dev.rdmarpc.bench.load.TlsSettings;
import dev.rdmarpc.rpc.transport.tls.TlsConfig;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** The matrix against servers started elsewhere with {@code bench-cli server}. */
@Command(name = "client", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"Runs the matrix against echo server(s) started with `bench-cli server`.",
            "Closed loop: each of N callers sends its next call when the previous one returns;",
            "with --rate, open loop: calls due on a fixed schedule, latency counted from the due time.",
            "With --workload stream, server streaming instead: per cell, N streams each receive messages of",
            "one size as fast as flow control allows; messages/s, Gb/s of payload, gaps between messages.",
            "With --tls, connects over TLS 1.3 to servers started with `bench-cli server --tls`."})
final class ClientCommand extends MatrixCommand {

    @Option(names = "--connect", defaultValue = "127.0.0.1:" + ServerCommand.DEFAULT_PORT, paramLabel = "HOST:PORT",
            converter = Converters.Address.class, description = "The rdmarpc echo server (default: ${DEFAULT-VALUE}).")
    InetSocketAddress connect;

    @Option(names = "--grpc-connect", paramLabel = "HOST:PORT", converter = Converters.Address.class,
            description = "The gRPC echo server for --baseline grpc or grpc-rdmarpc (default: the --connect host, port + 1 for "
                    + "grpc, + 3 for grpc-rdmarpc).")
    InetSocketAddress grpcConnect;

    @Option(names = "--netty-connect", paramLabel = "HOST:PORT", converter = Converters.Address.class,
            description = "The Netty echo server for --baseline netty (default: the --connect host, port + 2).")
    InetSocketAddress nettyConnect;

    @Option(names = "--tls-trust", paramLabel = "FILE",
            description = "With --tls: PEM file of the issuers whose certificates to accept, and only these: the CA file "
                    + "that `bench-cli server --tls` printed, or your own CA's (default: the JDK's trusted issuers, cacerts).")
    Path tlsTrust;

    @Option(names = "--tls-no-verify-hostname",
            description = "With --tls: accept a server certificate that does not name the host or address connected to "
                    + "(it must still come from a trusted issuer), e.g. a server reached through another address than "
                    + "its certificate lists (default: the name is checked).")
    boolean tlsNoVerifyHostname;

    @Option(names = "--server-pid", paramLabel = "PID",
            description = "The process id of the server (`bench-cli server`) when it runs on this host: each cell then "
                    + "reports that process's CPU time per call too (srv-cpu/call), beside this process's (cpu/call).")
    Long serverPid;

    @Override
    public Integer call() {
        for (InetSocketAddress a : new InetSocketAddress[] {connect, grpcConnect, nettyConnect}) {
            if (a != null && a.getPort() == 0) {
                throw new picocli.CommandLine.ParameterException(spec.commandLine(),
                        "port 0 is not a server's port: give the port the server printed");
            }
        }
        TlsSettings tls = tlsSettings();
        InetSocketAddress baselineConnect = MatrixOptions.baselineAddress(spec, matrix.baseline, connect, "connect",
                grpcConnect, nettyConnect);
        CpuMeter cpu = CpuMeter.SELF;
        if (serverPid != null) {
            try {
                cpu = CpuMeter.withServer(serverPid);
            } catch (IllegalArgumentException e) {
                throw new picocli.CommandLine.ParameterException(spec.commandLine(), "--server-pid: " + e.getMessage());
            }
        }
        List<EchoStack> stacks = stacks();
        try {
            MatrixPlan plan = matrix.plan();
            StackOptions options = matrix.stackOptions(plan).withTls(tls);
            List<InetSocketAddress> addresses = new ArrayList<>();
            addresses.add(connect);
            if (baselineConnect != null) {
                addresses.add(baselineConnect);
            }
            return measure(stacks, addresses, plan, options, matrix.transport + " to " + show(connect)
                    + (stacks.size() > 1 ? " and " + show(addresses.get(1)) : "") + ", server in another process", cpu);
        } finally {
            closeAll(stacks);
        }
    }

    /**
     * The client's TLS from {@code --tls}, {@code --tls-trust} and {@code --tls-no-verify-hostname}, its trust
     * file read once here so that a bad one is a bad option (exit 2); null without {@code --tls}.
     */
    TlsSettings tlsSettings() {
        if (!matrix.tls) {
            if (tlsTrust != null || tlsNoVerifyHostname) {
                throw new picocli.CommandLine.ParameterException(spec.commandLine(),
                        (tlsTrust != null ? "--tls-trust" : "--tls-no-verify-hostname") + " only applies with --tls");
            }
            return null;
        }
        if (tlsTrust != null) {
            try {
                TlsConfig.forClient().trust(tlsTrust);
            } catch (IllegalArgumentException e) {
                throw new picocli.CommandLine.ParameterException(spec.commandLine(), "--tls-trust: " + e.getMessage());
            }
        }
        return new TlsSettings(null, null, tlsTrust, !tlsNoVerifyHostname);
    }
}
