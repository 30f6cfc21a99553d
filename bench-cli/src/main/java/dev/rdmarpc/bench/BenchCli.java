package dev.rdmarpc.bench;

import picocli.CommandLine;
import picocli.CommandLine.Command;

/** Entry point of the bench CLI. */
@Command(name = "bench-cli", mixinStandardHelpOptions = true, version = "rdmarpc bench 0.1.0",
        description = "Throughput and latency of rdmarpc echo calls over TCP or RDMA.")
public final class BenchCli implements Runnable {

    public static void main(String[] args) {
        System.exit(new CommandLine(new BenchCli()).execute(args));
    }

    @Override
    public void run() {
        new CommandLine(this).usage(System.out);
    }
}
