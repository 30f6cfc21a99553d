package dev.rdmarpc.bench;

import java.io.File;
import java.lang.management.ManagementFactory;
import java.net.URISyntaxException;
import java.nio.file.Path;
import java.security.CodeSource;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.Callable;
import org.openjdk.jmh.runner.NoBenchmarksException;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.RunnerException;
import org.openjdk.jmh.runner.options.CommandLineOptionException;
import org.openjdk.jmh.runner.options.CommandLineOptions;
import org.openjdk.jmh.runner.options.Options;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * Runs the JMH benchmarks of {@code dev.rdmarpc.bench.jmh} (and any other JMH benchmark in the bench jar)
 * with JMH's own command line, e.g. {@code jmh -prof gc} or {@code jmh Codec -f 1 -prof gc}.
 *
 * <p>Forked JVMs get the production launch: the bench's module path, {@code --add-modules
 * dev.rdmarpc.bench} and the same {@code --enable-native-access} list as this JVM, prepended to any
 * {@code -jvmArgsPrepend} given. They never inherit this JVM's other arguments.
 */
@Command(name = "jmh", description = {"Runs the JMH benchmarks; arguments are JMH's own (try `jmh -h`, `jmh -l`).",
    "Example: jmh -prof gc   (every benchmark, with allocation per operation)."})
final class JmhCommand implements Callable<Integer> {
    /** The library's modules plus the bench, when this JVM was not given a list (class-path launch). */
    static final String DEFAULT_NATIVE_ACCESS =
            "dev.rdmarpc.posix,dev.rdmarpc.ibverbs,dev.rdmarpc.rdmacm,dev.rdmarpc.cuda,dev.rdmarpc.rpc,dev.rdmarpc.bench";

    @Parameters(arity = "0..*", paramLabel = "JMH-ARGS", description = "Arguments for JMH.")
    List<String> args = new ArrayList<>();

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() throws Exception {
        CommandLineOptions cmd;
        try {
            cmd = new CommandLineOptions(args.toArray(String[]::new));
        } catch (CommandLineOptionException e) {
            throw new ParameterException(spec.commandLine(), "JMH: " + e.getMessage());
        }
        if (cmd.shouldHelp()) {
            cmd.showHelp();
            return 0;
        }
        if (cmd.shouldListProfilers()) {
            cmd.listProfilers();
            return 0;
        }
        if (cmd.shouldListResultFormats()) {
            cmd.listResultFormats();
            return 0;
        }
        List<String> prepend = new ArrayList<>(forkLaunch());
        prepend.addAll(cmd.getJvmArgsPrepend().orElse(List.of()));
        Collection<String> own = cmd.getJvmArgs().orElse(List.of());
        Options options = new OptionsBuilder().parent(cmd)
                .jvmArgsPrepend(prepend.toArray(String[]::new))
                .jvmArgs(own.toArray(String[]::new))
                .build();
        Runner runner = new Runner(options);
        if (cmd.shouldList()) {
            runner.list();
            return 0;
        }
        if (cmd.shouldListWithParams()) {
            runner.listWithParams(cmd);
            return 0;
        }
        try {
            runner.run();
            return 0;
        } catch (NoBenchmarksException e) {
            throw new BenchException("No JMH benchmark matches " + cmd.getIncludes() + " (list them with `jmh -l`).", e);
        } catch (RunnerException e) {
            throw new BenchException("JMH failed: " + MatrixCommand.message(e), e);
        }
    }

    /** The production launch for forks: native access, module path, the bench module as root. */
    static List<String> forkLaunch() {
        String nativeAccess = null;
        for (String a : ManagementFactory.getRuntimeMXBean().getInputArguments()) {
            if (a.startsWith("--enable-native-access=")) {
                String list = a.substring("--enable-native-access=".length());
                nativeAccess = nativeAccess == null ? list : nativeAccess + "," + list;
            }
        }
        if (nativeAccess == null || nativeAccess.equals("ALL-UNNAMED")) {
            nativeAccess = DEFAULT_NATIVE_ACCESS;
        }
        return List.of("--enable-native-access=" + nativeAccess, "--module-path", modulePath(),
                "--add-modules", "dev.rdmarpc.bench");
    }

    /** This JVM's module path, or, on the class path, the bench jar and its {@code lib/} directory. */
    static String modulePath() {
        String mp = System.getProperty("jdk.module.path");
        if (mp != null && !mp.isBlank()) {
            return mp;
        }
        CodeSource source = JmhCommand.class.getProtectionDomain().getCodeSource();
        try {
            Path jar = Path.of(source.getLocation().toURI()).toAbsolutePath();
            return jar + File.pathSeparator + jar.getParent().resolve("lib");
        } catch (URISyntaxException | RuntimeException e) {
            throw new BenchException("Cannot tell where the bench jar is, so cannot give JMH's forks a module path.", e);
        }
    }
}
