package dev.rdmarpc.bench;

import dev.rdmarpc.bench.load.EchoServer;
import dev.rdmarpc.bench.load.EchoStack;
import dev.rdmarpc.bench.load.StackOptions;
import dev.rdmarpc.bench.load.TlsSettings;
import dev.rdmarpc.bench.stack.Transport;
import dev.rdmarpc.bench.tls.ThrowawayCertificates;
import dev.rdmarpc.rpc.transport.tls.TlsConfig;
import com.sun.management.HotSpotDiagnosticMXBean;
import com.sun.management.VMOption;
import java.io.PrintWriter;
import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/** Echo server(s) for {@code bench-cli client} in another process (pin each to its own core). */
@Command(name = "server", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"Serves the echo method until interrupted (or for --time-limit), for `bench-cli client`;",
            "rdmarpc and the gRPC baseline also serve the streaming method of `client --workload stream`.",
            "Listens on 127.0.0.1 unless told otherwise. With --tls, serves TLS 1.3 with the certificate of",
            "--tls-cert and --tls-key, or a throwaway one whose CA file it prints for `client --tls --tls-trust`."})
final class ServerCommand implements Callable<Integer> {
    static final int DEFAULT_PORT = 7420;

    @Option(names = "--transport", defaultValue = "tcp", paramLabel = "tcp|rdma",
            description = "rdmarpc transport to serve (default: ${DEFAULT-VALUE}).")
    Transport transport;

    @Option(names = "--listen", defaultValue = "127.0.0.1:" + DEFAULT_PORT, paramLabel = "HOST:PORT",
            converter = Converters.Address.class, description = "Where the rdmarpc server listens (default: ${DEFAULT-VALUE}).")
    InetSocketAddress listen;

    @Option(names = "--baseline", paramLabel = "grpc|netty|grpc-rdmarpc", converter = MatrixOptions.Baseline.Converter.class,
            description = "Also serve a baseline's echo: grpc (gRPC-java on grpc-netty), grpc-rdmarpc (gRPC-java over "
                    + "rdmarpc's gRPC transport over --transport, no TLS) or netty (a plain Netty NIO echo).")
    MatrixOptions.Baseline baseline;

    @Option(names = "--grpc-listen", paramLabel = "HOST:PORT", converter = Converters.Address.class,
            description = "Where the gRPC server listens, for --baseline grpc or grpc-rdmarpc (default: the --listen host, port + 1 "
                    + "for grpc, + 3 for grpc-rdmarpc; any free port when --listen has port 0).")
    InetSocketAddress grpcListen;

    @Option(names = "--netty-listen", paramLabel = "HOST:PORT", converter = Converters.Address.class,
            description = "Where the Netty server listens (default: the --listen host, port + 2; any free port when --listen has port 0).")
    InetSocketAddress nettyListen;

    @Option(names = "--io-threads", defaultValue = "1", paramLabel = "N", converter = Converters.Positive.class,
            description = "I/O threads per server (default: ${DEFAULT-VALUE}).")
    int ioThreads;

    @Option(names = "--max-message", defaultValue = "64M", paramLabel = "SIZE", converter = Converters.Size.class,
            description = "Largest request or response served, and largest stream message (default: ${DEFAULT-VALUE}).")
    long maxMessage;

    @Option(names = "--time-limit", paramLabel = "TIME", converter = Converters.Time.class,
            description = "Stop after this long (default: run until interrupted).")
    Duration timeLimit;

    @Option(names = "--device", paramLabel = "NAME", description = "RDMA device to use (--transport rdma only).")
    String device;

    @Option(names = "--gid-index", paramLabel = "N", description = "GID index to use (--transport rdma only).")
    Integer gidIndex;

    @Option(names = "--rdma-completions", paramLabel = "adaptive|event|busy-poll|hybrid",
            description = "How the RDMA I/O threads wait for completions, as for the client commands (--transport rdma "
                    + "only; default: adaptive).")
    String rdmaCompletions;

