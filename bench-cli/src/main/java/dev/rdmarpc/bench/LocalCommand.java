package dev.rdmarpc.bench;

import dev.rdmarpc.bench.load.EchoServer;
import dev.rdmarpc.bench.load.EchoStack;
import dev.rdmarpc.bench.load.MatrixPlan;
import dev.rdmarpc.bench.load.StackOptions;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import picocli.CommandLine.Command;

/** Server and client in one JVM on 127.0.0.1: the README's run. */
@Command(name = "local", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"Starts the echo server(s) on 127.0.0.1 and runs the matrix against them from this JVM.",
            "Closed loop: each of N callers sends its next call when the previous one returns.",
            "With the defaults (30 cells of 1s warm-up + 2s measured) it takes about 95 s."})
final class LocalCommand extends MatrixCommand {

    @Override
    public Integer call() {
        List<EchoStack> stacks = stacks();
        List<EchoServer> servers = new ArrayList<>();
        try {
            MatrixPlan plan = matrix.plan();
            StackOptions options = matrix.stackOptions(plan);
            InetSocketAddress loopback = new InetSocketAddress(InetAddress.getLoopbackAddress(), 0);
            List<InetSocketAddress> addresses = new ArrayList<>();
            for (EchoStack stack : stacks) {
                EchoServer server = startServer(stack, loopback, options);
                servers.add(server);
                addresses.add(server.address());
            }
            return measure(stacks, addresses, plan, options, matrix.transport + " loopback "
                    + loopback.getAddress().getHostAddress() + ", server and client in one JVM");
        } finally {
            closeAll(servers);
            closeAll(stacks);
        }
    }
}
