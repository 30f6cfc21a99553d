package dev.rdmarpc.bench;

import dev.rdmarpc.bench.report.Chart;
import dev.rdmarpc.bench.report.CsvFormat;
import dev.rdmarpc.bench.report.JsonFormat;
import dev.rdmarpc.bench.report.Report;
import dev.rdmarpc.bench.report.TableFormat;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.Locale;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;

/** How results are printed and drawn. */
final class OutputOptions {
    /** Text formats of the results. */
    enum Format { table, csv, json }

    @Option(names = "--format", defaultValue = "table", paramLabel = "table|csv|json",
            description = "Output format on stdout (default: ${DEFAULT-VALUE}).")
    Format format;

    @Option(names = "--plot", paramLabel = "FILE.png",
            description = "Also draw throughput and P99 against concurrency (against the target rate with --rate), one line "
                    + "per size, into this PNG file.")
    Path plot;

    @Option(names = "--progress", negatable = true,
            description = "Progress line on stderr (default: only when stderr is a terminal).")
    Boolean progress;

    void validate(CommandSpec spec) {
        if (plot != null && !plot.getFileName().toString().toLowerCase(Locale.ROOT).endsWith(".png")) {
            throw new ParameterException(spec.commandLine(), "--plot writes PNG: give a file name ending in .png");
        }
    }

    boolean progressWanted() {
        return progress != null ? progress : Terminal.stderrIsTerminal();
    }

    /** Prints the report in the chosen format and draws the chart if asked. */
    void emit(Report report, PrintWriter out, PrintWriter err) {
        switch (format) {
            case table -> TableFormat.write(report, out);
            case csv -> CsvFormat.write(report, out);
            case json -> JsonFormat.write(report, out);
        }
        if (plot != null) {
            try {
                Chart.writePng(report, plot);
                err.println("chart written to " + plot);
                err.flush();
            } catch (IOException | RuntimeException e) {
                throw new BenchException("Cannot write the chart to " + plot + ": " + e.getMessage(), e);
            }
        }
    }
}
