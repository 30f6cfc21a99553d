package dev.rdmarpc.bench.load;

/** A server-streaming call in progress, as {@link EchoConnection#openStream} returns it. */
public interface StreamCall {

    /**
     * Cancels the stream, the way the stack's API does it (the server is told and stops sending); its
     * listener then hears {@link StreamListener#onEnd}. May be called from any thread, more than once.
     */
    void cancel();
}
