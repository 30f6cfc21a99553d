package dev.rdmarpc.bench.load;

import dev.rdmarpc.rpc.transport.IdleStrategy;
import dev.rdmarpc.rpc.transport.rdma.RdmaConfig;
import java.time.Duration;

/**
 * The RDMA settings of every stack the bench runs over rdmarpc's RDMA transport, native rdmarpc and gRPC
 * over it alike, so that both measure the same transport: rdmarpc's defaults with the bench's I/O threads,
 * device, GID index and completion mode.
 */
public final class RdmaSettings {
    private RdmaSettings() {
    }

    /** Applies {@code options} to {@code config} (both sides use the same) and returns it. */
    public static RdmaConfig apply(StackOptions options, RdmaConfig config) {
        // A generous handshake timeout: a bench may run on software RDMA under an emulated CPU.
        config.loop(l -> l.ioThreads(options.ioThreads())).timeouts(t -> t.handshake(Duration.ofMinutes(2)));
        if (options.device() != null) {
            config.device(options.device());
        }
        if (options.gidIndex() >= 0) {
            config.gidIndex(options.gidIndex());
        }
        config.loop(l -> l.idleStrategy(switch (options.rdmaCompletions()) {
            case "busy-poll" -> IdleStrategy.busyPoll();
            case "hybrid" -> IdleStrategy.backOff(IdleStrategy.DEFAULT_SPIN);
            case "event" -> IdleStrategy.event();
            default -> IdleStrategy.adaptive();
        }));
        return config;
    }
}
