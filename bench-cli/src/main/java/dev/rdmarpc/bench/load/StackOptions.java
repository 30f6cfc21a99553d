package dev.rdmarpc.bench.load;

/**
 * What the bench tells a stack about how to set itself up.
 *
 * @param ioThreads       I/O (event-loop) threads on each side, the same for every stack compared
 * @param maxMessageBytes largest request or response the stack must accept
 * @param device          RDMA device name override, or {@code null}
 * @param gidIndex        RDMA GID index override, or -1
 */
public record StackOptions(int ioThreads, int maxMessageBytes, String device, int gidIndex) {
    public StackOptions {
        if (ioThreads < 1) {
            throw new IllegalArgumentException("ioThreads must be at least 1, not " + ioThreads);
        }
        if (maxMessageBytes < 1) {
            throw new IllegalArgumentException("maxMessageBytes must be at least 1, not " + maxMessageBytes);
        }
    }
}
