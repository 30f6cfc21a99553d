package dev.rdmarpc.bench.stack;

import dev.rdmarpc.bench.BenchException;
import dev.rdmarpc.bench.load.EchoStack;
import java.io.IOException;
import java.net.URISyntaxException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.CodeSource;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/**
 * Loads the gRPC-java baseline from the {@code grpc-lib} directory beside the bench jar (or beside
 * {@code target/classes} when run from a build tree).
 *
 * <p>gRPC's jars are kept out of the module graph on purpose: on the module path every one of them
 * would become an automatic module resolved into every launch of the bench. Instead a
 * {@link URLClassLoader} over {@code grpc-lib/*.jar}, whose parent is the bench's own loader, defines the
 * adapter and gRPC in its unnamed module; the adapter implements {@link EchoStack} from the exported
 * {@code dev.rdmarpc.bench.load} package. The loader lives as long as the process (gRPC's threads run
 * its code until exit), so it is never closed.
 */
public final class BaselineLoader {
    /** Directory name, beside the bench jar, that holds the baseline's jars. */
    public static final String GRPC_LIB = "grpc-lib";
    private static final String GRPC_STACK = "dev.rdmarpc.bench.grpc.GrpcEchoStack";
    private static final String NO_NATIVE = "io.grpc.netty.shaded.io.netty.transport.noNative";

    private BaselineLoader() {
    }

    /** Loads a fresh gRPC-java stack, or says in one sentence why it cannot. */
    public static EchoStack grpc() {
        Path dir = grpcLibDirectory();
        List<URL> jars = new ArrayList<>();
        try (Stream<Path> files = Files.list(dir)) {
            for (Path p : files.filter(f -> f.getFileName().toString().endsWith(".jar")).sorted().toList()) {
                jars.add(p.toUri().toURL());
            }
        } catch (IOException e) {
            throw new BenchException("The gRPC baseline is not installed: cannot read " + dir
                    + " (it is built by `mvn package` in bench-cli/target/grpc-lib).", e);
        }
        if (jars.isEmpty()) {
            throw new BenchException("The gRPC baseline is not installed: " + dir + " holds no jars.");
        }
        // The baseline runs on Netty's NIO transport: keep gRPC's shaded Netty from probing for its native
        // epoll library (a JNI load, which the JDK warns about for code without native access).
        if (System.getProperty(NO_NATIVE) == null) {
            System.setProperty(NO_NATIVE, "true");
        }
        URLClassLoader loader = new URLClassLoader("grpc-baseline", jars.toArray(URL[]::new),
                BaselineLoader.class.getClassLoader());
        try {
            Class<?> type = Class.forName(GRPC_STACK, true, loader);
            return (EchoStack) type.getConstructor().newInstance();
        } catch (ReflectiveOperationException | LinkageError | ClassCastException e) {
            throw new BenchException("The gRPC baseline in " + dir + " cannot be loaded: " + e, e);
        }
    }

    /** Where the baseline's jars are expected: {@code grpc-lib} next to the jar (or classes directory) of the bench. */
    public static Path grpcLibDirectory() {
        CodeSource source = BaselineLoader.class.getProtectionDomain().getCodeSource();
        if (source == null || source.getLocation() == null) {
            throw new BenchException("Cannot tell where the bench jar is, so cannot find " + GRPC_LIB + "/.");
        }
        try {
            Path location = Path.of(source.getLocation().toURI());
            return location.toAbsolutePath().getParent().resolve(GRPC_LIB);
        } catch (URISyntaxException | IllegalArgumentException e) {
            throw new BenchException("Cannot tell where the bench jar is (" + source.getLocation() + "), so cannot find "
                    + GRPC_LIB + "/.", e);
        }
    }
}
