package dev.rdmarpc.examples.rping;

import java.time.Duration;

/**
 * rdma-core's {@code rping} on this project's verbs and connection-manager layers: the same command
 * line ({@link RPingOptions}), the same protocol and output, so that it runs against the C
 * {@code rping} either way round:
 *
 * <pre>
 * examples/run rping -s -a 198.18.0.2 -v            # server
 * examples/run rping -c -a 198.18.0.2 -C 10 -vV     # client
 * </pre>
 *
 * Exit code 0 when the pings ran (a server: when its client disconnected), 1 when something failed,
 * 2 for a bad command line.
 */
public final class RPing {
    private RPing() {
    }

    public static void main(String[] args) {
        System.exit(run(args));
    }

    static int run(String[] args) {
        RPingOptions options;
        try {
            options = RPingOptions.parse(args);
        } catch (RPingOptions.UsageException e) {
            System.err.println("rping: " + e.getMessage());
            System.err.println(RPingOptions.USAGE);
            return 2;
        }
        if (!options.server()) {
            return new RPingClient(options, System.out, System.err).run();
        }
        try (RPingServer server = RPingServer.listen(options, System.out, System.err)) {
            return server.serveOne((Duration) null);
        } catch (RuntimeException e) {
            System.err.println("rping server failed: " + e.getMessage());
            return 1;
        }
    }
}
