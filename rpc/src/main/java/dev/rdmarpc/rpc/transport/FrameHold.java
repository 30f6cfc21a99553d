package dev.rdmarpc.rpc.transport;

/**
 * A received frame's memory kept past {@link FrameHandler#onFrame}: what {@link Connection#holdFrame}
 * answers. Until {@link #release} the bytes the frame's handler was handed stay where they are, unchanged;
 * after it they are the transport's again.
 *
 * <p>A value that a stream's codec decodes with such a hold inside it is a hold itself: the stream
 * releases it when it drops the value unread (a cancel, a failure), and whoever reads it releases it once
 * done with it.
 */
public interface FrameHold {
    /** Gives the memory back. Any thread; the first call counts, later ones do nothing. */
    void release();
}
