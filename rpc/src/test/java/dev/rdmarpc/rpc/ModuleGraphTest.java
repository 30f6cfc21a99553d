package dev.rdmarpc.rpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.spi.ToolProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A TCP-only application needs nothing but {@code dev.rdmarpc.rpc} and the C library calls of
 * {@code dev.rdmarpc.posix}: the quick start of docs/guide.md is compiled and run with only those two
 * modules' classes on the module path (no ibverbs-ffm, rdmacm-ffm or cuda-ffm anywhere), under a probe that then checks the boot layer holds none of those modules and
 * that reaching for GPU attachments says which module is missing.
 */
@Timeout(120)
class ModuleGraphTest {
    private static final String PROBE = """
            import java.lang.invoke.MethodHandles;
            import java.lang.invoke.MethodType;
            import java.util.stream.Collectors;

            public class ModuleGraphProbe {
                public static void main(String[] args) throws Throwable {
                    QuickStart.main(args);
                    System.out.println("modules: " + ModuleLayer.boot().modules().stream().map(Module::getName)
                            .filter(n -> n.startsWith("dev.rdmarpc")).sorted().collect(Collectors.joining(",")));
                    System.out.println("ibverbs in the boot layer: "
                            + ModuleLayer.boot().findModule("dev.rdmarpc.ibverbs").isPresent());
                    // What an application compiled with cuda-ffm meets when run without it. Through a method
                    // handle: javac wants dev.rdmarpc.cuda to resolve create's overloads, and Class.getMethod
                    // would load the types every method of the class names.
                    Class<?> staging = Class.forName("dev.rdmarpc.rpc.gpu.GpuStaging");
                    try {
                        MethodHandles.publicLookup().findStatic(staging, "create", MethodType.methodType(staging, int.class))
                                .invoke(0);
                        System.out.println("GPU: no error");
                    } catch (Throwable e) {
                        System.out.println("GPU: " + e);
                    }
                    // An application that asks for RDMA without ibverbs-ffm: one sentence, no missing class.
                    try (var client = dev.rdmarpc.rpc.RpcClient.builder().rdma()
                            .address(new java.net.InetSocketAddress("127.0.0.1", 1)).connect()) {
                        System.out.println("RDMA: no error");
                    } catch (Throwable e) {
                        System.out.println("RDMA: " + e);
                    }
                }
            }
            """;

    /** The quick start of docs/guide.md, as {@link ReadmeExampleTest} reads it: class {@code QuickStart}, default package. */
    private static String quickStartSource() throws java.io.IOException {
        Path dir = Path.of("").toAbsolutePath();
        while (dir != null && !(Files.exists(dir.resolve("docs").resolve("guide.md")) && Files.exists(dir.resolve("rpc")))) {
            dir = dir.getParent();
        }
        assertTrue(dir != null, "docs/guide.md above " + Path.of("").toAbsolutePath());
        String text = Files.readString(dir.resolve("docs").resolve("guide.md"));
        int start = text.indexOf("```java\n", text.indexOf("## Quick start"));
        int end = text.indexOf("```", start + 8);
        assertTrue(start > 0 && end > start, "the Quick start of docs/guide.md has a java block");
        return text.substring(start + 8, end);
    }

    @Test
    void aTcpOnlyApplicationRunsWithRpcAloneOnTheModulePath(@TempDir Path dir) throws Exception {
        Path rpcOnly = Path.of("target", "classes").toAbsolutePath();
        assertTrue(Files.isRegularFile(rpcOnly.resolve("module-info.class")), "rpc's classes at " + rpcOnly);
        String posix = java.util.Arrays.stream(System.getProperty("jdk.module.path").split(java.io.File.pathSeparator))
                .filter(e -> e.contains("posix-ffm")).findFirst()
                .orElseThrow(() -> new AssertionError("posix-ffm on this test's module path"));
        String rpcClasses = rpcOnly + java.io.File.pathSeparator + posix;
        Files.writeString(dir.resolve("QuickStart.java"), quickStartSource());
        Files.writeString(dir.resolve("ModuleGraphProbe.java"), PROBE);

        ToolProvider javac = ToolProvider.findFirst("javac").orElseThrow();
        ByteArrayOutputStream diag = new ByteArrayOutputStream();
        PrintStream err = new PrintStream(diag, true, StandardCharsets.UTF_8);
        int rc = javac.run(err, err, "--module-path", rpcClasses, "--add-modules", "dev.rdmarpc.rpc",
                "-d", dir.toString(), dir.resolve("QuickStart.java").toString(), dir.resolve("ModuleGraphProbe.java").toString());
        assertEquals(0, rc, () -> "a TCP-only application does not compile against rpc alone:\n"
                + diag.toString(StandardCharsets.UTF_8));

        String java = ProcessHandle.current().info().command().orElseThrow();
        Process p = new ProcessBuilder(List.of(java, "--enable-native-access=dev.rdmarpc.posix,dev.rdmarpc.rpc",
                "--module-path", rpcClasses, "--add-modules", "dev.rdmarpc.rpc",
                "-cp", dir.toString(), "ModuleGraphProbe"))
                .redirectErrorStream(true).start();
        boolean exited = p.waitFor(90, TimeUnit.SECONDS);
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!exited) {
            p.destroyForcibly();
        }
        assertTrue(exited, "the application did not exit:\n" + out);
        assertEquals(0, p.exitValue(), out);
        assertTrue(out.lines().anyMatch("hello 5"::equals), "the TCP round trips ran:\n" + out);
        assertTrue(out.lines().anyMatch("modules: dev.rdmarpc.posix,dev.rdmarpc.rpc"::equals), "rpc and posix alone in the graph:\n" + out);
        assertTrue(out.lines().anyMatch("ibverbs in the boot layer: false"::equals), out);
        assertTrue(out.lines().anyMatch(l -> l.startsWith("GPU: java.lang.IllegalStateException: GPU staging needs"
                + " module dev.rdmarpc.cuda (cuda-ffm) on the module path")), "a clear error, not a missing class:\n" + out);
        assertTrue(out.lines().anyMatch(l -> l.startsWith("RDMA: java.lang.IllegalStateException: The RDMA transport needs"
                + " module dev.rdmarpc.ibverbs (ibverbs-ffm) on the module path")), "a clear error, not a missing class:\n" + out);
    }
}
