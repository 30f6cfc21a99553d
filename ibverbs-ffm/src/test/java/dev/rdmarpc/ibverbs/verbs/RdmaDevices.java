package dev.rdmarpc.ibverbs.verbs;

import dev.rdmarpc.testsupport.RdmaEnvironment;

import java.net.InetAddress;
import java.net.UnknownHostException;

/**
 * The two RDMA ends the {@link dev.rdmarpc.testsupport.RdmaTest @RdmaTest} classes of this package use,
 * from {@link RdmaEnvironment}: in the Soft-RoCE VM rxe0 (198.18.0.1) and rxe1 (198.18.0.2); elsewhere
 * the first active device (twice, if there is only one). Read only by tests the extension let run.
 */
final class RdmaDevices {
    static final RdmaEnvironment ENV = RdmaEnvironment.discover();
    static final String DEV0 = ENV.device0();
    static final String DEV1 = ENV.device1();
    static final String ADDR0 = ENV.address0();
    static final String ADDR1 = ENV.address1();

    private RdmaDevices() {
    }

    static InetAddress address(String text) {
        try {
            return InetAddress.getByName(text);
        } catch (UnknownHostException e) {
            throw new AssertionError(e);
        }
    }
}
