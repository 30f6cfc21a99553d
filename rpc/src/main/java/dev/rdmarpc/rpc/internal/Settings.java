package dev.rdmarpc.rpc.internal;

import dev.rdmarpc.rpc.protocol.FrameDescriptor;
import java.time.Duration;
import java.util.List;

/** Shared validation of the builders' settings (the API package's builders, not exported). */
public final class Settings {
    private Settings() {
    }

    public static void checkPositive(String name, Duration d) {
        if (d.isNegative() || d.isZero()) {
            throw new IllegalArgumentException(name + " must be positive: " + d);
        }
    }

    public static void checkNotNegative(String name, Duration d) {
        if (d.isNegative()) {
            throw new IllegalArgumentException(name + " must not be negative: " + d);
        }
    }

    public static void checkAtLeastOne(String name, int n) {
        if (n < 1) {
            throw new IllegalArgumentException(name + " must be positive: " + n);
        }
    }

    public static void checkMaxFrame(int maxFrameLength) {
        if (maxFrameLength < FrameDescriptor.HEADER_LENGTH || maxFrameLength > FrameDescriptor.MAX_FRAME_LENGTH_LIMIT) {
            throw new IllegalArgumentException("maxFrameLength must be in [" + FrameDescriptor.HEADER_LENGTH + ", "
                    + FrameDescriptor.MAX_FRAME_LENGTH_LIMIT + "]: " + maxFrameLength);
        }
    }

    /**
     * @param properties a configuration class's system properties ({@code systemProperties()})
     * @param setting    one of its settings
     * @return true when the property that gives {@code setting} its default is set
     */
    public static boolean propertySet(List<String> properties, String setting) {
        for (String p : properties) {
            if (p.endsWith("." + setting)) {
                return System.getProperty(p) != null;
            }
        }
        throw new IllegalArgumentException("no system property for " + setting + " in " + properties);
    }
}
