package dev.rdmarpc.rpc;

import dev.rdmarpc.rpc.protocol.FrameDescriptor;
import java.time.Duration;

/** Shared validation of builder settings. */
final class Settings {
    private Settings() {
    }

    static void checkPositive(String name, Duration d) {
        if (d.isNegative() || d.isZero()) {
            throw new IllegalArgumentException(name + " must be positive: " + d);
        }
    }

    static void checkMaxFrame(int maxFrameLength) {
        if (maxFrameLength < FrameDescriptor.HEADER_LENGTH || maxFrameLength > FrameDescriptor.MAX_FRAME_LENGTH_LIMIT) {
            throw new IllegalArgumentException("maxFrameLength must be in [" + FrameDescriptor.HEADER_LENGTH + ", "
                    + FrameDescriptor.MAX_FRAME_LENGTH_LIMIT + "]: " + maxFrameLength);
        }
    }
}
