package dev.rdmarpc.rpc.transport.rdma;

import dev.rdmarpc.rpc.Method;
import dev.rdmarpc.rpc.RpcClient;
import dev.rdmarpc.rpc.RpcServer;
import dev.rdmarpc.rpc.codec.Codecs;

/** A TCP echo from server to client and back, then exit: run with class-load logging by {@link NoRdmaLoadedTest}. */
public final class TcpOnlyMain {
    private TcpOnlyMain() {
    }

    public static void main(String[] args) {
        Method<String, String> echo = Method.of("echo", Codecs.STRING, Codecs.STRING);
        try (RpcServer server = RpcServer.builder().tcp(cfg -> cfg.loop(l -> l.ioThreads(1))).register(echo, (ctx, s) -> s).start();
             RpcClient client = RpcClient.connect(server.address())) {
            if (!"tcp only".equals(client.call(echo, "tcp only"))) {
                throw new AssertionError("bad echo");
            }
        }
        System.out.println("ECHO OK");
    }
}
