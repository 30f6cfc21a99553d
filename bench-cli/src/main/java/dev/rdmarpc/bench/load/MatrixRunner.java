package dev.rdmarpc.bench.load;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;

/**
 * Runs every cell of a {@link MatrixPlan} against one or more stacks. With several stacks the cells are
 * interleaved (cell 1 of each stack, then cell 2 of each, ...), and with {@code repeat} > 1 the whole
 * matrix runs that many times in rounds, so that slow drifts of a shared machine touch every stack and
 * every run alike; each cell then reports medians over its runs. Connections are opened once per stack
 * and reused by every cell (a stream cell opens its streams on them and ends them before the next cell).
 */
public final class MatrixRunner {

    /**
     * A stack's server to run the matrix against.
     *
     * @param stack   the stack (its client side is used)
     * @param server  the server's address
     * @param options how the stack sets itself up
     */
    public record Target(EchoStack stack, InetSocketAddress server, StackOptions options) {
    }

    /** Hears about cells starting and ending, so that a progress line can say which one is running. */
    public interface CellListener {
        /**
         * Cell run {@code index} (0-based) of {@code total} starts; the returned listener hears its ticks.
         *
         * @return the progress listener for this cell, never null
         */
        ProgressListener cellStarting(String stack, int index, int total, CellSpec cell);

        /** The cell ended with these figures. */
        default void cellDone(CellResult result) {
        }

        /** The unmeasured initial warm-up of a stack starts; the returned listener hears its ticks. */
        default ProgressListener initialWarmup(String stack, CellSpec cell) {
            return ProgressListener.NONE;
        }

        /** A listener that ignores everything. */
        CellListener NONE = (stack, index, total, cell) -> ProgressListener.NONE;
    }

    private MatrixRunner() {
    }

    /** Runs one cell with the driver of its kind: a stream cell, an open loop or a closed loop. */
    static CellResult runCell(String stack, List<EchoConnection> connections, CellSpec cell, ProgressListener progress,
            CpuMeter cpu) throws InterruptedException {
        if (cell.stream()) {
            return StreamLoop.run(stack, connections, cell, progress, cpu);
        }
        return cell.openLoop() ? OpenLoop.run(stack, connections, cell, progress)
                : ClosedLoop.run(stack, connections, cell, progress, cpu);
    }

    /** {@link #run(List, MatrixPlan, CellListener, CpuMeter)} measuring this process's CPU time only. */
    public static List<List<CellResult>> run(List<Target> targets, MatrixPlan plan, CellListener listener)
            throws Exception {
        return run(targets, plan, listener, CpuMeter.SELF);
    }

    /**
     * Connects {@code plan.connections()} times to each target (fewer when no cell has that many callers),
     * runs every cell on every target and closes the connections. Closed-loop and stream cells report the
     * CPU time per call that {@code cpu} measures over their measured interval.
     *
     * @return per target, in the order given, its results in the plan's cell order
     * @throws Exception from a stack's {@code connect}, or {@link IllegalStateException} from a cell
     */
    public static List<List<CellResult>> run(List<Target> targets, MatrixPlan plan, CellListener listener,
            CpuMeter cpu) throws Exception {
        List<CellSpec> cells = plan.cells();
        int maxCallers = 1;
        for (CellSpec c : cells) {
            maxCallers = Math.max(maxCallers, c.callers());
        }
        int n = Math.min(plan.connections(), maxCallers);
        List<List<EchoConnection>> connections = new ArrayList<>();
        try {
            for (Target t : targets) {
                List<EchoConnection> list = new ArrayList<>(n);
                connections.add(list);
                for (int i = 0; i < n; i++) {
                    list.add(t.stack().connect(t.server(), t.options()));
                }
            }
            if (!plan.initialWarmup().isZero()) {
                CellSpec warm = plan.initialWarmupCell();
                for (int t = 0; t < targets.size(); t++) {
                    String name = targets.get(t).stack().name();
                    CellResult r = runCell(name, connections.get(t), warm, listener.initialWarmup(name, warm), cpu);
                    if (r.errors() > 0) {
                        throw new IllegalStateException(name + " failed during the initial warm-up: " + r.firstError());
                    }
                }
            }
            int total = cells.size() * targets.size() * plan.repeat();
            int index = 0;
            // runs.get(t).get(c): the runs of cell c on target t, one per round.
            List<List<List<CellResult>>> runs = new ArrayList<>();
            for (int t = 0; t < targets.size(); t++) {
                List<List<CellResult>> perCell = new ArrayList<>();
                for (int c = 0; c < cells.size(); c++) {
                    perCell.add(new ArrayList<>(plan.repeat()));
                }
                runs.add(perCell);
            }
            for (int round = 0; round < plan.repeat(); round++) {
                for (int c = 0; c < cells.size(); c++) {
                    CellSpec cell = cells.get(c);
                    for (int t = 0; t < targets.size(); t++) {
                        String name = targets.get(t).stack().name();
                        ProgressListener progress = listener.cellStarting(name, index++, total, cell);
                        CellResult r = runCell(name, connections.get(t), cell, progress, cpu);
                        listener.cellDone(r);
                        runs.get(t).get(c).add(r);
                    }
                }
            }
            List<List<CellResult>> results = new ArrayList<>();
            for (int t = 0; t < targets.size(); t++) {
                List<CellResult> perTarget = new ArrayList<>(cells.size());
                for (int c = 0; c < cells.size(); c++) {
                    perTarget.add(CellResult.median(runs.get(t).get(c)));
                }
                results.add(perTarget);
            }
            return results;
        } finally {
            for (int t = connections.size() - 1; t >= 0; t--) {
                List<EchoConnection> list = connections.get(t);
                for (int i = list.size() - 1; i >= 0; i--) {
                    list.get(i).close();
                }
            }
        }
    }
}
