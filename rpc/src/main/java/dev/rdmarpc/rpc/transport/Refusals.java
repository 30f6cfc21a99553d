package dev.rdmarpc.rpc.transport;

import java.io.IOException;
import java.util.function.Consumer;

/**
 * How a connection of either transport refuses its peer (a frame that never completes, an idle
 * connection, bad input, no buffer): the refusal is logged, then its {@link FrameHandler#onRefused}
 * says why and closes ({@link Connection#closeAfter}, a server's last word), or closes at once.
 */
public final class Refusals {
    private Refusals() {
    }

    /**
     * Logs the refusal, then hands it to the handler ({@link #tell}).
     *
     * @param log      the connection class's logger
     * @param closeNow closes the connection at once, on its I/O thread, when the handler fails
     */
    public static void refuse(System.Logger log, FrameHandler handler, Connection c, IOException cause,
                              Consumer<Throwable> closeNow) {
        // an idle connection closed is routine; the rest is a peer (or this side's pool) in trouble
        log.log(cause instanceof IdleTimeoutException ? System.Logger.Level.DEBUG : System.Logger.Level.WARNING,
                "refusing connection " + c + ": " + cause.getMessage());
        tell(log, handler, c, cause, closeNow);
    }

    /**
     * Hands the refusal to the handler without a log line (the caller logged it, rate-limited say); on
     * the connection's I/O thread. A handler that fails is logged and the connection closed at once.
     */
    public static void tell(System.Logger log, FrameHandler handler, Connection c, IOException cause,
                            Consumer<Throwable> closeNow) {
        try {
            handler.onRefused(c, cause);
        } catch (RuntimeException e) {
            log.log(System.Logger.Level.ERROR, "refusal handler failed; closing " + c, e);
            closeNow.accept(cause);
        }
    }
}
