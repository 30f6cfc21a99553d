package dev.rdmarpc.rpc.transport.frame;

import dev.rdmarpc.rpc.protocol.FrameDescriptor;
import java.net.InetSocketAddress;
import java.util.Objects;

/**
 * The argument checks both transports make before they listen or connect, so that each says the
 * same thing about the same mistake.
 */
public final class EndpointChecks {
    private EndpointChecks() {
    }

    /**
     * @param address        where to listen or connect; not null
     * @param what           the name of {@code target} in the message ({@code "acceptor"} or {@code "handler"})
     * @param target         the acceptor or frame handler; not null
     * @param maxFrameLength the largest frame, header included
     * @throws NullPointerException     for a null address or target
     * @throws IllegalArgumentException when {@code maxFrameLength} is outside
     *                                  [{@link FrameDescriptor#HEADER_LENGTH}, {@link FrameDescriptor#MAX_FRAME_LENGTH_LIMIT}]
     */
    public static void check(InetSocketAddress address, String what, Object target, int maxFrameLength) {
        Objects.requireNonNull(address, "address");
        Objects.requireNonNull(target, what);
        checkMaxFrameLength(maxFrameLength);
    }

    /** @throws IllegalArgumentException when {@code maxFrameLength} is outside the protocol's range */
    public static void checkMaxFrameLength(int maxFrameLength) {
        if (maxFrameLength < FrameDescriptor.HEADER_LENGTH || maxFrameLength > FrameDescriptor.MAX_FRAME_LENGTH_LIMIT) {
            throw new IllegalArgumentException("maxFrameLength must be in [" + FrameDescriptor.HEADER_LENGTH + ", "
                    + FrameDescriptor.MAX_FRAME_LENGTH_LIMIT + "]: " + maxFrameLength);
        }
    }
}
