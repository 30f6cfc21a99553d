package dev.rdmarpc.bench.report;

import dev.rdmarpc.bench.Units;
import dev.rdmarpc.bench.load.CellResult;
import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.FontMetrics;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.Stroke;
import java.awt.geom.Ellipse2D;
import java.awt.geom.Path2D;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.ToDoubleFunction;
import javax.imageio.ImageIO;

/**
 * Draws the run as a PNG with two panels side by side: throughput against concurrency and P99 latency
 * against concurrency, one coloured line per request size (for an open-loop run: against the target rate,
 * the run having one bound on calls in flight). Both axes are logarithmic (concurrency levels
 * are usually powers of two, figures span decades). A baseline, when present, is drawn dashed in the same
 * colour as our line for that size. A server-streaming run is drawn the same way against the number of
 * streams: Gb/s of payload, and the P99 of the time between consecutive messages of a stream. Rendering is
 * headless Java2D.
 */
public final class Chart {
    /** Okabe-Ito colours: distinguishable with the common colour-vision deficiencies. */
    private static final Color[] PALETTE = {
        new Color(0x0072B2), new Color(0xD55E00), new Color(0x009E73), new Color(0xCC79A7),
        new Color(0xE69F00), new Color(0x56B4E9), new Color(0x000000), new Color(0x999933),
    };
    private static final int WIDTH = 1600;
    private static final int HEIGHT = 760;
    private static final Color GRID = new Color(0xE4E4E4);
    private static final Color MINOR_GRID = new Color(0xF2F2F2);
    private static final Color AXIS = new Color(0x444444);

    private Chart() {
    }

    /** Writes the chart of {@code report} to {@code file} as PNG. */
    public static void writePng(Report report, Path file) throws IOException {
        System.setProperty("java.awt.headless", "true");
        BufferedImage image = render(report);
        Path parent = file.toAbsolutePath().getParent();
        if (parent != null) {
            Files.createDirectories(parent);
        }
        if (!ImageIO.write(image, "png", file.toFile())) {
            throw new IOException("no PNG writer in this JDK");
        }
    }

    static BufferedImage render(Report report) {
        BufferedImage image = new BufferedImage(WIDTH, HEIGHT, BufferedImage.TYPE_INT_RGB);
        Graphics2D g = image.createGraphics();
        try {
            g.setRenderingHint(RenderingHints.KEY_ANTIALIASING, RenderingHints.VALUE_ANTIALIAS_ON);
            g.setRenderingHint(RenderingHints.KEY_TEXT_ANTIALIASING, RenderingHints.VALUE_TEXT_ANTIALIAS_ON);
            g.setRenderingHint(RenderingHints.KEY_STROKE_CONTROL, RenderingHints.VALUE_STROKE_PURE);
            g.setColor(Color.WHITE);
            g.fillRect(0, 0, WIDTH, HEIGHT);

            RunInfo info = report.info();
            g.setColor(Color.BLACK);
            g.setFont(new Font(Font.SANS_SERIF, Font.BOLD, 24));
            boolean stream = report.stream();
            String title = info.stack() + (info.hasBaseline() ? " vs " + info.baseline() : "")
                    + (stream ? ": server streaming, " : ": echo calls, ") + info.target();
            g.drawString(title, 40, 42);
            g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 15));
            g.setColor(AXIS);
            boolean open = report.openLoop();
            g.drawString((stream ? "messages as fast as flow control allows, " : open
                    ? "open loop (latency from each call's due time), at most " + report.results().get(0).concurrency()
                    + " in flight, " : "closed loop, ") + info.connections() + " connection(s), " + info.ioThreads()
                    + " I/O thread(s) per side" + (open || stream ? "" : ", pipeline " + info.pipeline()) + ", warm-up "
                    + Units.formatDuration(info.warmup()) + " + " + Units.formatDuration(info.measure())
                    + " per point; " + info.environment(), 40, 68);

            List<Integer> sizes = distinct(report.results(), CellResult::requestBytes);
            java.util.function.ToIntFunction<CellResult> xKey = open ? r -> (int) r.targetQps() : CellResult::concurrency;
            List<Integer> concs = distinct(report.results(), xKey);

