package dev.rdmarpc.bench.report;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.awt.image.BufferedImage;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import javax.imageio.ImageIO;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ChartTest {
    @TempDir
    Path dir;

    @Test
    void writesAReadablePngWithOneColourPerSize() throws Exception {
        Path file = dir.resolve("sub/chart.png");
        Report report = new Report(ReportFixtures.info(true), ReportFixtures.ours(), ReportFixtures.theirs());
        Chart.writePng(report, file);
        assertTrue(Files.size(file) > 10_000, "size " + Files.size(file));
        BufferedImage image = ImageIO.read(file.toFile());
        assertEquals(1600, image.getWidth());
        assertEquals(760, image.getHeight());
        // The two sizes are drawn in the first two palette colours.
        Set<Integer> colours = new HashSet<>();
        for (int y = 0; y < image.getHeight(); y++) {
            for (int x = 0; x < image.getWidth(); x++) {
                colours.add(image.getRGB(x, y) & 0xffffff);
            }
        }
        assertTrue(colours.contains(0x0072B2), "blue line for 128B");
        assertTrue(colours.contains(0xD55E00), "vermillion line for 8M");
    }

    @Test
    void openLoopRunIsDrawnAgainstTheTargetRate() throws Exception {
        Path file = dir.resolve("open.png");
        List<dev.rdmarpc.bench.load.CellResult> cells = List.of(
                new dev.rdmarpc.bench.load.CellResult("rdmarpc-tcp", 128, 128, 64, 64, 4, 1, 2000, 0, 2.0, 1000, 95,
                        120, 180, 410, 900, null, 1000, 0),
                new dev.rdmarpc.bench.load.CellResult("rdmarpc-tcp", 128, 128, 64, 64, 4, 1, 20000, 0, 2.0, 10000, 120,
                        200, 900, 1500, 2000, null, 10000, 0));
        Chart.writePng(new Report(ReportFixtures.info(false), cells, List.of()), file);
        BufferedImage image = ImageIO.read(file.toFile());
        Set<Integer> colours = new HashSet<>();
        for (int y = 0; y < image.getHeight(); y++) {
            for (int x = 0; x < image.getWidth(); x++) {
                colours.add(image.getRGB(x, y) & 0xffffff);
            }
        }
        assertTrue(colours.contains(0x0072B2), "a line for 128B across the two rates");
    }

    @Test
    void streamRunIsDrawnAgainstTheNumberOfStreams() throws Exception {
        Path file = dir.resolve("streams.png");
        Chart.writePng(new Report(ReportFixtures.streamInfo(true), ReportFixtures.oursStreams(),
                ReportFixtures.theirsStreams()), file);
        BufferedImage image = ImageIO.read(file.toFile());
        Set<Integer> colours = new HashSet<>();
        for (int y = 0; y < image.getHeight(); y++) {
            for (int x = 0; x < image.getWidth(); x++) {
                colours.add(image.getRGB(x, y) & 0xffffff);
            }
        }
        assertTrue(colours.contains(0x0072B2), "a line for 128B over 1 and 16 streams");
        assertTrue(colours.contains(0xD55E00), "a point for 32K");
    }

    @Test
    void singlePointMatrixStillDraws() throws Exception {
        Path file = dir.resolve("one.png");
        Report report = new Report(ReportFixtures.info(false), List.of(ReportFixtures.ours().get(0)), List.of());
        Chart.writePng(report, file);
        assertTrue(Files.size(file) > 5_000);
    }
}
