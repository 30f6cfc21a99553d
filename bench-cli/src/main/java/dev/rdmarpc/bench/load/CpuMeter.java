package dev.rdmarpc.bench.load;

import java.lang.management.ManagementFactory;
import java.time.Duration;

/**
 * The CPU time (user + system, every thread) of the process the bench runs in and, where the server
 * runs as another process on the same host, of that process: a cell's figures divided by its calls are
 * its CPU time per call ({@link CellResult#cpuUsPerCall}, {@link CellResult#serverCpuUsPerCall}).
 *
 * <p>The whole process is counted: the I/O threads, the callers, the JIT compilers, the garbage
 * collector, and any other stack the same JVM hosts while it idles (a baseline's threads run in the
 * bench's JVM, so their time is counted the same way). In {@code local} mode client and server share
 * one process, so its figure is the cost of both sides of a call. This process's time comes from the
 * JVM ({@code OperatingSystemMXBean.getProcessCpuTime}, nanoseconds); the server's from
 * {@link ProcessHandle.Info#totalCpuDuration} (on Linux {@code /proc/PID/stat}, in clock ticks of
 * 10 ms: over a cell of seconds, under one percent).
 */
public final class CpuMeter {
    /** This process only. */
    public static final CpuMeter SELF = new CpuMeter(-1);

    private final long serverPid;

    private CpuMeter(long serverPid) {
        this.serverPid = serverPid;
    }

    /**
     * @param serverPid the server's process id on this host
     * @return a meter of this process and of the server's
     * @throws IllegalArgumentException when no process {@code serverPid} is visible, or its CPU time is not
     */
    public static CpuMeter withServer(long serverPid) {
        CpuMeter m = new CpuMeter(serverPid);
        if (m.serverNanos() < 0) {
            throw new IllegalArgumentException("no CPU time readable for server process " + serverPid
                    + " (it must run on this host, as the same user)");
        }
        return m;
    }

    /** @return whether the server's CPU time is measured too */
    public boolean measuresServer() {
        return serverPid >= 0;
    }

    /** CPU time used so far, nanoseconds; -1 where unknown. */
    record Reading(long self, long server) {
    }

    Reading read() {
        return new Reading(selfNanos(), serverNanos());
    }

    /**
     * @return microseconds of CPU per call between two readings: this process's and the server's (NaN
     *         where unknown or no call completed)
     */
    static double[] perCallUs(Reading before, Reading after, long calls) {
        return new double[]{perCall(before.self, after.self, calls), perCall(before.server, after.server, calls)};
    }

    private static double perCall(long before, long after, long calls) {
        return before < 0 || after < 0 || calls <= 0 ? Double.NaN : (after - before) / 1e3 / calls;
    }

    private static long selfNanos() {
        if (ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.OperatingSystemMXBean os) {
            return os.getProcessCpuTime();
        }
        return ProcessHandle.current().info().totalCpuDuration().map(Duration::toNanos).orElse(-1L);
    }

    private long serverNanos() {
        if (serverPid < 0) {
            return -1;
        }
        return ProcessHandle.of(serverPid).flatMap(h -> h.info().totalCpuDuration()).map(Duration::toNanos).orElse(-1L);
    }
}
