package dev.rdmarpc.rpc.core;

import dev.rdmarpc.rpc.Metadata;
import dev.rdmarpc.rpc.RpcException;

/** What a client stream tells once, when it ends (the channel's interceptors hear it through this). */
@FunctionalInterface
public interface StreamEnd {
    /**
     * @param failure       why it failed, or null when the server ended it well
     * @param trailers      the metadata of its end
     * @param bytesSent     bytes of the messages this side sent (encoded, frame headers left out);
     *                      -1 when the stream never opened
     * @param bytesReceived bytes of the messages received; -1 when the stream never opened
     */
    void ended(RpcException failure, Metadata trailers, long bytesSent, long bytesReceived);
}
