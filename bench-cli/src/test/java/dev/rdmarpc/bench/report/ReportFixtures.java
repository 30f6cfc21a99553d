package dev.rdmarpc.bench.report;

import dev.rdmarpc.bench.load.CellResult;
import java.time.Duration;
import java.util.List;

/** A fixed result set for the format and chart tests. */
final class ReportFixtures {
    private ReportFixtures() {
    }

    static RunInfo info(boolean baseline) {
        return new RunInfo("rdmarpc-tcp", "test stack", baseline ? "grpc-java" : null, baseline ? "test baseline" : null,
                "tcp loopback 127.0.0.1", 4, 1, 1, Duration.ofSeconds(1), Duration.ofSeconds(2), 1, 256L << 20, true, 0,
                "Java 25 (test), 2 CPUs");
    }

    /** The run info of a TLS run with a baseline, both servers seen negotiating. */
    static RunInfo tlsInfo() {
        RunInfo i = info(true);
        return new RunInfo(i.stack(), i.stackDescription(), i.baseline(), i.baselineDescription(), i.target(),
                i.connections(), i.pipeline(), i.ioThreads(), i.warmup(), i.measure(), i.repeat(), i.maxInFlightBytes(),
                i.echo(), i.responseBytes(), i.environment(), "TLSv1.3",
                "rdmarpc-tcp TLSv1.3 TLS_AES_256_GCM_SHA384, grpc-java TLSv1.3 TLS_AES_256_GCM_SHA384");
    }

    /** 128B at 1 and 16, 8M at 1 and 256 (capped to 16 in flight). */
    static List<CellResult> ours() {
        return List.of(
                new CellResult("rdmarpc-tcp", 128, 128, 1, 1, 1, 1, 20000, 0, 2.0, 10000, 95.5, 120.25, 180, 410, 900, null, 0, 0, 1.0),
                new CellResult("rdmarpc-tcp", 128, 128, 16, 16, 4, 1, 100000, 0, 2.0, 50000, 150, 230, 4200, 4800, 9000, null, 0, 0, 0.98),
                new CellResult("rdmarpc-tcp", 8 << 20, 8 << 20, 1, 1, 1, 1, 400, 0, 2.0, 200, 4900, 5100, 6000, 6500, 7000, null, 0, 0, 1.0),
                new CellResult("rdmarpc-tcp", 8 << 20, 8 << 20, 256, 16, 4, 1, 1000, 0, 2.0, 500, 31000, 35000, 41000, 42000, 43000, null, 0, 0, 0.5));
    }

    static List<CellResult> theirs() {
        return List.of(
                new CellResult("grpc-java", 128, 128, 1, 1, 1, 1, 10000, 0, 2.0, 5000, 191, 240.5, 360, 820, 1500, null, 0, 0, 1.0),
                new CellResult("grpc-java", 128, 128, 16, 16, 4, 1, 25000, 0, 2.0, 12500, 900, 1200, 5600, 9000, 12000, null, 0, 0, 0.9),
                new CellResult("grpc-java", 8 << 20, 8 << 20, 1, 1, 1, 1, 200, 0, 2.0, 100, 9800, 10200, 12000, 13000, 14000, null, 0, 0, 1.0),
                new CellResult("grpc-java", 8 << 20, 8 << 20, 256, 16, 4, 1, 500, 3, 2.0, 250, 62000, 70000, 82000, 84000, 86000, "DEADLINE_EXCEEDED", 0, 0, 0.25));
    }

    /** The run info of a server-streaming run. */
    static RunInfo streamInfo(boolean baseline) {
        return info(baseline).withWorkload(dev.rdmarpc.bench.load.Workload.stream);
    }

    /** Streams: 128B with 1 and 16 streams, 32K with 16 (messages, msgs/s, gaps in microseconds). */
    static List<CellResult> oursStreams() {
        return List.of(
                new CellResult("rdmarpc-tcp", 128, 128, 1, 1, 1, 1, 2_000_000, 0, 2.0, 1_000_000, 0.1, 0.2, 4, 170, 900, null),
                new CellResult("rdmarpc-tcp", 128, 128, 16, 16, 4, 1, 3_000_000, 0, 2.0, 1_500_000, 0.1, 0.5, 16.5, 710, 2000, null),
                new CellResult("rdmarpc-tcp", 32768, 32768, 16, 16, 4, 1, 80_000, 0, 2.0, 40_000, 0.2, 300, 1800, 9000, 20000, null));
    }

    static List<CellResult> theirsStreams() {
        return List.of(
                new CellResult("grpc-java", 128, 128, 1, 1, 1, 1, 500_000, 0, 2.0, 250_000, 2, 5, 44, 4200, 9000, null),
                new CellResult("grpc-java", 128, 128, 16, 16, 4, 1, 600_000, 0, 2.0, 300_000, 2, 15, 260, 18000, 30000, null),
                new CellResult("grpc-java", 32768, 32768, 16, 16, 4, 1, 40_000, 1, 2.0, 20_000, 100, 3700, 6800, 41000, 90000,
                        "CANCELLED: too slow"));
    }
}
