package dev.rdmarpc.bench.jmh;

import dev.rdmarpc.bench.load.CallListener;
import dev.rdmarpc.bench.load.EchoCaller;
import dev.rdmarpc.bench.load.EchoConnection;
import dev.rdmarpc.bench.load.EchoServer;
import dev.rdmarpc.bench.load.EchoStack;
import dev.rdmarpc.bench.load.StackOptions;
import dev.rdmarpc.bench.stack.BaselineLoader;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
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
 * One unary gRPC-java call at a time over loopback TCP, server and client in this JVM (one I/O thread per
 * side): {@code grpc-rdmarpc} (rdmarpc's gRPC transport) against {@code grpc} (grpc-netty), with the bench's
 * gRPC echo stacks, loaded from {@code grpc-lib} as the CLI's {@code --baseline} loads them. Both make the
 * same calls: a hand-made method descriptor with a {@code byte[]} marshaller, {@code ClientCalls.asyncUnaryCall},
 * {@code directExecutor()} on both sides. Run with {@code -prof gc}: {@code gc.alloc.rate.norm} is the
 * allocation per call of every thread of the JVM (both sides of the call, the I/O threads included).
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 3)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public class GrpcAllocationBench {
    /** The stack: {@code grpc-rdmarpc} or {@code grpc} (grpc-netty), named as {@code --baseline} names them. */
    @Param({"grpc-rdmarpc", "grpc"})
    public String stack;

    /** Request and response bytes of the call. */
    @Param({"128"})
    public int size;

    private EchoStack echoStack;
    private EchoServer server;
    private EchoConnection connection;
    private EchoCaller caller;
    private final Waiter waiter = new Waiter();

    /** Counts answers; the benchmark thread spins on the count. */
    static final class Waiter implements CallListener {
        volatile long completed;
        volatile Throwable error;

        @Override
        public void onResponse() {
            completed++; // single writer: the thread that completes the call
        }

        @Override
        public void onFailure(Throwable cause) {
            error = cause;
            completed++;
        }
    }

    @Setup(Level.Trial)
    public void setUp() throws Exception {
        echoStack = switch (stack) {
            case "grpc" -> BaselineLoader.grpc();
            case "grpc-rdmarpc" -> BaselineLoader.grpcRdmarpc();
            default -> throw new IllegalArgumentException("stack: grpc or grpc-rdmarpc, not " + stack);
        };
        StackOptions options = new StackOptions(1, Math.max(size, 1024), null, -1);
        server = echoStack.startServer(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), options);
        connection = echoStack.connect(server.address(), options);
        caller = connection.newCaller(size, size);
    }

    @TearDown(Level.Trial)
    public void tearDown() throws Exception {
        if (caller != null) {
            caller.close();
        }
        if (connection != null) {
            connection.close();
        }
        if (server != null) {
            server.close();
        }
        if (echoStack != null) {
            echoStack.close();
        }
    }

    /** One unary call of {@code size} bytes each way, waited for. */
    @Benchmark
    public long unaryCall() {
        long target = waiter.completed + 1;
        caller.call(waiter);
        while (waiter.completed < target) {
            Thread.onSpinWait();
        }
        Throwable e = waiter.error;
        if (e != null) {
            throw new IllegalStateException("the call failed: " + e, e);
        }
        return target;
    }
}
