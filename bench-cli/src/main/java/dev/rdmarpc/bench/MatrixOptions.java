package dev.rdmarpc.bench;

import dev.rdmarpc.bench.load.EchoProtocol;
import dev.rdmarpc.bench.load.EchoStack;
import dev.rdmarpc.bench.load.MatrixPlan;
import dev.rdmarpc.bench.load.StackOptions;
import dev.rdmarpc.bench.load.StreamLoop;
import dev.rdmarpc.bench.load.Workload;
import dev.rdmarpc.bench.stack.BaselineLoader;
import dev.rdmarpc.bench.stack.Transport;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;

/** The load matrix options shared by {@code local} and {@code client}. */
final class MatrixOptions {
    /** Largest request or response the bench accepts (rdmarpc's frame limit is 1 GiB). */
    static final long MAX_MESSAGE = 512L << 20;

    @Option(names = "--transport", defaultValue = "tcp", paramLabel = "tcp|rdma",
            description = "rdmarpc transport to measure (default: ${DEFAULT-VALUE}).")
    Transport transport;

    @Option(names = "--workload", defaultValue = "echo", paramLabel = "echo|stream",
            description = {"What each cell measures (default: ${DEFAULT-VALUE}). echo: unary echo calls, QPS and latency. "
                + "stream: server streaming; per stream the client sends one small request and the server sends "
                + "messages of a --sizes size as fast as the stream's flow control allows, until the bench cancels "
                + "the stream at the end of the cell; --concurrency is the number of concurrent streams, spread over "
                + "--connections. Figures: messages per second and Gb/s of payload received, and the time between "
                + "consecutive messages of a stream (its percentiles). Not with --rate, --pipeline, --response-size, "
                + "--max-in-flight or --baseline netty."})
    Workload workload;

    @Option(names = "--sizes", split = ",", hideParamSyntax = true, defaultValue = "128B,4K,32K,256K,1M,8M", paramLabel = "SIZE[,SIZE...]",
            converter = Converters.Size.class,
            description = "Request sizes (with --workload stream: message sizes): 128, 128B, 4K, 4KiB, 1M... (binary "
                    + "multiples; default: ${DEFAULT-VALUE}).")
    List<Long> sizes;

    /** Concurrency levels of a closed loop when none are given. */
    static final List<Integer> DEFAULT_CONCURRENCY = List.of(1, 4, 16, 64, 256);
    /** Bound on calls in flight of an open loop when no --concurrency is given. */
    static final int DEFAULT_OPEN_LOOP_BOUND = 64;
    /** Largest --rate accepted, calls per second. */
    static final long MAX_RATE = 10_000_000L;

    @Option(names = {"--concurrency", "-c"}, split = ",", hideParamSyntax = true, paramLabel = "N[,N...]",
            converter = Converters.Positive.class,
            description = "Concurrency levels: closed-loop callers, each with its calls in flight (default: 1,4,16,64,256). "
                    + "With --rate: the bound on calls in flight (default: " + DEFAULT_OPEN_LOOP_BOUND + "). With "
                    + "--workload stream: numbers of concurrent streams (at most " + StreamLoop.MAX_STREAMS + ").")
    List<Integer> concurrency;

    @Option(names = "--rate", split = ",", hideParamSyntax = true, paramLabel = "QPS[,QPS...]", converter = Converters.Rate.class,
            description = "Open loop instead of closed: target request rates, calls per second in total over all callers "
                    + "(2000, 50K, 1M). Calls are due on a fixed schedule and each latency counts from its due time, so a "
                    + "stall is charged to every call it delayed (coordinated omission accounted for). When --concurrency "
                    + "calls are in flight a due call waits and is sent late; the late column counts those.")
    List<Long> rate;

    @Option(names = "--connections", defaultValue = "4", paramLabel = "N", converter = Converters.Positive.class,
            description = "Connections per stack; callers are spread over them round-robin, never more connections "
                    + "than callers (default: ${DEFAULT-VALUE}).")
    int connections;

