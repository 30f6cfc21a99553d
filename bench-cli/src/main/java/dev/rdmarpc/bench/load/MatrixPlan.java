package dev.rdmarpc.bench.load;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * The whole matrix: every request size at every concurrency level, in that order (size-major, as in
 * coro_rpc's table), with the settings shared by all cells. With open-loop {@code rates}, every size at
 * every rate at every concurrency level (the bound on calls in flight), in that order. With the
 * {@link Workload#stream} workload, every message size at every number of concurrent streams.
 *
 * @param sizes            request sizes in bytes
 * @param concurrencies    concurrency levels (closed-loop callers)
 * @param responseBytes    response size in bytes, or -1 to answer with as many bytes as the request
 * @param pipeline         calls each caller sends back to back (1: one call at a time)
 * @param connections      connections the callers are spread over (at most one per caller is used)
 * @param warmup           warm-up per cell
 * @param measure          measured interval per cell
 * @param maxInFlightBytes cap on request plus response bytes in flight; lowers the number of callers of
 *                         a cell that would exceed it (8M x 256 callers would otherwise hold 4 GiB)
 * @param initialWarmup    unmeasured load on each stack before its first cell, so that the first cells
 *                         are not measured while the JIT is still compiling the call path
 * @param repeat           how many times the whole matrix runs; each cell then reports medians
 * @param rates            open-loop target rates in calls per second, or empty for a closed loop
 * @param workload         echo calls, or server streaming (then {@code sizes} are message sizes,
 *                         {@code concurrencies} numbers of streams, and there is no response size, pipeline,
 *                         rate or cap on bytes in flight: a stream's flow-control window bounds those)
 */
public record MatrixPlan(List<Integer> sizes, List<Integer> concurrencies, int responseBytes, int pipeline,
        int connections, Duration warmup, Duration measure, long maxInFlightBytes, Duration initialWarmup,
        int repeat, List<Long> rates, Workload workload) {

    public MatrixPlan {
        sizes = List.copyOf(sizes);
        concurrencies = List.copyOf(concurrencies);
        rates = List.copyOf(rates);
        java.util.Objects.requireNonNull(workload, "workload");
        if (!rates.isEmpty() && pipeline != 1) {
            throw new IllegalArgumentException("an open loop has no pipeline");
        }
        if (workload == Workload.stream && (!rates.isEmpty() || pipeline != 1 || responseBytes >= 0)) {
            throw new IllegalArgumentException("a streaming plan has no rate, pipeline or response size");
        }
        if (sizes.isEmpty() || concurrencies.isEmpty()) {
            throw new IllegalArgumentException("need at least one size and one concurrency");
        }
        if (repeat < 1) {
            throw new IllegalArgumentException("repeat must be at least 1");
        }
    }

    /** An echo plan, closed or open loop. */
    public MatrixPlan(List<Integer> sizes, List<Integer> concurrencies, int responseBytes, int pipeline,
            int connections, Duration warmup, Duration measure, long maxInFlightBytes, Duration initialWarmup,
            int repeat, List<Long> rates) {
        this(sizes, concurrencies, responseBytes, pipeline, connections, warmup, measure, maxInFlightBytes,
                initialWarmup, repeat, rates, Workload.echo);
    }

    /** A closed-loop plan. */
    public MatrixPlan(List<Integer> sizes, List<Integer> concurrencies, int responseBytes, int pipeline,
            int connections, Duration warmup, Duration measure, long maxInFlightBytes, Duration initialWarmup,
            int repeat) {
        this(sizes, concurrencies, responseBytes, pipeline, connections, warmup, measure, maxInFlightBytes,
                initialWarmup, repeat, List.of());
    }

    /** Whether the cells run an open loop at {@link #rates}. */
    public boolean openLoop() {
        return !rates.isEmpty();
    }

    /** A closed-loop plan run once, without an initial warm-up. */
    public MatrixPlan(List<Integer> sizes, List<Integer> concurrencies, int responseBytes, int pipeline,
            int connections, Duration warmup, Duration measure, long maxInFlightBytes) {
        this(sizes, concurrencies, responseBytes, pipeline, connections, warmup, measure, maxInFlightBytes, Duration.ZERO, 1);
    }

    /** Whether the cells are server-streaming ones. */
    public boolean stream() {
        return workload == Workload.stream;
    }

    /**
     * The unmeasured cell run before the first: the first size at the largest concurrency (capped as any
     * cell), for {@link #initialWarmup}; a closed loop even when the plan's cells are open, as it only
     * has to get the call path compiled; of a streaming plan, a stream cell.
     */
    public CellSpec initialWarmupCell() {
        List<CellSpec> first = new MatrixPlan(List.of(sizes.get(0)), List.of(concurrencies.stream()
                .max(Integer::compare).orElseThrow()), responseBytes, pipeline, connections, initialWarmup,
                Duration.ZERO, maxInFlightBytes, Duration.ZERO, 1, List.of(), workload).cells();
        return first.get(0);
    }

    /** The cells in run order. */
    public List<CellSpec> cells() {
        List<CellSpec> cells = new ArrayList<>(sizes.size() * concurrencies.size() * Math.max(1, rates.size()));
        if (stream()) {
            for (int size : sizes) {
                for (int streams : concurrencies) {
                    cells.add(CellSpec.stream(size, streams, warmup, measure));
                }
            }
            return cells;
        }
        for (int size : sizes) {
            int response = responseBytes < 0 ? size : responseBytes;
            long perCaller = (long) pipeline * ((long) size + response);
            long affordable = Math.max(1, maxInFlightBytes / Math.max(1, perCaller));
            for (long rate : rates.isEmpty() ? List.of(0L) : rates) {
                for (int c : concurrencies) {
                    int callers = (int) Math.min(c, affordable);
                    cells.add(new CellSpec(size, response, c, callers, pipeline, warmup, measure, rate));
                }
            }
        }
        return cells;
    }

    /** Largest request or response of any cell. */
    public int largestMessage() {
        int max = Math.max(responseBytes, 0);
        for (int s : sizes) {
            max = Math.max(max, s);
        }
        return max;
    }

    /** Wall time of the cells of one stack, all runs and the initial warm-up included, set-up and draining not. */
    public Duration estimatedTime() {
        return warmup.plus(measure).multipliedBy((long) sizes.size() * concurrencies.size() * Math.max(1, rates.size())
                * repeat).plus(initialWarmup);
    }
}
