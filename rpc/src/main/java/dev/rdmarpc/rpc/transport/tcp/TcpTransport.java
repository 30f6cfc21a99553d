package dev.rdmarpc.rpc.transport.tcp;

import dev.rdmarpc.rpc.buffer.BufferPool;
import dev.rdmarpc.rpc.transport.Acceptor;
import dev.rdmarpc.rpc.transport.Connection;
import dev.rdmarpc.rpc.transport.FrameHandler;
import dev.rdmarpc.rpc.transport.ServerEndpoint;
import dev.rdmarpc.rpc.transport.Transport;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Objects;

/**
 * The TCP {@link Transport}: {@link Config#ioThreads} NIO event loops, each owning its connections.
 * Create one with {@link #create(Config)}; the creator closes it.
 */
public final class TcpTransport implements Transport {
    private final Config config;

    private TcpTransport(Config config) {
        this.config = config;
        throw new UnsupportedOperationException("TCP transport: implementation follows the API commit");
    }

    /**
     * @param config settings, validated here
     * @return a started transport the caller owns
     */
    public static TcpTransport create(Config config) {
        return new TcpTransport(config.copy().conclude());
    }

    /** @return a transport with the default {@link Config} */
    public static TcpTransport create() {
        return create(new Config());
    }

    @Override
    public String name() {
        return "tcp";
    }

    @Override
    public BufferPool bufferPool() {
        throw new UnsupportedOperationException();
    }

    @Override
    public ServerEndpoint listen(InetSocketAddress address, int maxFrameLength, Acceptor acceptor) throws IOException {
        throw new UnsupportedOperationException();
    }

    @Override
    public Connection connect(InetSocketAddress address, int maxFrameLength, FrameHandler handler, Duration timeout)
            throws IOException {
        throw new UnsupportedOperationException();
    }

    @Override
    public void close() {
    }

    /** @return the (validated) settings */
    public Config config() {
        return config.copy();
    }

    /**
     * Settings of a {@link TcpTransport}, fluent, with documented defaults; validated once by
     * {@link #conclude()}.
     */
    public static final class Config {
        private int ioThreads = Runtime.getRuntime().availableProcessors();
        private BufferPool.Config bufferPool = new BufferPool.Config();
        private String threadNamePrefix = "rdmarpc-tcp";
        private int socketSendBuffer;
        private int socketReceiveBuffer;
        private long writeHighWaterMark = 8L << 20;
        private Duration tickInterval = Duration.ofMillis(10);

        /** Creates a configuration with the defaults. */
        public Config() {
        }

        /**
         * @param n number of event-loop threads, at least 1; default the number of cores
         * @return this
         */
        public Config ioThreads(int n) {
            this.ioThreads = n;
            return this;
        }

        /**
         * @param config the buffer pool's settings; default {@code new BufferPool.Config()}
         * @return this
         */
        public Config bufferPool(BufferPool.Config config) {
            this.bufferPool = Objects.requireNonNull(config, "config");
            return this;
        }

        /**
         * @param prefix name prefix of the event-loop threads; default "rdmarpc-tcp"
         * @return this
         */
        public Config threadNamePrefix(String prefix) {
            this.threadNamePrefix = Objects.requireNonNull(prefix, "prefix");
            return this;
        }

        /**
         * @param bytes SO_SNDBUF, or 0 for the system default (the default)
         * @return this
         */
        public Config socketSendBuffer(int bytes) {
            this.socketSendBuffer = bytes;
            return this;
        }

        /**
         * @param bytes SO_RCVBUF, or 0 for the system default (the default)
         * @return this
         */
        public Config socketReceiveBuffer(int bytes) {
            this.socketReceiveBuffer = bytes;
            return this;
        }

        /**
         * @param bytes bytes queued for sending on one connection above which
         *              {@link Connection#claim} answers {@link Connection#BACK_PRESSURED}; default 8 MiB
         * @return this
         */
        public Config writeHighWaterMark(long bytes) {
            this.writeHighWaterMark = bytes;
            return this;
        }

        /**
         * @param interval period of {@link FrameHandler#onTick}; default 10 ms (the granularity of
         *                 call timeouts)
         * @return this
         */
        public Config tickInterval(Duration interval) {
            this.tickInterval = Objects.requireNonNull(interval, "interval");
            return this;
        }

        /** @return the number of event loops */
        public int ioThreads() {
            return ioThreads;
        }

        /** @return the buffer pool settings */
        public BufferPool.Config bufferPool() {
            return bufferPool;
        }

        /** @return the thread name prefix */
        public String threadNamePrefix() {
            return threadNamePrefix;
        }

        /** @return SO_SNDBUF or 0 */
        public int socketSendBuffer() {
            return socketSendBuffer;
        }

        /** @return SO_RCVBUF or 0 */
        public int socketReceiveBuffer() {
            return socketReceiveBuffer;
        }

        /** @return the write high-water mark */
        public long writeHighWaterMark() {
            return writeHighWaterMark;
        }

        /** @return the tick interval */
        public Duration tickInterval() {
            return tickInterval;
        }

        /**
         * Validates the settings.
         *
         * @return this
         * @throws IllegalArgumentException naming the first bad setting
         */
        public Config conclude() {
            if (ioThreads < 1 || ioThreads > 1024) {
                throw new IllegalArgumentException("ioThreads must be in [1, 1024]: " + ioThreads);
            }
            if (socketSendBuffer < 0 || socketReceiveBuffer < 0) {
                throw new IllegalArgumentException("socket buffer sizes must not be negative");
            }
            if (writeHighWaterMark < 1) {
                throw new IllegalArgumentException("writeHighWaterMark must be positive: " + writeHighWaterMark);
            }
            if (tickInterval.toMillis() < 1 || tickInterval.toSeconds() > 60) {
                throw new IllegalArgumentException("tickInterval must be in [1 ms, 60 s]: " + tickInterval);
            }
            bufferPool.conclude();
            return this;
        }

        Config copy() {
            return new Config().ioThreads(ioThreads).bufferPool(bufferPool).threadNamePrefix(threadNamePrefix)
                    .socketSendBuffer(socketSendBuffer).socketReceiveBuffer(socketReceiveBuffer)
                    .writeHighWaterMark(writeHighWaterMark).tickInterval(tickInterval);
        }
    }
}
