/**
 * The rdmarpc bench CLI: picocli commands, the closed- and open-loop load generators, reports and charts, and
 * the JMH benchmarks.
 */
module dev.rdmarpc.bench {
    requires dev.rdmarpc.rpc;
    // rpc requires these static (a TCP-only user's graph holds neither); the bench runs RDMA and GPUs, and probes all three.
    requires dev.rdmarpc.ibverbs;
    requires dev.rdmarpc.rdmacm;
    requires dev.rdmarpc.cuda;
    requires dev.rdmarpc.opentelemetry;
    requires io.opentelemetry.api;
    requires io.opentelemetry.context;
    requires io.opentelemetry.sdk;
    requires io.opentelemetry.sdk.common;
    requires io.opentelemetry.sdk.metrics;
    requires io.opentelemetry.sdk.trace;
    requires info.picocli;
    requires HdrHistogram;
    requires jmh.core;
    requires java.desktop;
    requires java.management;
    // HotSpotDiagnosticMXBean: the server sets G1's periodic collection (ServerCommand --periodic-gc).
    requires jdk.management;
    requires java.logging;
    // JMH's runner uses sun.misc.Unsafe; as an automatic module it reads jdk.unsupported only if it is resolved.
    requires jdk.unsupported;

    // The stack SPI, implemented by the baselines (gRPC, Netty) that separate class loaders define outside the module graph.
    exports dev.rdmarpc.bench.load;

    opens dev.rdmarpc.bench to info.picocli;
    // JMH's forked runner instantiates the generated harness reflectively.
    opens dev.rdmarpc.bench.jmh.jmh_generated to jmh.core;
}
