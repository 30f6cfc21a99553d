package dev.rdmarpc.bench.load;

import java.util.List;

/**
 * What the bench tells a stack about how to set itself up.
 *
 * @param ioThreads       I/O (event-loop) threads on each side, the same for every stack compared
 * @param maxMessageBytes largest request or response the stack must accept
 * @param device          RDMA device name override, or {@code null}
 * @param gidIndex        RDMA GID index override, or -1
 * @param rdmaCompletions how RDMA I/O threads wait for completions: {@code adaptive}, {@code event},
 *                        {@code busy-poll} or {@code hybrid} (rdmarpc's {@code IdleStrategy}: adaptive with
 *                        its default most spin, event, busy-poll, back-off 50 us)
 * @param tls             TLS for servers and connections, or {@code null} for plain TCP
 * @param telemetry       rdmarpc's own stack only: {@code off}, {@code metrics} or {@code traces} (metrics and spans),
 *                        through rdmarpc-opentelemetry and the OpenTelemetry SDK; null is off
 * @param telemetryFile   where that stack writes its metrics (TSV, every second), or null for nowhere
 */
public record StackOptions(int ioThreads, int maxMessageBytes, String device, int gidIndex, String rdmaCompletions,
        TlsSettings tls, String telemetry, String telemetryFile) {
    /** The values of {@link #telemetry()}: none, metrics only, metrics and traces. */
    public static final List<String> TELEMETRY_MODES = List.of("off", "metrics", "traces");

    /** The values of {@code rdmaCompletions}, the default first. */
    public static final List<String> COMPLETION_MODES = List.of("adaptive", "event", "busy-poll", "hybrid");
    /** The RDMA transport's own default, {@code IdleStrategy.adaptive()}. */
    public static final String DEFAULT_COMPLETIONS = "adaptive";

    public StackOptions {
        if (ioThreads < 1) {
            throw new IllegalArgumentException("ioThreads must be at least 1, not " + ioThreads);
        }
        if (maxMessageBytes < 1) {
            throw new IllegalArgumentException("maxMessageBytes must be at least 1, not " + maxMessageBytes);
        }
        if (telemetry == null) {
            telemetry = "off";
        }
        if (!TELEMETRY_MODES.contains(telemetry)) {
            throw new IllegalArgumentException("telemetry must be one of " + String.join(", ", TELEMETRY_MODES)
                    + ", not " + telemetry);
        }
        if (!COMPLETION_MODES.contains(rdmaCompletions)) {
            throw new IllegalArgumentException("rdmaCompletions must be one of " + String.join(", ", COMPLETION_MODES)
                    + ", not " + rdmaCompletions);
        }
    }

    /** Options without TLS. */
    public StackOptions(int ioThreads, int maxMessageBytes, String device, int gidIndex, String rdmaCompletions) {
        this(ioThreads, maxMessageBytes, device, gidIndex, rdmaCompletions, null, "off", null);
    }

    public StackOptions(int ioThreads, int maxMessageBytes, String device, int gidIndex, String rdmaCompletions,
                        TlsSettings tls) {
        this(ioThreads, maxMessageBytes, device, gidIndex, rdmaCompletions, tls, "off", null);
    }

    /** Options with the RDMA transport's default completion mode ({@value #DEFAULT_COMPLETIONS}), without TLS. */
    public StackOptions(int ioThreads, int maxMessageBytes, String device, int gidIndex) {
        this(ioThreads, maxMessageBytes, device, gidIndex, DEFAULT_COMPLETIONS);
    }

    /** These options with this TLS ({@code null}: none). */
    public StackOptions withTls(TlsSettings settings) {
        return new StackOptions(ioThreads, maxMessageBytes, device, gidIndex, rdmaCompletions, settings, telemetry,
                telemetryFile);
    }

    /**
     * @param mode "off", "metrics" (OpenTelemetry metrics through rdmarpc-opentelemetry) or "traces" (metrics and
     *             a span per call)
     * @param file where the metrics go, one TSV line per point every second; null: collected, not written
     * @return these options with rdmarpc's stack instrumented so
     */
    public StackOptions withTelemetry(String mode, String file) {
        return new StackOptions(ioThreads, maxMessageBytes, device, gidIndex, rdmaCompletions, tls, mode, file);
    }
}
