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
 * Loads a baseline stack from its own directory of jars beside the bench jar (or beside
 * {@code target/classes} when run from a build tree): the gRPC-java baseline and gRPC-java over rdmarpc's
 * gRPC transport from {@code grpc-lib}, the plain Netty echo from {@code netty-lib}.
 *
 * <p>A baseline's jars are kept out of the module graph on purpose: on the module path every one of them
 * would become an automatic module resolved into every launch of the bench. Instead a
 * {@link URLClassLoader} over {@code <lib>/*.jar}, whose parent is the bench's own loader, defines the
 * adapter and its library in its unnamed module; the adapter implements {@link EchoStack} from the exported
 * {@code dev.rdmarpc.bench.load} package. The loader lives as long as the process (the library's threads
 * run its code until exit), so it is never closed.
 */
public final class BaselineLoader {
    /** Directory name, beside the bench jar, that holds the gRPC baseline's jars. */
    public static final String GRPC_LIB = "grpc-lib";
    /** Directory name, beside the bench jar, that holds the Netty baseline's jars. */
    public static final String NETTY_LIB = "netty-lib";

    private BaselineLoader() {
    }

    /** Loads a fresh gRPC-java stack, or says in one sentence why it cannot. */
    public static EchoStack grpc() {
        // gRPC's Netty is shaded, so its switch carries the shaded package prefix.
        return load("gRPC", GRPC_LIB, "dev.rdmarpc.bench.grpc.GrpcEchoStack",
                "io.grpc.netty.shaded.io.netty.transport.noNative", null);
    }

    /**
     * Loads a fresh stack of gRPC-java over rdmarpc's gRPC transport on TCP, from the gRPC baseline's jars
     * (which hold the {@code rdmarpc-grpc} jar too), or says in one sentence why it cannot.
     */
    public static EchoStack grpcRdmarpc() {
        return grpcRdmarpc(false);
    }

    /** {@link #grpcRdmarpc()} on rdmarpc's RDMA transport when {@code rdma}, else on TCP. */
    public static EchoStack grpcRdmarpc(boolean rdma) {
        return load("gRPC-over-rdmarpc", GRPC_LIB, "dev.rdmarpc.bench.grpc.GrpcRdmarpcEchoStack",
                "io.grpc.netty.shaded.io.netty.transport.noNative", rdma);
    }

    /** Loads a fresh Netty NIO echo stack, or says in one sentence why it cannot. */
    public static EchoStack netty() {
        return load("Netty", NETTY_LIB, "dev.rdmarpc.bench.netty.NettyEchoStack", "io.netty.transport.noNative", null);
    }

    /**
     * Loads the adapter class {@code stackClass} from the jars in {@code lib} with a class loader of their
     * own and instantiates it.
     *
     * @param what     the baseline's name in messages ("gRPC")
     * @param noNative the system property that keeps the baseline's Netty on NIO, set unless already set
     * @param rdma     the argument of the adapter's {@code (boolean rdma)} constructor, or null for its
     *                 constructor without arguments
     */
    private static EchoStack load(String what, String lib, String stackClass, String noNative, Boolean rdma) {
        Path dir = libDirectory(lib);
        List<URL> jars = new ArrayList<>();
        try (Stream<Path> files = Files.list(dir)) {
            for (Path p : files.filter(f -> f.getFileName().toString().endsWith(".jar")).sorted().toList()) {
                jars.add(p.toUri().toURL());
            }
        } catch (IOException e) {
            throw new BenchException("The " + what + " baseline is not installed: cannot read " + dir
                    + " (it is built by `mvn package` in bench-cli/target/" + lib + ").", e);
        }
        if (jars.isEmpty()) {
            throw new BenchException("The " + what + " baseline is not installed: " + dir + " holds no jars.");
        }
        // The baseline runs on Netty's NIO transport: keep Netty from probing for its native epoll
        // library (a JNI load, which the JDK warns about for code without native access).
        if (System.getProperty(noNative) == null) {
            System.setProperty(noNative, "true");
        }
        URLClassLoader loader = new URLClassLoader(lib.replace("-lib", "-baseline"), jars.toArray(URL[]::new),
                BaselineLoader.class.getClassLoader());
        try {
            Class<?> type = Class.forName(stackClass, true, loader);
            return (EchoStack) (rdma == null ? type.getConstructor().newInstance()
                    : type.getConstructor(boolean.class).newInstance(rdma));
        } catch (ReflectiveOperationException | LinkageError | ClassCastException e) {
            throw new BenchException("The " + what + " baseline in " + dir + " cannot be loaded: " + e, e);
        }
    }

    /** Where a baseline's jars are expected: {@code lib} next to the jar (or classes directory) of the bench. */
    public static Path libDirectory(String lib) {
        CodeSource source = BaselineLoader.class.getProtectionDomain().getCodeSource();
        if (source == null || source.getLocation() == null) {
            throw new BenchException("Cannot tell where the bench jar is, so cannot find " + lib + "/.");
        }
        try {
            Path location = Path.of(source.getLocation().toURI());
            return location.toAbsolutePath().getParent().resolve(lib);
        } catch (URISyntaxException | IllegalArgumentException e) {
            throw new BenchException("Cannot tell where the bench jar is (" + source.getLocation() + "), so cannot find "
                    + lib + "/.", e);
        }
    }
}
