package dev.rdmarpc.rpc.transport;

import java.time.Duration;
import java.util.Locale;
import java.util.Objects;

/**
 * What an I/O thread does when it finds nothing to do: the one setting that both transports share
 * ({@code TcpConfig.loop().idleStrategy}, {@code RdmaConfig.loop().idleStrategy}).
 *
 * <ul>
 *   <li>{@link #event()}: block at once, in the selector (TCP) or on the completion
 *       channel (RDMA). No CPU while idle; every burst after a pause pays a thread wake-up (a few
 *       microseconds on bare metal, tens on a virtual machine).
 *   <li>{@link #busyPoll()}: never block; poll again at once ({@link Thread#onSpinWait} between
 *       polls). Lowest latency; each I/O thread takes a whole core all the time.
 *   <li>{@link #backOff(Duration)}: poll for {@code spin} after the last event, giving the core to
 *       any other runnable thread between polls ({@link Thread#yield}), then block as {@link #event()}
 *       does. Back-to-back bursts find the thread awake; an idle thread costs nothing. Where client
 *       and server share the cores (one process on a small machine) spinning takes CPU from the
 *       peer and can lower throughput: measure before choosing it.
 *   <li>{@link #adaptive(Duration)} (the default of both transports): poll while the next event is
 *       likely to come soon, judged from the idle stretches the thread has seen, then block. The
 *       thread learns apart how long it waits with calls in flight (about a round trip) and with
 *       none (until a caller sends), spins for 1.5 x the longest recent stretch of that kind that
 *       ended within {@code maxSpin}, never longer than {@code maxSpin}, and not at all for a kind
 *       where most recent stretches outlasted {@code maxSpin}. A call at a time therefore finds both
 *       threads awake, as with {@link #busyPoll()}, while an idle thread blocks as {@link #event()}
 *       does, and sparse traffic costs at most {@code maxSpin} per stretch until the thread has
 *       learnt not to spin for it. Between polls it yields the core ({@link Thread#yield}).
 * </ul>
 *
 * <p>What each costs in CPU (TCP, one client and one server I/O thread in one JVM, measured on a
 * 2-vCPU virtual machine; docs/performance-archive.md, section 1d): an idle connection costs about 0.3 % of a
 * core with {@code event} and with {@code adaptive} alike (both block; only the ticks wake them).
 * With calls about a millisecond apart, each gap shorter than {@code adaptive}'s most spin (2 ms), the
 * JVM used about 93 % of a core with {@code adaptive} against 14 % with {@code event}: every gap is spun
 * through. With calls 5 ms apart, 6 % and 9 %. {@code busyPoll} costs a whole core per I/O thread at all
 * times, {@code backOff} up to its spin after every event.
 *
 * <p>Immutable. {@link #parse(String)} reads the form {@link #toString()} writes: {@code event},
 * {@code busy-poll}, {@code back-off:50us}, {@code adaptive:2000us} (units ns, us, ms).
 */
public final class IdleStrategy {
    /** The kinds of idle strategy. */
    public enum Mode {
        /** Block as soon as there is nothing to do. */
        EVENT,
        /** Never block. */
        BUSY_POLL,
        /** Poll for a while after the last event, then block. */
        BACK_OFF,
        /** Poll while the next event is likely to come soon, judged from the idle stretches seen. */
        ADAPTIVE
    }

    /** Least spin of {@link #backOff}: 1 microsecond. */
    public static final Duration MIN_SPIN = Duration.ofNanos(1_000);
    /** Greatest spin of {@link #backOff}: 10 milliseconds. */
    public static final Duration MAX_SPIN = Duration.ofMillis(10);
    /** A typical spin for {@link #backOff}: 50 microseconds (a few round trips on a slow link). */
    public static final Duration DEFAULT_SPIN = Duration.ofNanos(50_000);

    /**
     * The default most spin of {@link #adaptive()}: 2 milliseconds, so that a round trip under
     * emulation (about 1.5 ms for a small call between two JVMs in the Soft-RoCE VM) is still spun;
     * on hardware, where a round trip takes microseconds, the learnt spin stays far below it.
     */
    public static final Duration DEFAULT_MAX_SPIN = Duration.ofMillis(2);

    private static final IdleStrategy EVENT = new IdleStrategy(Mode.EVENT, Duration.ZERO);
    private static final IdleStrategy BUSY_POLL = new IdleStrategy(Mode.BUSY_POLL, Duration.ZERO);

    private final Mode mode;
    private final Duration spin;

    private IdleStrategy(Mode mode, Duration spin) {
        this.mode = mode;
        this.spin = spin;
    }

    /** @return block as soon as idle */
    public static IdleStrategy event() {
        return EVENT;
    }

    /** @return never block */
    public static IdleStrategy busyPoll() {
        return BUSY_POLL;
    }