    @Option(names = "--periodic-gc", defaultValue = "10s", paramLabel = "TIME", converter = Converters.Time.class,
            description = {"When the JVM runs G1 and was given no -XX:G1PeriodicGCInterval, set it to this (0: leave it):"
                + " an idle server then collects and gives unused Java heap back to the system, as the buffer pool"
                + " gives back its native memory after 10 s idle (default: ${DEFAULT-VALUE})."})
    Duration periodicGc;

    @Option(names = "--telemetry", defaultValue = "off", paramLabel = "off|metrics|traces",
            description = "rdmarpc's stack only: the server records OpenTelemetry metrics (per call and transport) or "
                    + "metrics and a span per call, through rdmarpc-opentelemetry and the SDK, collected and dropped; "
                    + "default: off.")
    String telemetry;

    @Option(names = "--tls",
            description = {"Serve TLS 1.3 only, with the JDK's TLS (rdmarpc's SSLEngine; the gRPC baseline through Netty's"
                + " JDK provider; not with --baseline netty, a plain-text echo). Without --tls-cert and --tls-key, a"
                + " throwaway CA and a server certificate for the --listen address (every local address when it is"
                + " 0.0.0.0) and localhost are made at start (keytool, EC P-256, valid 30 days); the path of the CA's"
                + " PEM file, which clients must trust (client --tls --tls-trust FILE), is printed, and the files are"
                + " removed when the server stops. With --transport rdma, TLS covers each connection's TCP setup"
                + " channel, not the queue pair's data (default: off, plain TCP)."})
    boolean tls;

    @Option(names = "--tls-cert", paramLabel = "FILE",
            description = "With --tls: PEM file of the server's certificate first, then its issuers (needs --tls-key; "
                    + "default: a throwaway certificate).")
    Path tlsCert;

    @Option(names = "--tls-key", paramLabel = "FILE",
            description = "With --tls: PEM file of the server's private key, unencrypted PKCS#8 (BEGIN PRIVATE KEY; "
                    + "convert others with `openssl pkcs8 -topk8 -nocrypt`); needs --tls-cert.")
    Path tlsKey;

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() throws InterruptedException {
        if (maxMessage < 1 || maxMessage > MatrixOptions.MAX_MESSAGE) {
            throw new ParameterException(spec.commandLine(), "--max-message: " + Units.formatSize(maxMessage)
                    + " is out of range (1 byte to " + Units.formatSize(MatrixOptions.MAX_MESSAGE) + ")");
        }
        if (transport != Transport.rdma && (device != null || gidIndex != null)) {
            throw new ParameterException(spec.commandLine(),
                    (device != null ? "--device" : "--gid-index") + " only applies to --transport rdma");
        }
        rdmaCompletions = MatrixOptions.checkRdmaCompletions(spec, transport, rdmaCompletions);
        MatrixOptions.checkTlsBaseline(spec, tls, baseline);
        checkTlsFiles();
        InetSocketAddress baselineListen = MatrixOptions.baselineAddress(spec, baseline, listen, "listen", grpcListen,
                nettyListen);
        List<EchoStack> stacks = new ArrayList<>();
        stacks.add(transport.stack());
        if (baseline != null) {
            stacks.add(baseline.load(transport));
        }
        StackOptions options = new StackOptions(ioThreads, (int) maxMessage, device, gidIndex == null ? -1 : gidIndex,
                rdmaCompletions).withTelemetry(telemetry, null);
        String periodic = setPeriodicGc(periodicGc);
        List<EchoServer> servers = new ArrayList<>();
        ThrowawayCertificates certificates = null;
        CountDownLatch stopped = new CountDownLatch(1);
        Thread hook = new Thread(() -> {
            MatrixCommand.closeAll(servers);
            stopped.countDown();
        }, "bench-server-shutdown");
        PrintWriter out = spec.commandLine().getOut();
        try {
            if (tls && tlsCert == null) {
                List<InetAddress> names = new ArrayList<>(List.of(listen.getAddress()));
                if (baselineListen != null) {
                    names.add(baselineListen.getAddress());
                }
                certificates = ThrowawayCertificates.create(names);
                options = options.withTls(new TlsSettings(certificates.serverCertificateChain(),
                        certificates.serverPrivateKey(), null, true));
                out.println("TLS: a throwaway CA and server certificate for "
                        + String.join(", ", certificates.serverNames()) + "; clients trust " + certificates.caCertificate()
                        + " (client --tls --tls-trust " + certificates.caCertificate() + "), removed when the server stops");
            } else if (tls) {
                options = options.withTls(new TlsSettings(tlsCert, tlsKey, null, true));
                out.println("TLS: certificate chain " + tlsCert + ", key " + tlsKey);
            }
            List<InetSocketAddress> addresses = new ArrayList<>();
            addresses.add(listen);
            if (baselineListen != null) {
                addresses.add(baselineListen);
            }
            for (int i = 0; i < stacks.size(); i++) {
                EchoServer s = MatrixCommand.startServer(stacks.get(i), addresses.get(i), options);
                servers.add(s);
                out.println(stacks.get(i).name() + " echo server listening on " + MatrixCommand.show(s.address())
                        + " (" + stacks.get(i).describe(options) + ")");
            }
            if (periodic != null) {
                out.println(periodic);
            }
            out.flush();
            Runtime.getRuntime().addShutdownHook(hook);
            if (timeLimit != null) {
                stopped.await(timeLimit.toNanos(), TimeUnit.NANOSECONDS);
            } else {
                stopped.await();
            }
            return 0;
        } finally {
            try {
                Runtime.getRuntime().removeShutdownHook(hook);
            } catch (IllegalStateException | IllegalArgumentException e) {
                // Shutting down already, or the hook was never added: it closes the servers itself.
            }
            MatrixCommand.closeAll(servers);
            MatrixCommand.closeAll(stacks);
            if (certificates != null) {
                certificates.close();
            }
        }
    }

