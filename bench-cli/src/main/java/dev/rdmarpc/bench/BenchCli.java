package dev.rdmarpc.bench;

import java.io.PrintWriter;
import java.util.Arrays;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.ParseResult;
import picocli.CommandLine.ScopeType;

/**
 * Entry point of the bench CLI. Without arguments it runs {@code local} with its defaults.
 *
 * <p>Exit status: 0 success; 1 the run failed or some calls failed (for {@code doctor}: a TLS file it was
 * given cannot be used); 2 bad options. Errors are one
 * sentence on stderr, never a stack trace (unless {@code --stacktrace}).
 */
@Command(name = "bench-cli", mixinStandardHelpOptions = true, version = "rdmarpc bench 0.1.0",
        description = {"Throughput and latency of rdmarpc echo calls over TCP or RDMA, optionally side",
            "by side with a baseline (--baseline): grpc-netty or rdmarpc's gRPC transport (grpc-rdmarpc)",
            "under gRPC-java, or a plain Netty NIO echo, the ceiling of plain Java NIO.",
            "--workload stream measures server streaming instead (messages/s and Gb/s;",
            "rdmarpc and both gRPC stacks). With --tls (local, server, client), over TLS 1.3;",
            "doctor --tls-cert/--tls-key/--tls-keystore/--tls-trust checks TLS files.",
            "Without a command: `local` with its defaults."},
        subcommands = {LocalCommand.class, ClientCommand.class, ServerCommand.class, DoctorCommand.class,
            JmhCommand.class, CommandLine.HelpCommand.class},
        footer = {"", "Exit status: 0 done, 1 the run or some calls failed (doctor: a TLS file given cannot be used),",
            "2 bad options."})
public final class BenchCli implements Runnable {
    /**
     * The library's lifecycle messages (server started, stopped) would interleave with the progress line
     * and the table; the bench keeps warnings and errors only. Held so that JUL cannot drop the setting.
     */
    private static final java.util.logging.Logger LIBRARY_LOG = java.util.logging.Logger.getLogger("dev.rdmarpc");

    @Option(names = "--stacktrace", hidden = true, scope = ScopeType.INHERIT,
            description = "Print the stack trace of an unexpected failure.")
    boolean stacktrace;

    public static void main(String[] args) {
        LIBRARY_LOG.setLevel(java.util.logging.Level.WARNING);
        System.exit(execute(args));
    }

    /** Runs the CLI with these arguments and returns the exit status. */
    public static int execute(String... args) {
        try {
            return commandLine().execute(args.length == 0 ? new String[] {"local"} : args);
        } catch (Throwable t) {
            // An Error escaping a command (picocli's handler sees Exceptions only): still one line.
            System.err.println("bench-cli: unexpected failure: " + t
                    + (Arrays.asList(args).contains("--stacktrace") ? "" : " (rerun with --stacktrace for details)"));
            if (Arrays.asList(args).contains("--stacktrace")) {
                t.printStackTrace();
            }
            return 1;
        }
    }

    /** The configured command line: case-insensitive enums, one-sentence errors. */
    public static CommandLine commandLine() {
        CommandLine cl = new CommandLine(new BenchCli());
        cl.setCaseInsensitiveEnumValuesAllowed(true);
        cl.setParameterExceptionHandler(BenchCli::badOptions);
        cl.setExecutionExceptionHandler(BenchCli::failed);
        CommandLine jmh = cl.getSubcommands().get("jmh");
        jmh.setUnmatchedOptionsArePositionalParams(true);
        return cl;
    }

    @Override
    public void run() {
        new CommandLine(this).usage(System.out);
    }

    private static int badOptions(ParameterException e, String[] args) {
        CommandLine cmd = e.getCommandLine();
        PrintWriter err = cmd.getErr();
        String name = cmd.getCommandSpec().qualifiedName();
        err.println(name + ": " + firstLine(e.getMessage()) + " (see `" + name + " --help`)");
        err.flush();
        return 2;
    }

    private static int failed(Exception e, CommandLine cmd, ParseResult parsed) {
        PrintWriter err = cmd.getErr();
        String name = cmd.getCommandSpec().qualifiedName();
        if (e instanceof BenchException) {
            err.println(name + ": " + e.getMessage());
        } else {
            err.println(name + ": unexpected failure: " + e + (wantsTrace(parsed) ? "" : " (rerun with --stacktrace for details)"));
        }
        if (wantsTrace(parsed)) {
            e.printStackTrace(err);
        }
        err.flush();
        return 1;
    }

    private static boolean wantsTrace(ParseResult parsed) {
        return Arrays.asList(parsed.originalArgs().toArray(String[]::new)).contains("--stacktrace");
    }

    private static String firstLine(String message) {
        if (message == null) {
            return "bad options";
        }
        int nl = message.indexOf('\n');
        String line = (nl < 0 ? message : message.substring(0, nl)).strip();
        return line.endsWith(".") ? line.substring(0, line.length() - 1) : line;
    }
}
