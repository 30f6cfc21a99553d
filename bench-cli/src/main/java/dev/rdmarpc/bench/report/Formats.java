package dev.rdmarpc.bench.report;

import java.util.Locale;

/** Number formatting shared by the text formats. Everything is printed with {@link Locale#ROOT}. */
final class Formats {
    private Formats() {
    }

    /** Gb/s: two decimals, three below 0.1 so that small-message rows do not all read 0.00. */
    static String gbps(double v) {
        if (!Double.isFinite(v)) {
            return "-";
        }
        return String.format(Locale.ROOT, v < 0.1 ? "%.3f" : "%.2f", v);
    }

    /** Microseconds: whole numbers from 100 up, one decimal below. */
    static String micros(double v) {
        if (!Double.isFinite(v)) {
            return "-";
        }
        return v >= 100 ? String.format(Locale.ROOT, "%.0f", v) : String.format(Locale.ROOT, "%.1f", v);
    }

    /** CPU microseconds per call: two decimals below 10, one below 100, none above; "-" when not measured. */
    static String cpu(double v) {
        if (!Double.isFinite(v)) {
            return "-";
        }
        return String.format(Locale.ROOT, v >= 100 ? "%.0f" : v >= 10 ? "%.1f" : "%.2f", v);
    }

    /** Calls per second as a whole number. */
    static String qps(double v) {
        return Double.isFinite(v) ? String.format(Locale.ROOT, "%.0f", v) : "-";
    }

    /** A fraction such as a balance: two decimals. */
    static String ratio(double v) {
        return Double.isFinite(v) ? String.format(Locale.ROOT, "%.2f", v) : "-";
    }

    /** A speed-up factor such as {@code 2.31x}. */
    static String factor(double v) {
        return Double.isFinite(v) ? String.format(Locale.ROOT, "%.2fx", v) : "-";
    }

    /** A plain number for CSV and JSON: up to 6 significant digits, no exponent for usual magnitudes. */
    static String plain(double v) {
        if (!Double.isFinite(v)) {
            return "";
        }
        if (v == Math.rint(v) && Math.abs(v) < 1e15) {
            return Long.toString((long) v);
        }
        String s = String.format(Locale.ROOT, "%.6g", v);
        if (s.contains("e") || s.contains("E")) {
            return s;
        }
        if (s.contains(".")) {
            s = s.replaceAll("0+$", "");
            if (s.endsWith(".")) {
                s = s.substring(0, s.length() - 1);
            }
        }
        return s;
    }
}