    /**
     * @param spin how long to keep polling after the last event, in [{@link #MIN_SPIN},
     *             {@link #MAX_SPIN}]
     * @return poll for {@code spin} after the last event, then block
     * @throws IllegalArgumentException when {@code spin} is out of range
     */
    public static IdleStrategy backOff(Duration spin) {
        Objects.requireNonNull(spin, "spin");
        if (spin.compareTo(MIN_SPIN) < 0 || spin.compareTo(MAX_SPIN) > 0) {
            throw new IllegalArgumentException("back-off spin must be in [1 us, 10 ms]: " + spin);
        }
        return new IdleStrategy(Mode.BACK_OFF, spin);
    }

    /** @return {@link #adaptive(Duration)} with {@link #DEFAULT_MAX_SPIN} (the default of both transports) */
    public static IdleStrategy adaptive() {
        return adaptive(DEFAULT_MAX_SPIN);
    }

    /**
     * @param maxSpin the most one idle stretch is polled before blocking, in [{@link #MIN_SPIN},
     *                {@link #MAX_SPIN}]
     * @return poll while the next event is likely to come within {@code maxSpin}, then block
     * @throws IllegalArgumentException when {@code maxSpin} is out of range
     */
    public static IdleStrategy adaptive(Duration maxSpin) {
        Objects.requireNonNull(maxSpin, "maxSpin");
        if (maxSpin.compareTo(MIN_SPIN) < 0 || maxSpin.compareTo(MAX_SPIN) > 0) {
            throw new IllegalArgumentException("adaptive most spin must be in [1 us, 10 ms]: " + maxSpin);
        }
        return new IdleStrategy(Mode.ADAPTIVE, maxSpin);
    }

    /**
     * Reads {@code event}, {@code busy-poll}, {@code back-off:<duration>} (for example
     * {@code back-off:50us}; units ns, us, ms; {@code back-off} alone means {@link #DEFAULT_SPIN}) or
     * {@code adaptive:<duration>} ({@code adaptive} alone means {@link #DEFAULT_MAX_SPIN}).
     *
     * @param text the strategy's name, case-insensitive
     * @return the strategy
     * @throws IllegalArgumentException when {@code text} names none
     */
    public static IdleStrategy parse(String text) {
        String t = text.trim().toLowerCase(Locale.ROOT);
        if (t.equals("event")) {
            return EVENT;
        }
        if (t.equals("busy-poll")) {
            return BUSY_POLL;
        }
        if (t.equals("back-off")) {
            return backOff(DEFAULT_SPIN);
        }
        if (t.startsWith("back-off:")) {
            return backOff(parseDuration(t.substring("back-off:".length()), text));
        }
        if (t.equals("adaptive")) {
            return adaptive();
        }
        if (t.startsWith("adaptive:")) {
            return adaptive(parseDuration(t.substring("adaptive:".length()), text));
        }
        throw new IllegalArgumentException(
                "not an idle strategy (event, busy-poll, back-off:<n>us, adaptive:<n>us): " + text);
    }

    private static Duration parseDuration(String d, String whole) {
        int unitAt = 0;
        while (unitAt < d.length() && Character.isDigit(d.charAt(unitAt))) {
            unitAt++;
        }
        if (unitAt == 0) {
            throw new IllegalArgumentException("no number in the spin: " + whole);
        }
        long n = Long.parseLong(d.substring(0, unitAt));
        return switch (d.substring(unitAt)) {
            case "ns" -> Duration.ofNanos(n);
            case "us" -> Duration.ofNanos(Math.multiplyExact(n, 1_000L));
            case "ms" -> Duration.ofMillis(n);
            default -> throw new IllegalArgumentException("the spin needs a unit (ns, us, ms): " + whole);
        };
    }

    /** @return which strategy this is */
    public Mode mode() {
        return mode;
    }

    /**
     * @return how long {@link Mode#BACK_OFF} polls after the last event, the most
     *         {@link Mode#ADAPTIVE} polls in one idle stretch; zero for the others
     */
    public Duration spin() {
        return spin;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof IdleStrategy s && s.mode == mode && s.spin.equals(spin);
    }

    @Override
    public int hashCode() {
        return mode.hashCode() * 31 + spin.hashCode();
    }

    private static String format(Duration d) {
        return d.toNanos() % 1_000 == 0 ? d.toNanos() / 1_000 + "us" : d.toNanos() + "ns";
    }

    /**
     * @return {@code event}, {@code busy-poll}, {@code back-off:<n>us} or {@code adaptive:<n>us} (the
     *         form {@link #parse} reads)
     */
    @Override
    public String toString() {
        return switch (mode) {
            case EVENT -> "event";
            case BUSY_POLL -> "busy-poll";
            case BACK_OFF -> "back-off:" + format(spin);
            case ADAPTIVE -> "adaptive:" + format(spin);
        };
    }
}
