package dev.rdmarpc.bench.jmh;

import dev.rdmarpc.rpc.Method;
import dev.rdmarpc.rpc.RpcClient;
import dev.rdmarpc.rpc.RpcServer;
import dev.rdmarpc.rpc.codec.Codecs;
import dev.rdmarpc.rpc.service.RpcMethod;
import dev.rdmarpc.rpc.service.RpcService;
import dev.rdmarpc.rpc.service.Services;
import java.lang.invoke.MethodHandles;
import java.net.InetSocketAddress;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.CompilerControl;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * What a service interface costs per call beside the typed call it stands for: the same TCP loopback
 * echo of a {@code String} (one server I/O thread, one client I/O thread, one call at a time) called
 * as {@code client.call(ECHO, s)} and as {@code echo.echo(s)} on a {@code Services.client} of an
 * {@code @RpcService} interface, blocking and asynchronous. Both reach the same server method, the
 * interface's, bound with {@code Services.register}; the {@code *HandRegistered*} benchmarks call
 * hand-registered handlers instead, inline and blocking, for the cost of the server binding.
 * {@code -prof gc} counts every thread's allocation, both I/O threads included: the requirement is
 * that the service client allocates no more per call than the typed call.
 *
 * <p>The {@code *Spread} pair matters most: a client built on {@link java.lang.reflect.Proxy} passes its
 * arguments in a new {@code Object[]} that C2 removes only when it inlines the invocation handler into
 * the proxy method, which it stops doing once the handler is compiled on its own; with three methods
 * called from call sites compiled apart that happened in one fork of four (24 B more per call). The
 * generated client class has no array to remove. Run with {@code -f 3} or more to see every fork.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public class ServiceBench {
    /** The service; the server runs {@code echo} inline on its I/O thread, as the typed bench's handler does. */
    @RpcService
    public interface BenchEcho {
        /**
         * @param s the text
         * @return the text
         */
        @RpcMethod(inline = true)
        String echo(String s);

        /**
         * @param s the text
         * @return the text, from a virtual thread (the default for a synchronous method)
         */
        String echoBlocking(String s);

        /**
         * @param s the text
         * @return a future of the text
         */
        CompletableFuture<String> echoAsync(String s);

        /**
         * @param s the text
         * @return its length
         */
        @RpcMethod(inline = true)
        int length(String s);

        /**
         * @param s the text
         * @return the text
         */
        @RpcMethod(inline = true)
        String same(String s);
    }

    /** The typed calls to the same wire methods (wire name rule: service + "/" + method). */
    static final Method<String, String> ECHO = Method.of("BenchEcho/echo", Codecs.STRING, Codecs.STRING);
    static final Method<String, String> ECHO_ASYNC = Method.of("BenchEcho/echoAsync", Codecs.STRING, Codecs.STRING);
    static final Method<String, Integer> LENGTH = Method.of("BenchEcho/length", Codecs.STRING, Codecs.INT);
    static final Method<String, String> SAME = Method.of("BenchEcho/same", Codecs.STRING, Codecs.STRING);
    static final Method<String, String> ECHO_BLOCKING = Method.of("BenchEcho/echoBlocking", Codecs.STRING, Codecs.STRING);
    static final Method<String, String> HAND_ECHO = Method.of("handEcho", Codecs.STRING, Codecs.STRING);
    static final Method<String, String> HAND_ECHO_BLOCKING = Method.of("handEchoBlocking", Codecs.STRING, Codecs.STRING);

    @Param({"128"})
    public int size;

    private RpcServer server;
    private RpcClient client;
    private BenchEcho echo;
    private String text;

    @Setup(Level.Trial)
    public void setup() {
        BenchEcho impl = new BenchEcho() {
            @Override
            public String echo(String s) {
                return s;
            }

            @Override
            public CompletableFuture<String> echoAsync(String s) {
                return CompletableFuture.completedFuture(s);
            }

            @Override
            public String echoBlocking(String s) {
                return s;
            }

            @Override
            public int length(String s) {
                return s.length();
            }

            @Override
            public String same(String s) {
                return s;
            }
        };
        RpcServer.Builder builder = RpcServer.builder().bind(new InetSocketAddress("127.0.0.1", 0))
                .tcp(cfg -> cfg.loop(l -> l.ioThreads(1)))
                .register(HAND_ECHO, (ctx, s) -> s)
                .registerBlocking(HAND_ECHO_BLOCKING, (ctx, s) -> s);
        server = Services.register(builder, BenchEcho.class, impl, MethodHandles.lookup()).start();
        client = RpcClient.connect(server.address());
        echo = Services.client(client, BenchEcho.class, MethodHandles.lookup());
        text = "t".repeat(size);
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        client.close();
        server.close();
    }

    /** The typed blocking call to the interface's method. */
    @Benchmark
    public String typedCall() {
        return client.call(ECHO, text);
    }

    /** The same call through the service client. */
    @Benchmark
    public String serviceCall() {
        return echo.echo(text);
    }

    /** The typed asynchronous call, joined. */
    @Benchmark
    public String typedCallAsync() {
        return client.callAsync(ECHO_ASYNC, text).join();
    }

    /** The same through the service client. */
    @Benchmark
    public String serviceCallAsync() {
        return echo.echoAsync(text).join();
    }

    private int turn;

    /**
     * Three methods of the service in turn, typed, each from a call site of its own that is compiled
     * apart, as in an application (where the calls of a client are not all made from one loop that
     * the JIT compiles as a whole).
     */
    @Benchmark
    public Object typedCallSpread() {
        return switch (turn++ % 3) {
            case 0 -> typedEcho();
            case 1 -> typedLength();
            default -> typedSame();
        };
    }

    /** The same three through the service client, each from a call site of its own. */
    @Benchmark
    public Object serviceCallSpread() {
        return switch (turn++ % 3) {
            case 0 -> serviceEcho();
            case 1 -> serviceLength();
            default -> serviceSame();
        };
    }

    @CompilerControl(CompilerControl.Mode.DONT_INLINE)
    String typedEcho() {
        return client.call(ECHO, text);
    }

    @CompilerControl(CompilerControl.Mode.DONT_INLINE)
    int typedLength() {
        return client.call(LENGTH, text);
    }

    @CompilerControl(CompilerControl.Mode.DONT_INLINE)
    String typedSame() {
        return client.call(SAME, text);
    }

    @CompilerControl(CompilerControl.Mode.DONT_INLINE)
    String serviceEcho() {
        return echo.echo(text);
    }

    @CompilerControl(CompilerControl.Mode.DONT_INLINE)
    int serviceLength() {
        return echo.length(text);
    }

    @CompilerControl(CompilerControl.Mode.DONT_INLINE)
    String serviceSame() {
        return echo.same(text);
    }

    /** The typed blocking call to a handler registered by hand: the server binding's share. */
    @Benchmark
    public String typedCallHandRegistered() {
        return client.call(HAND_ECHO, text);
    }

    /** The typed call to the interface's blocking method (a virtual thread per call on the server). */
    @Benchmark
    public String typedCallBlocking() {
        return client.call(ECHO_BLOCKING, text);
    }

    /** The typed call to a blocking handler registered by hand: the server binding's share on that path. */
    @Benchmark
    public String typedCallHandRegisteredBlocking() {
        return client.call(HAND_ECHO_BLOCKING, text);
    }
}