    @Option(names = "--pipeline", defaultValue = "1", paramLabel = "DEPTH", converter = Converters.Positive.class,
            description = "Calls each caller sends back to back before waiting for all of their responses "
                    + "(default: ${DEFAULT-VALUE}: one call at a time).")
    int pipeline;

    @Option(names = "--warmup", defaultValue = "1s", paramLabel = "TIME", converter = Converters.Time.class,
            description = "Warm-up per cell, not measured: 500ms, 5s, 1m... (default: ${DEFAULT-VALUE}).")
    Duration warmup;

    /** Initial warm-up with a baseline: gRPC-java's figures keep improving for more than 10 s of load. */
    static final Duration BASELINE_INITIAL_WARMUP = Duration.ofSeconds(15);

    @Option(names = "--initial-warmup", paramLabel = "TIME", converter = Converters.Time.class,
            description = "Unmeasured load on each stack before its first cell, while the JIT compiles the call path "
                    + "(default: 3s; 15s with --baseline, as gRPC-java keeps speeding up for more than 10 s).")
    Duration initialWarmup;

    @Option(names = "--duration", defaultValue = "2s", paramLabel = "TIME", converter = Converters.Time.class,
            description = "Measured time per cell: 500ms, 5s, 1m... (default: ${DEFAULT-VALUE}).")
    Duration duration;

    @Option(names = "--repeat", defaultValue = "1", paramLabel = "N", converter = Converters.Positive.class,
            description = "Run the whole matrix N times, stacks and runs interleaved, and report per cell the median "
                    + "of the runs (default: ${DEFAULT-VALUE}).")
    int repeat;

    @Option(names = "--response-size", paramLabel = "SIZE", converter = Converters.Size.class,
            description = "Response size (default: the request size, a true echo).")
    Long responseSize;

    @Option(names = "--max-in-flight", defaultValue = "64M", paramLabel = "SIZE", converter = Converters.Size.class,
            description = "Cap on request plus response bytes in flight per stack; cells above it run fewer callers "
                    + "and are marked (default: ${DEFAULT-VALUE}).")
    long maxInFlight;

    @Option(names = "--io-threads", defaultValue = "1", paramLabel = "N", converter = Converters.Positive.class,
            description = "I/O threads on each side, the same for every stack compared (default: ${DEFAULT-VALUE}).")
    int ioThreads;

    @Option(names = "--device", paramLabel = "NAME", description = "RDMA device to use, e.g. mlx5_0 (--transport rdma only).")
    String device;

    @Option(names = "--gid-index", paramLabel = "N", description = "GID index to use (--transport rdma only).")
    Integer gidIndex;

    @Option(names = "--rdma-completions", paramLabel = "adaptive|event|busy-poll|hybrid",
            description = "How RDMA I/O threads wait for completions: spin while the next completion is likely to come "
                    + "within 2 ms, learnt from the traffic, then sleep (adaptive, the transport's default), sleep on "
                    + "the completion channel (event), spin (busy-poll, a core per I/O thread, as perftest's latency "
                    + "tools do) or spin 50 us after the last completion, then sleep (hybrid) (--transport rdma only; "
                    + "default: adaptive).")
    String rdmaCompletions;

    @Option(names = "--baseline", paramLabel = "grpc|netty|grpc-rdmarpc", converter = Baseline.Converter.class,
            description = "Also run the same matrix against a baseline and print ours, theirs and the ratio: grpc "
                    + "(gRPC-java on grpc-netty, HTTP/2), grpc-rdmarpc (the same gRPC-java calls and service over "
                    + "rdmarpc's gRPC transport, over --transport, no TLS) or netty (a plain Netty NIO echo of length-prefixed "
                    + "frames, no RPC layer: the ceiling of plain Java NIO).")
    Baseline baseline;

    @Option(names = "--telemetry", defaultValue = "off", paramLabel = "off|metrics|traces",
            description = "rdmarpc's stack only: OpenTelemetry through rdmarpc-opentelemetry and the SDK, metrics (the "
                    + "per-call instruments on the server, which the client's raw sendInPlace path does not run, and the "
                    + "transport instruments) or traces (metrics and a span per call, sampled, counted and dropped); "
                    + "default: off.")
    String telemetry;

