package dev.rdmarpc.rpc.transport.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.rdmarpc.rpc.transport.IdleStrategy;
import org.junit.jupiter.api.Test;

/**
 * TCP waits as RDMA does by default: {@link IdleStrategy#adaptive()} (docs/performance.md, section 1d,
 * has the figures that chose it: an idle connection costs no more than {@code event}, the CPU time per
 * call at 128 B x 64 stays within 1.2 x of {@code event}'s, and short waits are not paid in wake-ups).
 */
class TcpDefaultIdleStrategyTest {
    @Test
    void theDefaultIsAdaptiveWithItsDefaultMostSpin() {
        assertEquals(IdleStrategy.adaptive(), new TcpConfig().loop().idleStrategy());
    }
}
