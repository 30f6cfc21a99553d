package dev.rdmarpc.rpc.settings;

import java.util.Arrays;
import java.util.stream.Collectors;

/**
 * The value of an I/O-thread CPU setting: CPU numbers, I/O thread {@code i} pinned to
 * {@code cpus[i % cpus.length]}; empty for none. Its text form is the numbers separated by commas
 * ({@code 2,3}), {@code none} (or the empty string) for none.
 */
public record CpuList(int[] cpus) {
    /** No CPU: the threads are left to the scheduler. */
    public static final CpuList NONE = new CpuList(new int[0]);
    /**
     * CPU numbers a list may hold: [0, MAX), the CPUs a Linux affinity mask names (glibc's
     * {@code CPU_SETSIZE}, the size of the mask the I/O threads are pinned with).
     */
    public static final int MAX = 1024;

    public CpuList {
        cpus = cpus.clone();
        for (int c : cpus) {
            if (c < 0 || c >= MAX) {
                throw new IllegalArgumentException("a CPU number must be in [0, " + MAX + "): " + c);
            }
        }
    }

    /** @return a copy of the numbers */
    @Override
    public int[] cpus() {
        return cpus.clone();
    }

    /** @return the CPU of I/O thread {@code index}, or -1 when the list is empty */
    public int cpuOf(int index) {
        return cpus.length == 0 ? -1 : cpus[index % cpus.length];
    }

    /**
     * @param setting the setting's name, for the error
     * @throws IllegalArgumentException naming {@code setting} for a number outside [0, {@value #MAX})
     */
    public static CpuList of(String setting, int... cpus) {
        try {
            return new CpuList(cpus);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(setting + ": " + e.getMessage(), e);
        }
    }

    /** Reads {@code 2,3} (blanks allowed around the numbers); {@code none}, empty or blank for none. */
    public static CpuList parse(String text) {
        if (text.isBlank() || text.strip().equals("none")) {
            return NONE;
        }
        String[] parts = text.split(",");
        int[] cpus = new int[parts.length];
        for (int i = 0; i < parts.length; i++) {
            try {
                cpus[i] = Integer.parseInt(parts[i].trim());
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("not a CPU number: '" + parts[i].trim() + "' (a list reads 2,3)");
            }
        }
        return new CpuList(cpus);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof CpuList other && Arrays.equals(cpus, other.cpus);
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(cpus);
    }

    /** @return the text form, {@code 2,3}, or {@code none} */
    @Override
    public String toString() {
        if (cpus.length == 0) {
            return "none";
        }
        return Arrays.stream(cpus).mapToObj(Integer::toString).collect(Collectors.joining(","));
    }
}