    @Option(names = "--telemetry-file", paramLabel = "FILE",
            description = "With --telemetry: write the metrics there every second, one TSV line per point (time_ms, "
                    + "metric, unit, attributes, value, sum); default: collected, not written.")
    String telemetryFile;

    @Option(names = "--tls",
            description = "TLS 1.3 on every connection, with the JDK's TLS on both sides (rdmarpc's SSLEngine; with "
                    + "--baseline grpc, gRPC through Netty's JDK provider, so both negotiate the same cipher suite; not "
                    + "with --baseline netty, a plain-text echo). local makes a throwaway CA and a server certificate for "
                    + "the listen address at start (keytool, EC P-256); client checks the server's certificate against "
                    + "--tls-trust. With --transport rdma, TLS covers each connection's TCP setup channel, not the queue "
                    + "pair's data (default: off, plain TCP).")
    boolean tls;

    /** Baselines the bench knows, each with the port offset of its server from rdmarpc's. */
    enum Baseline {
        /** gRPC-java; its server listens on rdmarpc's port + 1 unless told otherwise. Echo and server streaming. */
        grpc(1, true),
        /** A plain Netty NIO echo; its server listens on rdmarpc's port + 2 unless told otherwise. Echo only. */
        netty(2, false),
        /**
         * gRPC-java over rdmarpc's gRPC transport (on {@code --transport}), with the gRPC baseline's calls and service; its server
         * listens on rdmarpc's port + 3 unless told otherwise ({@code --grpc-listen}/{@code --grpc-connect}
         * name it too). Echo and server streaming.
         */
        grpcRdmarpc(3, true);

        /** The name on the command line: {@code grpc}, {@code grpc-rdmarpc}, {@code netty}. */
        @Override
        public String toString() {
            return this == grpcRdmarpc ? "grpc-rdmarpc" : name();
        }

        /** Whether {@code --grpc-listen}/{@code --grpc-connect} name this baseline's server. */
        boolean grpcServer() {
            return this != netty;
        }

        /** Parses {@code --baseline}: a name as {@link #toString()} prints it. */
        static final class Converter implements picocli.CommandLine.ITypeConverter<Baseline> {
            @Override
            public Baseline convert(String value) {
                for (Baseline b : values()) {
                    if (b.toString().equalsIgnoreCase(value)) {
                        return b;
                    }
                }
                throw new picocli.CommandLine.TypeConversionException("'" + value
                        + "' is not a baseline: expected one of [grpc, netty, grpc-rdmarpc]");
            }
        }

        private final int portOffset;
        private final boolean streams;

        Baseline(int portOffset, boolean streams) {
            this.portOffset = portOffset;
            this.streams = streams;
        }

        /** Whether this baseline has the streaming workload. */
        boolean streams() {
            return streams;
        }

        /**
         * Loads the baseline's stack from its own class loader; gRPC over rdmarpc runs on {@code transport},
         * the others on TCP.
         */
        EchoStack load(Transport transport) {
            return switch (this) {
                case grpc -> BaselineLoader.grpc();
                case grpcRdmarpc -> BaselineLoader.grpcRdmarpc(transport == Transport.rdma);
                case netty -> BaselineLoader.netty();
            };
        }

        /** The default address of this baseline's server: rdmarpc's host and port plus the offset (0 stays 0: any free port). */
        InetSocketAddress defaultAddress(InetSocketAddress rdmarpc) {
            return new InetSocketAddress(rdmarpc.getAddress(), rdmarpc.getPort() == 0 ? 0 : rdmarpc.getPort() + portOffset);
        }
    }

