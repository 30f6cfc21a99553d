package dev.rdmarpc.bench;

import dev.rdmarpc.bench.load.CellResult;
import dev.rdmarpc.bench.load.CpuMeter;
import dev.rdmarpc.bench.load.EchoServer;
import dev.rdmarpc.bench.load.EchoStack;
import dev.rdmarpc.bench.load.MatrixPlan;
import dev.rdmarpc.bench.load.MatrixRunner;
import dev.rdmarpc.bench.load.StackOptions;
import dev.rdmarpc.bench.load.TlsSettings;
import dev.rdmarpc.bench.report.Report;
import dev.rdmarpc.bench.report.RunInfo;
import java.io.IOException;
import java.io.PrintWriter;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/** What {@code local} and {@code client} share: the matrix, the output, and running one against servers. */
abstract class MatrixCommand implements Callable<Integer> {
    @Mixin
    MatrixOptions matrix;

    @Mixin
    OutputOptions output;

    @Spec
    CommandSpec spec;

    /** Validates options, then makes our stack and, when asked, the baseline's (ours first). */
    List<EchoStack> stacks() {
        matrix.validate(spec);
        output.validate(spec);
        if (output.plot != null && matrix.rate != null && matrix.concurrencies().size() > 1) {
            throw new picocli.CommandLine.ParameterException(spec.commandLine(), "--plot draws an open loop against "
                    + "the target rate and needs one --concurrency (the bound on calls in flight), not "
                    + matrix.concurrencies().size());
        }
        List<EchoStack> stacks = new ArrayList<>();
        stacks.add(matrix.transport.stack());
        if (matrix.baseline != null) {
            stacks.add(matrix.baseline.load(matrix.transport));
        }
        return stacks;
    }

    /** Runs the matrix against the servers (one per stack, same order) and prints the report. */
    int measure(List<EchoStack> stacks, List<InetSocketAddress> servers, MatrixPlan plan, StackOptions options,
            String target) {
        return measure(stacks, servers, plan, options, target, CpuMeter.SELF);
    }

    /** {@link #measure} with the CPU time per call that {@code cpu} measures. */
    int measure(List<EchoStack> stacks, List<InetSocketAddress> servers, MatrixPlan plan, StackOptions options,
            String target, CpuMeter cpu) {
        List<MatrixRunner.Target> targets = new ArrayList<>();
        for (int i = 0; i < stacks.size(); i++) {
            targets.add(new MatrixRunner.Target(stacks.get(i), servers.get(i), options));
        }
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        boolean progress = output.progressWanted();
        ProgressLine line = new ProgressLine(err, progress && Terminal.stderrIsTerminal(), plan.warmup(), plan.measure());
        List<List<CellResult>> results;
        try {
            results = MatrixRunner.run(targets, plan, progress ? line : MatrixRunner.CellListener.NONE, cpu);
        } catch (IOException | IllegalStateException e) {
            throw new BenchException(e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new BenchException("Interrupted.", e);
        } catch (Exception e) {
            throw new BenchException("The run failed: " + e.getMessage(), e);
        } finally {
            line.finish();
        }
        EchoStack ours = stacks.get(0);
        EchoStack theirs = stacks.size() > 1 ? stacks.get(1) : null;
        RunInfo info = new RunInfo(ours.name(), ours.describe(options, plan.workload()),
                theirs == null ? null : theirs.name(), theirs == null ? null : theirs.describe(options, plan.workload()),
                target, Math.min(plan.connections(), maxCallers(plan)), plan.pipeline(), options.ioThreads(), plan.warmup(),
                plan.measure(), plan.repeat(), plan.maxInFlightBytes(), plan.responseBytes() < 0, Math.max(0, plan.responseBytes()),
                Environment.describe(), options.tls() == null ? null : TlsSettings.PROTOCOL, tlsNegotiated(stacks),
                plan.workload());
        Report report = new Report(info, results.get(0), theirs == null ? List.of() : results.get(1));
        output.emit(report, out, err);
        if (report.hasErrors()) {
            err.println("bench-cli: some " + (plan.stream() ? "streams" : "calls")
                    + " failed (see the errors column and the notes under the table).");
            err.flush();
            return 1;
        }
        return 0;
    }

    /** What each stack's server saw TLS negotiate ({@code rdmarpc-tcp TLSv1.3 TLS_AES_...}), or null if none did. */
    static String tlsNegotiated(List<EchoStack> stacks) {
        List<String> seen = new ArrayList<>();
        for (EchoStack s : stacks) {
            if (s.tlsNegotiated() != null) {
                seen.add(s.name() + " " + s.tlsNegotiated());
            }
        }
        return seen.isEmpty() ? null : String.join(", ", seen);
    }

    private static int maxCallers(MatrixPlan plan) {
        int max = 1;
        for (var c : plan.cells()) {
            max = Math.max(max, c.callers());
        }
        return max;
    }

    /** Starts a stack's server, or says in one sentence why it cannot. */
    static EchoServer startServer(EchoStack stack, InetSocketAddress address, StackOptions options) {
        try {
            return stack.startServer(address, options);
        } catch (BenchException e) {
            throw e;
        } catch (Exception e) {
            throw new BenchException("Cannot start the " + stack.name() + " echo server on " + show(address) + ": "
                    + message(e), e);
        }
    }

    static String show(InetSocketAddress a) {
        return a.getAddress().getHostAddress() + ":" + a.getPort();
    }

    static String message(Throwable e) {
        String m = e.getMessage();
        return m == null || m.isBlank() ? e.getClass().getSimpleName() : m;
    }

    static void closeAll(List<? extends AutoCloseable> things) {
        for (int i = things.size() - 1; i >= 0; i--) {
            try {
                things.get(i).close();
            } catch (Exception e) {
                // Closing at exit: nothing useful to do with a failure here.
            }
        }
    }
}
