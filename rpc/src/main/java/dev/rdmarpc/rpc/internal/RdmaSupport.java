package dev.rdmarpc.rpc.internal;

import dev.rdmarpc.rpc.transport.Transport;
import dev.rdmarpc.rpc.transport.rdma.RdmaConfig;
import dev.rdmarpc.rpc.transport.rdma.RdmaTransport;
import java.util.function.Consumer;

/**
 * The builders' only way to the RDMA transport. Kept in its own class so that a builder without
 * {@code rdma()} never names {@link RdmaTransport} and nothing of RDMA (libibverbs included) is
 * loaded for a TCP-only application.
 */
public final class RdmaSupport {
    private RdmaSupport() {
    }

    /**
     * Creates the RDMA transport a builder owns.
     *
     * @param given            a whole configuration the user gave (copied already), or null
     * @param settings         else, what the user sets on the defaults
     * @param threadNamePrefix the builder's name for the threads of its role: applied unless the
     *                         {@code rdmarpc.rdma.threadNamePrefix} property or the user names them
     * @throws IllegalStateException naming the missing module when ibverbs-ffm is absent
     */
    public static Transport create(RdmaConfig given, Consumer<RdmaConfig> settings, String threadNamePrefix) {
        OptionalModule.IBVERBS.require("The RDMA transport");
        boolean propertyNames = Settings.propertySet(RdmaConfig.systemProperties(), "threadNamePrefix");
        RdmaConfig c;
        if (given != null) {
            c = given.copy();
            // Named by the user unless it still has the name a configuration is born with.
            if (!propertyNames && c.threadNamePrefix().equals(new RdmaConfig().threadNamePrefix())) {
                c.threadNamePrefix(threadNamePrefix);
            }
        } else {
            c = new RdmaConfig();
            if (!propertyNames) {
                c.threadNamePrefix(threadNamePrefix);
            }
            settings.accept(c);
        }
        return RdmaTransport.create(c);
    }
}
