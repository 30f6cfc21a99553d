package dev.rdmarpc.rpc.core;

import dev.rdmarpc.rpc.Metadata;
import dev.rdmarpc.rpc.Method;
import dev.rdmarpc.rpc.RpcException;
import java.lang.foreign.MemorySegment;

/**
 * A stream held in a call slot of a connection's {@link CallTable}, blocking ({@link ClientStreamCall}) or
 * asynchronous ({@link AsyncClientStreamCall}): what the I/O thread tells it.
 */
abstract class ClientStreamSink {
    /** Set once the slot was reserved; 0 before. */
    volatile long id;

    abstract Method<?, ?> method();

    abstract StreamFlow flow();

    /** A message frame of this stream arrived (I/O thread). */
    abstract void onMessage(MemorySegment buf, long offset, int length);

    /** The server granted more room (I/O thread). */
    void onWindow(int increment) {
        flow().granted(increment);
    }

    /** The transport sent something (I/O thread): an asynchronous stream writes what waits for room. */
    void onRoom() {
    }

    /** The server's response ended the stream (its slot is free already). */
    abstract void ended(RpcException error, Metadata trailers);

    /** The stream failed here (timeout, close, cancel): nothing more is read. */
    abstract void failed(RpcException error);
}
