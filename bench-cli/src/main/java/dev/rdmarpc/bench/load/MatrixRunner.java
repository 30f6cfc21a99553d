package dev.rdmarpc.bench.load;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;

/** Runs every cell of a {@link MatrixPlan} against one stack's server, over connections it opens once. */
public final class MatrixRunner {

    /** Hears about cells starting, so that a progress line can say which one is running. */
    public interface CellListener {
        /** Cell {@code index} (0-based) of {@code total} starts; the returned listener hears its ticks. */
        ProgressListener cellStarting(String stack, int index, int total, CellSpec cell);

        /** The cell ended with these figures. */
        default void cellDone(CellResult result) {
        }
    }

    private MatrixRunner() {
    }

    /**
     * Connects {@code plan.connections()} times to {@code server}, runs every cell and closes the
     * connections. Results are in the plan's cell order.
     */
    public static List<CellResult> run(EchoStack stack, InetSocketAddress server, StackOptions options,
            MatrixPlan plan, CellListener listener) throws Exception {
        List<CellSpec> cells = plan.cells();
        int maxCallers = 1;
        for (CellSpec c : cells) {
            maxCallers = Math.max(maxCallers, c.callers());
        }
        int n = Math.min(plan.connections(), maxCallers);
        List<EchoConnection> connections = new ArrayList<>(n);
        try {
            for (int i = 0; i < n; i++) {
                connections.add(stack.connect(server, options));
            }
            List<CellResult> results = new ArrayList<>(cells.size());
            for (int i = 0; i < cells.size(); i++) {
                CellSpec cell = cells.get(i);
                ProgressListener progress = listener.cellStarting(stack.name(), i, cells.size(), cell);
                CellResult r = ClosedLoop.run(stack.name(), connections, cell, progress);
                listener.cellDone(r);
                results.add(r);
            }
            return results;
        } finally {
            for (int i = connections.size() - 1; i >= 0; i--) {
                connections.get(i).close();
            }
        }
    }
}
