package dev.rdmarpc.bench.load;

/** Hears, a few times a second, how far the current cell has got. Called on the thread driving the run. */
@FunctionalInterface
public interface ProgressListener {

    /** The phases of a cell. */
    enum Phase { WARMUP, MEASURE }

    /**
     * @param phase          warm-up or measurement
     * @param elapsedNanos   time spent in this phase
     * @param phaseNanos     length of this phase
     * @param completedCalls calls completed in this cell so far, warm-up included
     */
    void onTick(Phase phase, long elapsedNanos, long phaseNanos, long completedCalls);

    /** A listener that ignores everything. */
    ProgressListener NONE = (phase, elapsed, length, calls) -> { };
}
