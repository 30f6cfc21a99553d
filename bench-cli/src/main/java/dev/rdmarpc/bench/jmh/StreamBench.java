package dev.rdmarpc.bench.jmh;

import dev.rdmarpc.rpc.ClientStream;
import dev.rdmarpc.rpc.Method;
import dev.rdmarpc.rpc.RpcClient;
import dev.rdmarpc.rpc.RpcException;
import dev.rdmarpc.rpc.RpcServer;
import dev.rdmarpc.rpc.codec.Codec;
import dev.rdmarpc.rpc.codec.Codecs;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * What a stream's message costs in allocation, beyond its value: a server stream of empty messages
 * (a codec of no bytes that decodes to one shared object, so the value allocates nothing) over TCP loopback, one
 * {@code receive} per operation. Server and client run in this JVM, so {@code -prof gc}'s
 * {@code gc.alloc.rate.norm} counts both ends of a message: the server's {@code send}, the frames
 * and window updates, the client's delivery and {@code receive}.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public class StreamBench {
    /** The one empty message: no bytes, decoded to itself. */
    static final Object MESSAGE = new Object();
    static final Codec<Object> NOTHING = new Codec<>() {
        @Override
        public int encodedSize(Object value) {
            return 0;
        }

        @Override
        public void encode(Object value, MemorySegment dst, long offset) {
        }

        @Override
        public Object decode(MemorySegment src, long offset, int length) {
            Codecs.requireLength(length, 0);
            return MESSAGE;
        }
    };
    static final Method<Object, Object> EMPTY = Method.of("emptyStream", NOTHING, NOTHING);

    private RpcServer server;
    private RpcClient client;
    private ClientStream<Object, Object> stream;

    @Setup(Level.Trial)
    public void setup() {
        server = RpcServer.builder().bind(new InetSocketAddress("127.0.0.1", 0)).tcp(cfg -> cfg.loop(l -> l.ioThreads(1)))
                .registerStream(EMPTY, s -> {
                    try {
                        while (true) {
                            s.send(MESSAGE);
                        }
                    } catch (RpcException stopped) {
                        // cancelled at tear-down
                    }
                })
                .start();
        client = RpcClient.connect(server.address());
        stream = client.openStream(EMPTY);
        stream.halfClose();
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        stream.cancel();
        client.close();
        server.close();
    }

    /** Takes the next message of the stream. */
    @Benchmark
    public Object receive() {
        return stream.receive();
    }
}
