package dev.rdmarpc.rpc;

/**
 * Receives the outcome of calls made with {@link RpcClient#send}: the zero-allocation call path.
 * Preallocate one listener and tell calls apart by their {@code tag}; neither the call nor its
 * completion allocates.
 *
 * <p>Exactly one of the two methods is called per accepted call, on the client connection's I/O
 * thread: they must not block. Calling {@link RpcClient#send} from inside them is allowed and is the
 * fastest way to keep a pipeline full (the new request goes out with the next write).
 */
public interface ResponseListener {
    /**
     * A response arrived.
     *
     * @param tag      the tag given to {@link RpcClient#send}
     * @param response a flyweight over the received frame: valid only until this method returns,
     *                 reused afterwards; copy out what you need to keep
     */
    void onResponse(long tag, ResponseView response);

    /**
     * The call failed: an error response from the server, a timeout, or the connection closed.
     *
     * @param tag   the tag given to {@link RpcClient#send}
     * @param error the failure and its status
     */
    void onError(long tag, RpcException error);
}
