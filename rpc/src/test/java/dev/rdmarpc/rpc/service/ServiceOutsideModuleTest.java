package dev.rdmarpc.rpc.service;

import static org.junit.jupiter.api.Assertions.*;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.spi.ToolProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A service used by code outside this module, as a user's is (the other service tests run inside it):
 * a program compiled with javac and run in a fresh JVM, on the class path and as a named module whose
 * package (interface, record and implementation alike) it does not export. The client class is defined
 * in the user's package, the server binding calls through the user's lookup.
 */
@Timeout(120)
class ServiceOutsideModuleTest {
    static final String DEMO = """
            package demo;

            import dev.rdmarpc.rpc.CallOptions;
            import dev.rdmarpc.rpc.ClientStream;
            import dev.rdmarpc.rpc.RpcClient;
            import dev.rdmarpc.rpc.RpcException;
            import dev.rdmarpc.rpc.RpcServer;
            import dev.rdmarpc.rpc.Status;
            import dev.rdmarpc.rpc.service.RpcMethod;
            import dev.rdmarpc.rpc.service.RpcService;
            import dev.rdmarpc.rpc.service.Services;
            import dev.rdmarpc.rpc.service.Streaming;
            import java.lang.invoke.MethodHandles;
            import java.time.Duration;
            import java.util.concurrent.CompletableFuture;

            public class Demo {
                record Pair(String name, long n) {}

                @RpcService
                interface Greeter {
                    @RpcMethod(inline = true)
                    String hello(String name);
                    Pair next(Pair p, CallOptions options);
                    CompletableFuture<Integer> count(String text);
                    Streaming<Pair, Pair> chat();
                }

                static final class GreeterImpl implements Greeter {
                    public String hello(String name) { return "hello " + name; }
                    public Pair next(Pair p, CallOptions options) {
                        if (p.n() < 0) throw new RpcException(Status.PERMISSION_DENIED, "negative");
                        return new Pair(p.name(), p.n() + 1);
                    }
                    public CompletableFuture<Integer> count(String text) { return CompletableFuture.completedFuture(text.length()); }
                    public Streaming<Pair, Pair> chat() {
                        return Streaming.serve(s -> {
                            for (Pair p; (p = s.receive()) != null; ) s.send(new Pair(p.name().toUpperCase(), -p.n()));
                        });
                    }
                }

                public static void main(String[] args) throws Exception {
                    try (RpcServer server = Services.register(RpcServer.builder(), Greeter.class, new GreeterImpl(),
                                 MethodHandles.lookup()).start();
                         RpcClient client = RpcClient.connect(server.address())) {
                        Greeter greeter = Services.client(client, Greeter.class, MethodHandles.lookup());
                        CallOptions fast = CallOptions.DEFAULT.withTimeout(Duration.ofSeconds(1));
                        System.out.println(greeter.hello("ada") + " " + greeter.next(new Pair("p", 1), fast)
                                + " " + greeter.count("four").get());
                        try {
                            greeter.next(new Pair("q", -1), fast);
                        } catch (RpcException e) {
                            System.out.println(e.status());
                        }
                        try (ClientStream<Pair, Pair> s = greeter.chat().open(fast)) {
                            s.send(new Pair("a", 1));
                            s.send(new Pair("b", 2));
                            s.halfClose();
                            StringBuilder sb = new StringBuilder("streamed");
                            for (Pair p; (p = s.receive()) != null; ) sb.append(' ').append(p);
                            System.out.println(sb);
                        }
                    }
                }
            }
            """;
    static final String EXPECTED = "hello ada Pair[name=p, n=2] 4";
    static final String STREAMED = "streamed Pair[name=A, n=-1] Pair[name=B, n=-2]";

    @Test
    void onTheClassPath() throws Exception {
        Path dir = Files.createTempDirectory("service-demo");
        Path src = write(dir.resolve("src/demo/Demo.java"), DEMO);
        Path out = dir.resolve("out");
        javac("--module-path", modulePath(), "--add-modules", "dev.rdmarpc.rpc", "-d", out.toString(), src.toString());
        run("--module-path", modulePath(), "--add-modules", "dev.rdmarpc.rpc", "-cp", out.toString(), "demo.Demo");
    }

    @Test
    void inANamedModuleThatExportsNothing() throws Exception {
        Path dir = Files.createTempDirectory("service-demo-module");
        Path src = write(dir.resolve("src/demo/Demo.java"), DEMO);
        Path info = write(dir.resolve("src/module-info.java"), "module demo { requires dev.rdmarpc.rpc; }");
        Path out = dir.resolve("out/demo");
        javac("--module-path", modulePath(), "-d", out.toString(), info.toString(), src.toString());
        run("--module-path", modulePath() + java.io.File.pathSeparator + out.getParent(), "-m", "demo/demo.Demo");
    }

    private static Path write(Path file, String text) throws Exception {
        Files.createDirectories(file.getParent());
        return Files.writeString(file, text);
    }

    private static String modulePath() {
        String modulePath = System.getProperty("jdk.module.path");
        assertNotNull(modulePath, "tests run on the module path");
        return modulePath;
    }

    private static void javac(String... args) {
        ToolProvider javac = ToolProvider.findFirst("javac").orElseThrow();
        ByteArrayOutputStream diag = new ByteArrayOutputStream();
        PrintStream ps = new PrintStream(diag, true, StandardCharsets.UTF_8);
        int rc = javac.run(ps, ps, args);
        assertEquals(0, rc, () -> "the demo does not compile:\n" + diag.toString(StandardCharsets.UTF_8));
    }

    private static void run(String... args) throws Exception {
        List<String> command = new ArrayList<>();
        command.add(ProcessHandle.current().info().command().orElseThrow());
        command.add("--enable-native-access=dev.rdmarpc.posix,dev.rdmarpc.rpc");
        command.addAll(List.of(args));
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        boolean exited = p.waitFor(60, TimeUnit.SECONDS);
        if (!exited) {
            p.destroyForcibly();
        }
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(exited, "the demo did not exit:\n" + out);
        assertEquals(0, p.exitValue(), out);
        assertTrue(out.lines().anyMatch(EXPECTED::equals), "the demo printed:\n" + out);
        assertTrue(out.lines().anyMatch("PERMISSION_DENIED"::equals), "the demo printed:\n" + out);
        assertTrue(out.lines().anyMatch(STREAMED::equals), "the demo printed:\n" + out);
    }
}
