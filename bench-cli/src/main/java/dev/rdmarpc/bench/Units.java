package dev.rdmarpc.bench;

import java.time.Duration;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Parses and prints the two kinds of quantity the CLI takes: byte sizes and durations.
 *
 * <p>Sizes are binary multiples: {@code 128}, {@code 128B}, {@code 4K}, {@code 4KB}, {@code 4KiB} and
 * {@code 1M}, {@code 1MB}, {@code 1MiB}, {@code 1G} (K = 1024 bytes, as in coro_rpc's table). Durations
 * take a unit: {@code 500ms}, {@code 5s}, {@code 1m}, {@code 1h}, also {@code us}, {@code ns} and
 * fractions such as {@code 1.5s}; a bare number means seconds. Parse failures throw
 * {@link IllegalArgumentException} whose message is one sentence fit for the user.
 */
public final class Units {
    private static final Pattern SIZE = Pattern.compile("(\\d+)\\s*([kmg]?)(i?b)?", Pattern.CASE_INSENSITIVE);
    private static final Pattern DURATION = Pattern.compile("(\\d+(?:\\.\\d+)?)\\s*(ns|us|µs|ms|s|m|min|h)?",
            Pattern.CASE_INSENSITIVE);

    private Units() {
    }

    /** Parses a size such as {@code 4K}; throws {@link IllegalArgumentException} with a one-sentence message. */
    public static long parseSize(String text) {
        String t = text == null ? "" : text.strip();
        Matcher m = SIZE.matcher(t);
        if (!m.matches() || (m.group(3) != null && m.group(3).equalsIgnoreCase("ib") && m.group(2).isEmpty())) {
            throw new IllegalArgumentException("'" + text + "' is not a size (write e.g. 128, 128B, 4K, 4KiB, 1M)");
        }
        long shift = switch (m.group(2).toLowerCase(Locale.ROOT)) {
            case "k" -> 10;
            case "m" -> 20;
            case "g" -> 30;
            default -> 0;
        };
        long value;
        try {
            value = Long.parseLong(m.group(1));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("'" + text + "' is too large a size");
        }
        if (value > (Long.MAX_VALUE >> shift)) {
            throw new IllegalArgumentException("'" + text + "' is too large a size");
        }
        return value << shift;
    }

    /** Prints a size the way coro_rpc's table does: 128B, 4K, 1M; other values in bytes. */
    public static String formatSize(long bytes) {
        if (bytes >= (1L << 30) && bytes % (1L << 30) == 0) {
            return (bytes >> 30) + "G";
        }
        if (bytes >= (1L << 20) && bytes % (1L << 20) == 0) {
            return (bytes >> 20) + "M";
        }
        if (bytes >= (1L << 10) && bytes % (1L << 10) == 0) {
            return (bytes >> 10) + "K";
        }
        return bytes + "B";
    }

    /** Parses a duration such as {@code 5s}; throws {@link IllegalArgumentException} with a one-sentence message. */
    public static Duration parseDuration(String text) {
        String t = text == null ? "" : text.strip();
        Matcher m = DURATION.matcher(t);
        if (!m.matches()) {
            throw new IllegalArgumentException("'" + text + "' is not a duration (write e.g. 500ms, 5s, 1m)");
        }
        String unit = m.group(2) == null ? "s" : m.group(2).toLowerCase(Locale.ROOT);
        double nanosPerUnit = switch (unit) {
            case "ns" -> 1;
            case "us", "µs" -> 1e3;
            case "ms" -> 1e6;
            case "s" -> 1e9;
            case "m", "min" -> 60e9;
            case "h" -> 3600e9;
            default -> throw new AssertionError(unit);
        };
        double nanos = Double.parseDouble(m.group(1)) * nanosPerUnit;
        if (nanos > 24 * 3600e9) {
            throw new IllegalArgumentException("'" + text + "' is longer than a day");
        }
        return Duration.ofNanos(Math.round(nanos));
    }

    /** Prints a duration compactly: 500ms, 5s, 1.5s, 2m. */
    public static String formatDuration(Duration d) {
        long nanos = d.toNanos();
        if (nanos % 60_000_000_000L == 0 && nanos > 0) {
            return nanos / 60_000_000_000L + "m";
        }
        if (nanos % 1_000_000_000L == 0) {
            return nanos / 1_000_000_000L + "s";
        }
        if (nanos >= 1_000_000_000L) {
            return String.format(Locale.ROOT, "%.3gs", nanos / 1e9);
        }
        if (nanos % 1_000_000L == 0) {
            return nanos / 1_000_000L + "ms";
        }
        if (nanos % 1_000L == 0) {
            return nanos / 1_000L + "us";
        }
        return nanos + "ns";
    }
}
