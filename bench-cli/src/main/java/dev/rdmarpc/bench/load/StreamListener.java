package dev.rdmarpc.bench.load;

/**
 * Hears the messages of one server-streaming call ({@link EchoConnection#openStream}). Made by the load
 * generator, one per stream. A stack calls it from one thread at a time (its reader thread, or the event
 * loop that delivers the call's messages), each call happening after the previous one returned; it must
 * not block. Recording a message allocates nothing.
 */
public interface StreamListener {

    /** One message arrived; {@code payloadBytes} is its payload's length as the application received it. */
    void onMessage(int payloadBytes);

    /**
     * The stream ended: {@code failure} is why (a cancel by the bench included), or null when the server
     * ended it successfully. Called once, after the last {@link #onMessage}.
     */
    void onEnd(Throwable failure);
}
