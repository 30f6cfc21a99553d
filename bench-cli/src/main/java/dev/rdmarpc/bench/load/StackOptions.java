package dev.rdmarpc.bench.load;

/**
 * What the bench tells a stack about how to set itself up.
 *
 * @param ioThreads       I/O (event-loop) threads on each side, the same for every stack compared
 * @param maxMessageBytes largest request or response the stack must accept
 * @param device          RDMA device name override, or {@code null}
 * @param gidIndex        RDMA GID index override, or -1
 * @param rdmaCompletions how RDMA I/O threads wait for completions: {@code event}, {@code busy-poll} or
 *                        {@code hybrid} (rdmarpc's {@code IdleStrategy}: event, busy-poll, back-off 50 us)
 * @param tls             TLS for servers and connections, or {@code null} for plain TCP
 */
public record StackOptions(int ioThreads, int maxMessageBytes, String device, int gidIndex, String rdmaCompletions,
        TlsSettings tls) {
    public StackOptions {
        if (ioThreads < 1) {
            throw new IllegalArgumentException("ioThreads must be at least 1, not " + ioThreads);
        }
        if (maxMessageBytes < 1) {
            throw new IllegalArgumentException("maxMessageBytes must be at least 1, not " + maxMessageBytes);
        }
        if (!rdmaCompletions.equals("event") && !rdmaCompletions.equals("busy-poll") && !rdmaCompletions.equals("hybrid")) {
            throw new IllegalArgumentException("rdmaCompletions must be event, busy-poll or hybrid, not " + rdmaCompletions);
        }
    }

    /** Options without TLS. */
    public StackOptions(int ioThreads, int maxMessageBytes, String device, int gidIndex, String rdmaCompletions) {
        this(ioThreads, maxMessageBytes, device, gidIndex, rdmaCompletions, null);
    }

    /** Options with RDMA completions in event mode (the transport's default), without TLS. */
    public StackOptions(int ioThreads, int maxMessageBytes, String device, int gidIndex) {
        this(ioThreads, maxMessageBytes, device, gidIndex, "event");
    }

    /** These options with this TLS ({@code null}: none). */
    public StackOptions withTls(TlsSettings settings) {
        return new StackOptions(ioThreads, maxMessageBytes, device, gidIndex, rdmaCompletions, settings);
    }
}
