package dev.rdmarpc.bench;

import dev.rdmarpc.bench.load.CellResult;
import dev.rdmarpc.bench.load.CellSpec;
import dev.rdmarpc.bench.load.MatrixRunner;
import dev.rdmarpc.bench.load.ProgressListener;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.Locale;

/**
 * The progress line on stderr. On a terminal one line is rewritten in place a few times a second;
 * elsewhere (when forced with {@code --progress}) one line is printed per finished cell.
 */
final class ProgressLine implements MatrixRunner.CellListener {
    private final PrintWriter err;
    private final boolean terminal;
    private final long cellNanos;
    private int index;
    private int total;
    private String label = "";
    /** What the rate counts: "calls/s", or "msgs/s" for a stream cell. */
    private String unit = "calls/s";
    private long lastCalls;
    private long lastNanos;
    private double rate;
    private int width;

    ProgressLine(PrintWriter err, boolean terminal, Duration warmup, Duration measure) {
        this.err = err;
        this.terminal = terminal;
        this.cellNanos = warmup.plus(measure).toNanos();
    }

    @Override
    public ProgressListener cellStarting(String stack, int index, int total, CellSpec cell) {
        this.index = index;
        this.total = total;
        this.label = stack + " " + Units.formatSize(cell.requestBytes())
                + (cell.openLoop() ? " at " + cell.targetQps() + "/s" : "") + " x" + cell.concurrency()
                + (cell.stream() ? " streams" : "");
        this.unit = cell.stream() ? "msgs/s" : "calls/s";
        this.lastCalls = 0;
        this.lastNanos = System.nanoTime();
        this.rate = 0;
        if (!terminal) {
            return ProgressListener.NONE;
        }
        return this::tick;
    }

    private void tick(ProgressListener.Phase phase, long elapsed, long length, long calls) {
        long now = System.nanoTime();
        if (now - lastNanos >= 200_000_000L) {
            rate = (calls - lastCalls) * 1e9 / (now - lastNanos);
            lastCalls = calls;
            lastNanos = now;
        }
        String line;
        if (index < 0) {
            line = String.format(Locale.ROOT, "%s  %.1f/%.1fs  %s %s", label, elapsed / 1e9, length / 1e9, compact(rate), unit);
        } else {
            long remaining = (long) (total - index - 1) * cellNanos + (phase == ProgressListener.Phase.WARMUP
                    ? length - elapsed + (cellNanos - length) : length - elapsed);
            line = String.format(Locale.ROOT, "[%d/%d] %s  %s %.1f/%.1fs  %s %s  ~%ds left",
                    index + 1, total, label, phase == ProgressListener.Phase.WARMUP ? "warm-up" : "measure",
                    elapsed / 1e9, length / 1e9, compact(rate), unit, Math.max(0, remaining / 1_000_000_000L));
        }
        int pad = Math.max(0, width - line.length());
        width = line.length();
        err.print("\r" + line + " ".repeat(pad));
        err.flush();
    }

    @Override
    public ProgressListener initialWarmup(String stack, CellSpec cell) {
        this.label = stack + " initial warm-up (" + Units.formatSize(cell.requestBytes()) + " x" + cell.concurrency()
                + (cell.stream() ? " streams" : "") + ")";
        this.unit = cell.stream() ? "msgs/s" : "calls/s";
        this.index = -1;
        this.lastCalls = 0;
        this.lastNanos = System.nanoTime();
        this.rate = 0;
        if (!terminal) {
            return ProgressListener.NONE;
        }
        return this::tick;
    }

    @Override
    public void cellDone(CellResult r) {
        if (!terminal) {
            err.println(String.format(Locale.ROOT, "[%d/%d] %s  %s %s, p99 %s%.0f us", index + 1, total, label,
                    compact(r.qps()), unit, unit.equals("msgs/s") ? "gap " : "", r.p99Us()));
            err.flush();
        }
    }

    /** Clears the line when the run is over. */
    void finish() {
        if (terminal && width > 0) {
            err.print("\r" + " ".repeat(width) + "\r");
            err.flush();
        }
    }

    private static String compact(double v) {
        if (v >= 1e6) {
            return String.format(Locale.ROOT, "%.2fM", v / 1e6);
        }
        if (v >= 1e3) {
            return String.format(Locale.ROOT, "%.1fK", v / 1e3);
        }
        return String.format(Locale.ROOT, "%.0f", v);
    }
}
