package dev.rdmarpc.rpc;

import dev.rdmarpc.rpc.transport.Transport;
import dev.rdmarpc.rpc.transport.rdma.RdmaConfig;
import dev.rdmarpc.rpc.transport.rdma.RdmaTransport;

/**
 * The builders' only way to the RDMA transport. Kept in its own class so that a builder without
 * {@code rdma()} never names {@link RdmaTransport} and nothing of RDMA (libibverbs included) is
 * loaded for a TCP-only application.
 */
final class RdmaSupport {
    private RdmaSupport() {
    }

    static Transport create(RdmaConfig config, String threadNamePrefix) {
        RdmaConfig c = config.copy();
        if ("rdmarpc-rdma".equals(c.threadNamePrefix())) {
            c.threadNamePrefix(threadNamePrefix);
        }
        return RdmaTransport.create(c);
    }

    static void checkExclusive(RdmaConfig rdma, Transport transport) {
        if (rdma != null && transport != null) {
            throw new IllegalArgumentException("rdma() and transport() cannot both be set: rdma() makes the builder create"
                    + " and own an RDMA transport");
        }
    }
}
