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
 */
public record StackOptions(int ioThreads, int maxMessageBytes, String device, int gidIndex, String rdmaCompletions,
        TlsSettings tls) {
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
        if (!COMPLETION_MODES.contains(rdmaCompletions)) {
            throw new IllegalArgumentException("rdmaCompletions must be one of " + String.join(", ", COMPLETION_MODES)
                    + ", not " + rdmaCompletions);
        }
    }

    /** Options without TLS. */
    public StackOptions(int ioThreads, int maxMessageBytes, String device, int gidIndex, String rdmaCompletions) {
        this(ioThreads, maxMessageBytes, device, gidIndex, rdmaCompletions, null);
    }

    /** Options with the RDMA transport's default completion mode ({@value #DEFAULT_COMPLETIONS}), without TLS. */
    public StackOptions(int ioThreads, int maxMessageBytes, String device, int gidIndex) {
        this(ioThreads, maxMessageBytes, device, gidIndex, DEFAULT_COMPLETIONS);
    }

    /** These options with this TLS ({@code null}: none). */
    public StackOptions withTls(TlsSettings settings) {
        return new StackOptions(ioThreads, maxMessageBytes, device, gidIndex, rdmaCompletions, settings);
    }
}