    /**
     * {@code --tls-cert} and {@code --tls-key}: both or neither, only with {@code --tls}, and loaded once here
     * with {@link TlsConfig} so that a file that does not load is a bad option (exit 2) saying why.
     */
    private void checkTlsFiles() {
        if (tlsCert == null && tlsKey == null) {
            return;
        }
        if (!tls) {
            throw new ParameterException(spec.commandLine(), (tlsCert != null ? "--tls-cert" : "--tls-key")
                    + " only applies with --tls");
        }
        if (tlsCert == null || tlsKey == null) {
            throw new ParameterException(spec.commandLine(), (tlsCert == null ? "--tls-key needs --tls-cert"
                    : "--tls-cert needs --tls-key") + ": a server shows its certificate chain and proves it with its key");
        }
        try {
            TlsConfig.forServer(tlsCert, tlsKey);
        } catch (IllegalArgumentException e) {
            throw new ParameterException(spec.commandLine(), "--tls-cert/--tls-key: " + e.getMessage());
        }
    }

    /**
     * Sets G1's periodic collection ({@code G1PeriodicGCInterval}, a manageable flag) when G1 runs and the
     * command line left it at its default (off). Without it G1 collects only when an allocation needs room,
     * so after an attack an idle server keeps every Java heap page that the attack's garbage touched
     * (docs/performance.md, "Memory after a burst").
     *
     * @return what was set, to print, or null when nothing was
     */
    static String setPeriodicGc(Duration interval) {
        if (interval.isZero()) {
            return null;
        }
        try {
            HotSpotDiagnosticMXBean hotspot = ManagementFactory.getPlatformMXBean(HotSpotDiagnosticMXBean.class);
            if (!"true".equals(hotspot.getVMOption("UseG1GC").getValue())) {
                return null;
            }
            VMOption option = hotspot.getVMOption("G1PeriodicGCInterval");
            if (option.getOrigin() != VMOption.Origin.DEFAULT) {
                return null;
            }
            hotspot.setVMOption("G1PeriodicGCInterval", Long.toString(interval.toMillis()));
            return "G1 periodic collection every " + interval.toMillis() + " ms when idle (--periodic-gc)";
        } catch (IllegalArgumentException | UnsupportedOperationException | SecurityException e) {
            return null; // not HotSpot, or the flag is not there: nothing to set
        }
    }
}
