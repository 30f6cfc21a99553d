package dev.rdmarpc.ibverbs.verbs;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Decoding the width, speed and physical state codes of {@code struct ibv_port_attr}; needs no device. */
class PortAttributesTest {
    private static PortAttributes port(int width, int speed, int physicalState) {
        return new PortAttributes(1, PortState.ACTIVE, Mtu.MTU_4096, Mtu.MTU_1024, 16, 0, 1L << 31, 0, 0,
                LinkLayer.ETHERNET, width, speed, physicalState, 1);
    }

    @ParameterizedTest
    @CsvSource({"1, 1", "2, 4", "4, 8", "8, 12", "16, 2", "0, 0", "3, 0", "32, 0"})
    void widthCodesAreLanes(int code, int lanes) {
        assertEquals(lanes, port(code, 1, 5).activeLanes());
    }

    @ParameterizedTest
    @CsvSource({"1, SDR, 2.5", "2, DDR, 5", "4, QDR, 10", "8, FDR10, 10", "16, FDR, 14", "32, EDR, 25",
        "64, HDR, 50", "128, NDR, 100"})
    void speedCodesAreIbvDevinfosRates(int code, String name, double gbps) {
        PortAttributes p = port(2, code, 5);
        assertEquals(name, p.activeSpeedName());
        assertEquals(gbps, p.laneGbps());
        assertEquals(4 * gbps, p.linkGbps());
    }

    @Test
    void unknownCodesSayUnknown() {
        for (int code : new int[] {0, 3, 6, 255, -1}) {
            PortAttributes p = port(1, code, 0);
            assertNull(p.activeSpeedName(), "speed " + code);
            assertTrue(Double.isNaN(p.laneGbps()), "speed " + code);
            assertTrue(Double.isNaN(p.linkGbps()), "speed " + code);
        }
        assertTrue(Double.isNaN(port(0, 1, 5).linkGbps()), "unknown width");
        assertNull(port(1, 1, 0).physicalStateName());
        assertNull(port(1, 1, 8).physicalStateName());
    }

    @ParameterizedTest
    @CsvSource({"1, Sleep", "2, Polling", "3, Disabled", "4, PortConfigurationTraining", "5, LinkUp",
        "6, LinkErrorRecovery", "7, PhyTest"})
    void physicalStates(int code, String name) {
        assertEquals(name, port(1, 1, code).physicalStateName());
    }
}
