package dev.rdmarpc.rpc;

/**
 * A zero-allocation server-side method implementation that works on the received bytes directly and
 * answers through {@link RawCall#respond}. It always runs inline on the connection's I/O thread, so
 * it must not block.
 * {@snippet :
 * static final Method<MemorySegment, MemorySegment> ECHO = Method.raw("echo");
 * RpcServer.builder().registerRaw(ECHO, call -> call.respond(call.buffer(), call.payloadOffset(), call.payloadLength()));
 * }
 *
 * <p>If the handler returns without responding, the call is answered with
 * {@link Status#HANDLER_FAILED}; throwing answers as for {@link Handler}.
 */
@FunctionalInterface
public interface RawHandler {
    /**
     * @param call the request (a flyweight valid until this returns) and the way to answer it
     * @throws Exception to answer with an error
     */
    void handle(RawCall call) throws Exception;
}