    /**
     * The address of the baseline's server for {@code server} and {@code client}: the baseline's own option
     * ({@code --grpc-listen}, {@code --netty-connect}...) if given, else its default; {@code null} without a
     * baseline. An address given for a baseline not asked for is an error (exit 2).
     *
     * @param kind  the options' suffix: {@code listen} or {@code connect}
     * @param grpc  the value of {@code --grpc-<kind>}, or {@code null}
     * @param netty the value of {@code --netty-<kind>}, or {@code null}
     */
    static InetSocketAddress baselineAddress(CommandSpec spec, Baseline baseline, InetSocketAddress rdmarpc, String kind,
            InetSocketAddress grpc, InetSocketAddress netty) {
        if (grpc != null && (baseline == null || !baseline.grpcServer())) {
            throw new ParameterException(spec.commandLine(), "--grpc-" + kind
                    + " only applies to --baseline grpc or grpc-rdmarpc");
        }
        if (netty != null && baseline != Baseline.netty) {
            throw new ParameterException(spec.commandLine(), "--netty-" + kind + " only applies to --baseline netty");
        }
        if (baseline == null) {
            return null;
        }
        InetSocketAddress given = baseline.grpcServer() ? grpc : netty;
        return given != null ? given : baseline.defaultAddress(rdmarpc);
    }

    /** Checks the combinations a converter cannot see; throws {@link ParameterException} (exit 2). */
    void validate(CommandSpec spec) {
        for (long s : sizes) {
            if (s < 1 || s > MAX_MESSAGE) {
                throw new ParameterException(spec.commandLine(), "--sizes: " + Units.formatSize(s)
                        + " is out of range (1 byte to " + Units.formatSize(MAX_MESSAGE) + ")");
            }
        }
        for (int c : concurrencies()) {
            if (c > 65536) {
                throw new ParameterException(spec.commandLine(), "--concurrency: " + c + " is above 65536");
            }
        }
        if (workload == Workload.stream) {
            checkStreamOptions(spec);
        }
        if (responseSize != null) {
            if (responseSize < 0 || responseSize > MAX_MESSAGE) {
                throw new ParameterException(spec.commandLine(), "--response-size: " + Units.formatSize(responseSize)
                        + " is out of range (0 to " + Units.formatSize(MAX_MESSAGE) + ")");
            }
            for (long s : sizes) {
                if (!EchoProtocol.canExpress((int) s, responseSize.intValue())) {
                    throw new ParameterException(spec.commandLine(), "--response-size needs requests of at least "
                            + EchoProtocol.HEADER_BYTES + " bytes (they carry the wanted size), but --sizes has " + s);
                }
            }
        }
        if (rate != null) {
            for (long r : rate) {
                if (r > MAX_RATE) {
                    throw new ParameterException(spec.commandLine(), "--rate: " + r + " is above " + MAX_RATE
                            + " calls per second");
                }
            }
            if (pipeline != 1) {
                throw new ParameterException(spec.commandLine(),
                        "--pipeline does not apply with --rate: an open loop sends each call when it is due");
            }
        }
        if (duration.isZero()) {
            throw new ParameterException(spec.commandLine(), "--duration must be longer than 0");
        }
        if (ioThreads > 256) {
            throw new ParameterException(spec.commandLine(), "--io-threads: " + ioThreads + " is above 256");
        }
        if (transport != Transport.rdma && (device != null || gidIndex != null)) {
            throw new ParameterException(spec.commandLine(),
                    (device != null ? "--device" : "--gid-index") + " only applies to --transport rdma");
        }
        rdmaCompletions = checkRdmaCompletions(spec, transport, rdmaCompletions);
        checkTlsBaseline(spec, tls, baseline);
        if (gidIndex != null && gidIndex < 0) {
            throw new ParameterException(spec.commandLine(), "--gid-index must not be negative");
        }
    }