            int top = 110;
            int bottom = HEIGHT - 150;
            int panelWidth = (WIDTH - 80 - 60) / 2;
            panel(g, report, sizes, concs, xKey, 40 + 70, top, panelWidth - 70, bottom - top,
                    stream ? "Throughput, Gb/s (payload received)" : "Throughput, Gb/s (request bytes)", CellResult::gbps,
                    "higher is better", Chart::number);
            panel(g, report, sizes, concs, xKey, 40 + panelWidth + 60 + 70, top, panelWidth - 70, bottom - top,
                    stream ? "P99 gap between messages of a stream" : "P99 latency", CellResult::p99Us, "lower is better",
                    Chart::micros);
            legend(g, report, sizes, 40, HEIGHT - 80);
        } finally {
            g.dispose();
        }
        return image;
    }

    private static void panel(Graphics2D g, Report report, List<Integer> sizes, List<Integer> concs,
            java.util.function.ToIntFunction<CellResult> xKey, int x, int y,
            int w, int h, String title, ToDoubleFunction<CellResult> metric, String hint,
            java.util.function.DoubleFunction<String> label) {
        g.setFont(new Font(Font.SANS_SERIF, Font.BOLD, 18));
        g.setColor(Color.BLACK);
        g.drawString(title, x, y - 14);
        g.setFont(new Font(Font.SANS_SERIF, Font.ITALIC, 13));
        g.setColor(AXIS);
        FontMetrics fmHint = g.getFontMetrics();
        g.drawString(hint, x + w - fmHint.stringWidth(hint), y - 14);

        double lo = Double.MAX_VALUE;
        double hi = 0;
        for (CellResult r : all(report)) {
            double v = metric.applyAsDouble(r);
            if (Double.isFinite(v) && v > 0) {
                lo = Math.min(lo, v);
                hi = Math.max(hi, v);
            }
        }
        if (hi == 0) {
            lo = 1;
            hi = 10;
        }
        int decadeLo = (int) Math.floor(Math.log10(lo));
        int decadeHi = (int) Math.ceil(Math.log10(hi));
        if (decadeHi == decadeLo) {
            decadeHi++;
        }
        final int dLo = decadeLo;
        final int dHi = decadeHi;
        double cLo = Math.log(concs.get(0)) / Math.log(2);
        double cHi = Math.log(concs.get(concs.size() - 1)) / Math.log(2);
        double pad = concs.size() == 1 ? 1 : (cHi - cLo) * 0.05;
        final double xLo = cLo - pad;
        final double xHi = cHi + pad;
        java.util.function.DoubleUnaryOperator px = c -> x + (Math.log(c) / Math.log(2) - xLo) / (xHi - xLo) * w;
        java.util.function.DoubleUnaryOperator py = v -> y + h - (Math.log10(v) - dLo) / (dHi - dLo) * h;

        // Grid: decades strong, 2 and 5 light.
        g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 14));
        FontMetrics fm = g.getFontMetrics();
        for (int d = decadeLo; d <= decadeHi; d++) {
            for (int m : new int[] {1, 2, 5}) {
                double v = m * Math.pow(10, d);
                if (Math.log10(v) > decadeHi + 1e-9) {
                    continue;
                }
                int yy = (int) Math.round(py.applyAsDouble(v));
                g.setColor(m == 1 ? GRID : MINOR_GRID);
                g.drawLine(x, yy, x + w, yy);
                if (m == 1 || decadeHi - decadeLo <= 2) {
                    String text = label.apply(v);
                    g.setColor(m == 1 ? AXIS : new Color(0x888888));
                    g.drawString(text, x - 8 - fm.stringWidth(text), yy + fm.getAscent() / 2 - 2);
                }
            }
        }
        for (int c : concs) {
            int xx = (int) Math.round(px.applyAsDouble(c));
            g.setColor(GRID);
            g.drawLine(xx, y, xx, y + h);
            g.setColor(AXIS);
            String tick = report.openLoop() ? number(c) : Integer.toString(c);
            g.drawString(tick, xx - fm.stringWidth(tick) / 2, y + h + 20);
        }
        g.setColor(AXIS);
        g.setStroke(new BasicStroke(1.2f));
        g.drawRect(x, y, w, h);
        String xlabel = report.stream() ? "streams" : report.openLoop() ? "target rate (calls/s)"
                : "concurrency (calls in flight)";
        g.drawString(xlabel, x + (w - fm.stringWidth(xlabel)) / 2, y + h + 42);

        for (int pass = 0; pass < 2; pass++) {
            List<CellResult> cells = pass == 0 ? report.baseline() : report.results();
            if (cells.isEmpty()) {
                continue;
            }
            boolean dashed = pass == 0;
            for (int si = 0; si < sizes.size(); si++) {
                int size = sizes.get(si);
                Color color = PALETTE[si % PALETTE.length];
                Path2D.Double path = new Path2D.Double();
                List<double[]> points = new ArrayList<>();
                for (CellResult r : cells) {
                    double v = metric.applyAsDouble(r);
                    if (r.requestBytes() == size && Double.isFinite(v) && v > 0) {
                        points.add(new double[] {px.applyAsDouble(xKey.applyAsInt(r)), py.applyAsDouble(v)});
                    }
                }
                for (int i = 0; i < points.size(); i++) {
                    if (i == 0) {
                        path.moveTo(points.get(i)[0], points.get(i)[1]);
                    } else {
                        path.lineTo(points.get(i)[0], points.get(i)[1]);
                    }
                }
                g.setColor(color);
                g.setStroke(stroke(dashed));
                g.draw(path);
                for (double[] p : points) {
                    double r = dashed ? 4 : 5;
                    Ellipse2D.Double dot = new Ellipse2D.Double(p[0] - r, p[1] - r, 2 * r, 2 * r);
                    if (dashed) {
                        g.setColor(Color.WHITE);
                        g.fill(dot);
                        g.setColor(color);
                        g.setStroke(new BasicStroke(2f));
                        g.draw(dot);
                    } else {
                        g.fill(dot);
                    }
                }
            }
        }
        g.setStroke(new BasicStroke(1f));
    }

    private static void legend(Graphics2D g, Report report, List<Integer> sizes, int x, int y) {
        g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 16));
        FontMetrics fm = g.getFontMetrics();
        g.setColor(Color.BLACK);
        String lead = report.stream() ? "message size:" : "request size:";
        g.drawString(lead, x, y);
        int cx = x + fm.stringWidth(lead) + 20;
        for (int si = 0; si < sizes.size(); si++) {
            Color color = PALETTE[si % PALETTE.length];
            g.setColor(color);
            g.setStroke(new BasicStroke(3.5f));
            g.drawLine(cx, y - 5, cx + 34, y - 5);
            g.fill(new Ellipse2D.Double(cx + 12, y - 10, 10, 10));
            g.setColor(Color.BLACK);
            String label = Units.formatSize(sizes.get(si));
            g.drawString(label, cx + 42, y);
            cx += 42 + fm.stringWidth(label) + 28;
        }
        RunInfo info = report.info();
        int y2 = y + 32;
        g.setColor(Color.BLACK);
        g.setStroke(stroke(false));
        g.drawLine(x, y2 - 5, x + 34, y2 - 5);
        String ours = info.stack();
        g.drawString(ours, x + 42, y2);
        int nx = x + 42 + fm.stringWidth(ours) + 30;
        if (info.hasBaseline()) {
            g.setStroke(stroke(true));
            g.drawLine(nx, y2 - 5, nx + 34, y2 - 5);
            g.drawString(info.baseline() + " (baseline)", nx + 42, y2);
            nx += 42 + fm.stringWidth(info.baseline() + " (baseline)") + 30;
        }
        TreeMap<Integer, Integer> capped = new TreeMap<>();
        for (CellResult r : report.results()) {
            if (r.inFlight() < r.concurrency() * info.pipeline()) {
                capped.putIfAbsent(r.requestBytes(), r.inFlight());
            }
        }
        if (!capped.isEmpty()) {
            StringBuilder sb = new StringBuilder("capped by --max-in-flight " + Units.formatSize(info.maxInFlightBytes()) + ": ");
            Iterator<java.util.Map.Entry<Integer, Integer>> it = capped.entrySet().iterator();
            while (it.hasNext()) {
                var e = it.next();
                sb.append(Units.formatSize(e.getKey())).append(" at most ").append(e.getValue()).append(" in flight");
                if (it.hasNext()) {
                    sb.append(", ");
                }
            }
            g.setColor(AXIS);
            g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 14));
            g.drawString(sb.toString(), nx, y2);
        }
    }

    private static Stroke stroke(boolean dashed) {
        return dashed
                ? new BasicStroke(2.5f, BasicStroke.CAP_BUTT, BasicStroke.JOIN_ROUND, 10f, new float[] {9f, 6f}, 0f)
                : new BasicStroke(3.5f, BasicStroke.CAP_ROUND, BasicStroke.JOIN_ROUND);
    }

    private static List<CellResult> all(Report report) {
        List<CellResult> all = new ArrayList<>(report.results());
        all.addAll(report.baseline());
        return all;
    }

    private static List<Integer> distinct(List<CellResult> cells, java.util.function.ToIntFunction<CellResult> key) {
        TreeSet<Integer> set = new TreeSet<>();
        for (CellResult r : cells) {
            set.add(key.applyAsInt(r));
        }
        return new ArrayList<>(set);
    }

    /** Latency axis labels: 50 \u00b5s, 1 ms, 2 s. */
    private static String micros(double us) {
        if (us >= 1e6) {
            return trim(us / 1e6) + " s";
        }
        if (us >= 1e3) {
            return trim(us / 1e3) + " ms";
        }
        return trim(us) + " \u00b5s";
    }

    private static String number(double v) {
        if (v >= 1e6) {
            return trim(v / 1e6) + "M";
        }
        if (v >= 1e3) {
            return trim(v / 1e3) + "k";
        }
        return trim(v);
    }

    private static String trim(double v) {
        if (v == Math.rint(v)) {
            return Long.toString((long) v);
        }
        String s = String.format(Locale.ROOT, "%.4f", v).replaceAll("0+$", "");
        return s.endsWith(".") ? s.substring(0, s.length() - 1) : s;
    }
}
