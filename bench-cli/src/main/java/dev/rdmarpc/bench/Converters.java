package dev.rdmarpc.bench;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.time.Duration;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/** picocli converters for the CLI's quantities; each failure is one sentence. */
final class Converters {
    private Converters() {
    }

    /** {@code 128}, {@code 4K}, {@code 1MiB}, ... in bytes. */
    static final class Size implements ITypeConverter<Long> {
        @Override
        public Long convert(String value) {
            try {
                return Units.parseSize(value);
            } catch (IllegalArgumentException e) {
                throw new TypeConversionException(e.getMessage());
            }
        }
    }

    /** {@code 500ms}, {@code 5s}, {@code 1m}, ... */
    static final class Time implements ITypeConverter<Duration> {
        @Override
        public Duration convert(String value) {
            try {
                return Units.parseDuration(value);
            } catch (IllegalArgumentException e) {
                throw new TypeConversionException(e.getMessage());
            }
        }
    }

    /** A positive whole number. */
    static final class Positive implements ITypeConverter<Integer> {
        @Override
        public Integer convert(String value) {
            int n;
            try {
                n = Integer.parseInt(value.strip());
            } catch (NumberFormatException e) {
                throw new TypeConversionException("'" + value + "' is not a whole number");
            }
            if (n < 1) {
                throw new TypeConversionException("'" + value + "' must be at least 1");
            }
            return n;
        }
    }

    /** A rate in calls per second: a positive whole number, optionally with K (thousands) or M (millions). */
    static final class Rate implements ITypeConverter<Long> {
        @Override
        public Long convert(String value) {
            String v = value.strip();
            long unit = 1;
            if (v.endsWith("K") || v.endsWith("k")) {
                unit = 1_000;
            } else if (v.endsWith("M") || v.endsWith("m")) {
                unit = 1_000_000;
            }
            String digits = unit == 1 ? v : v.substring(0, v.length() - 1);
            long n;
            try {
                n = Long.parseLong(digits);
            } catch (NumberFormatException e) {
                throw new TypeConversionException("'" + value + "' is not a rate in calls per second (e.g. 2000, 50K, 1M)");
            }
            if (n < 1) {
                throw new TypeConversionException("'" + value + "' must be at least 1 call per second");
            }
            if (n > Long.MAX_VALUE / unit) {
                throw new TypeConversionException("'" + value + "' is too large");
            }
            return n * unit;
        }
    }

    /** {@code host:port}, {@code [v6]:port}. */
    static final class Address implements ITypeConverter<InetSocketAddress> {
        @Override
        public InetSocketAddress convert(String value) {
            String v = value.strip();
            int colon = v.lastIndexOf(':');
            if (colon <= 0 || colon == v.length() - 1) {
                throw new TypeConversionException("'" + value + "' is not HOST:PORT (e.g. 127.0.0.1:7420)");
            }
            String host = v.substring(0, colon);
            if (host.startsWith("[") && host.endsWith("]")) {
                host = host.substring(1, host.length() - 1);
            }
            int port;
            try {
                port = Integer.parseInt(v.substring(colon + 1));
            } catch (NumberFormatException e) {
                throw new TypeConversionException("'" + value + "' has no valid port number");
            }
            if (port < 0 || port > 65535) {
                throw new TypeConversionException("port " + port + " is out of range 0-65535");
            }
            try {
                return new InetSocketAddress(InetAddress.getByName(host), port);
            } catch (UnknownHostException e) {
                throw new TypeConversionException("cannot resolve host '" + host + "'");
            }
        }
    }
}