    /**
     * What {@code --workload stream} does not go with: the options of echo calls (a stream has no response
     * size, pipeline or rate, and its flow-control window, not {@code --max-in-flight}, bounds its bytes in
     * flight), more streams than a cell opens, and a baseline without streams; exit 2.
     */
    private void checkStreamOptions(CommandSpec spec) {
        String echoOnly = rate != null ? "--rate" : responseSize != null ? "--response-size" : pipeline != 1 ? "--pipeline"
                : given(spec, "--max-in-flight") ? "--max-in-flight" : null;
        if (echoOnly != null) {
            throw new ParameterException(spec.commandLine(), echoOnly + " does not apply to --workload stream: "
                    + switch (echoOnly) {
                        case "--rate" -> "the server sends as fast as the stream's flow control allows, at no set rate";
                        case "--response-size" -> "the server sends messages of the --sizes size";
                        case "--pipeline" -> "each stream has one request";
                        default -> "a stream's flow-control window bounds its bytes in flight";
                    });
        }
        for (int c : concurrencies()) {
            if (c > StreamLoop.MAX_STREAMS) {
                throw new ParameterException(spec.commandLine(), "--concurrency: " + c + " streams is above "
                        + StreamLoop.MAX_STREAMS + " (--workload stream)");
            }
        }
        if (baseline != null && !baseline.streams()) {
            throw new ParameterException(spec.commandLine(), "--workload stream does not apply to --baseline " + baseline
                    + ": the " + baseline + " baseline is an echo only (compare streams with --baseline grpc)");
        }
    }

    /** Whether the command line named this option (rather than leaving it at its default). */
    private static boolean given(CommandSpec spec, String option) {
        picocli.CommandLine.ParseResult parsed = spec.commandLine().getParseResult();
        return parsed != null && parsed.hasMatchedOption(option);
    }

    /** {@code --tls} with {@code --baseline netty} or {@code grpc-rdmarpc}: those baselines run without TLS; exit 2. */
    static void checkTlsBaseline(CommandSpec spec, boolean tls, Baseline baseline) {
        if (tls && baseline == Baseline.netty) {
            throw new ParameterException(spec.commandLine(), "--tls does not apply to --baseline netty: the Netty baseline "
                    + "is a plain-text echo (compare over TLS with --baseline grpc)");
        }
        if (tls && baseline == Baseline.grpcRdmarpc) {
            throw new ParameterException(spec.commandLine(), "--tls does not apply to --baseline grpc-rdmarpc: the bench "
                    + "runs that stack in plain text (compare over TLS with --baseline grpc)");
        }
    }

    /**
     * {@code --rdma-completions}: one of {@link StackOptions#COMPLETION_MODES}, and only with
     * {@code --transport rdma}; exit 2 otherwise.
     *
     * @return the mode, {@link StackOptions#DEFAULT_COMPLETIONS} when not given
     */
    static String checkRdmaCompletions(CommandSpec spec, Transport transport, String value) {
        if (value == null) {
            return StackOptions.DEFAULT_COMPLETIONS;
        }
        if (!StackOptions.COMPLETION_MODES.contains(value)) {
            throw new ParameterException(spec.commandLine(), "--rdma-completions: expected one of "
                    + String.join(", ", StackOptions.COMPLETION_MODES) + ", not '" + value + "'");
        }
        if (transport != Transport.rdma) {
            throw new ParameterException(spec.commandLine(), "--rdma-completions only applies to --transport rdma");
        }
        return value;
    }

    MatrixPlan plan() {
        List<Integer> s = new ArrayList<>();
        for (long v : sizes) {
            s.add((int) v);
        }
        return new MatrixPlan(s, concurrencies(), responseSize == null ? -1 : responseSize.intValue(), pipeline,
                connections, warmup, duration, maxInFlight, initialWarmup(), repeat, rate == null ? List.of() : rate,
                workload);
    }

    /** The concurrency levels given, or the default: the closed loop's matrix, or an open loop's bound. */
    List<Integer> concurrencies() {
        if (concurrency != null) {
            return concurrency;
        }
        return rate == null ? DEFAULT_CONCURRENCY : List.of(DEFAULT_OPEN_LOOP_BOUND);
    }

    /** The initial warm-up asked for, or its default (longer with a baseline). */
    Duration initialWarmup() {
        if (initialWarmup != null) {
            return initialWarmup;
        }
        return baseline != null ? BASELINE_INITIAL_WARMUP : Duration.ofSeconds(3);
    }

    StackOptions stackOptions(MatrixPlan plan) {
        return new StackOptions(ioThreads, Math.max(1, plan.largestMessage()), device, gidIndex == null ? -1 : gidIndex,
                rdmaCompletions).withTelemetry(telemetry, telemetryFile);
    }
}
