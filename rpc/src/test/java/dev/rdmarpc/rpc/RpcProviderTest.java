package dev.rdmarpc.rpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.rdmarpc.rpc.core.client.ClientCore;
import dev.rdmarpc.rpc.core.provider.CoreProvider;
import java.net.InetSocketAddress;
import org.junit.jupiter.api.Test;

/**
 * The builders run on this module's {@link RpcProvider}, found with {@link java.util.ServiceLoader},
 * and the limits they check before building are the ones core enforces.
 */
class RpcProviderTest {
    @Test
    void theBuildersFindThisModulesProvider() {
        RpcProvider p = RpcBuilder.provider();
        assertInstanceOf(CoreProvider.class, p);
        assertEquals(RpcProvider.class.getModule(), p.getClass().getModule());
        assertTrue(p == RpcBuilder.provider(), "found once");
    }

    @Test
    void theBuildersLimitsAreCores() {
        assertEquals(ClientCore.MAX_OUTSTANDING, ClientBuilder.MAX_OUTSTANDING);
        assertEquals(ClientCore.DEFAULT_STREAM_WINDOW_BYTES, RpcBuilder.DEFAULT_STREAM_WINDOW_BYTES);
        InetSocketAddress nowhere = new InetSocketAddress("127.0.0.1", 1);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> RpcClient.builder().address(nowhere).maxOutstanding(ClientCore.MAX_OUTSTANDING + 1).connect());
        assertTrue(e.getMessage().contains("maxOutstanding must be in [1, " + ClientCore.MAX_OUTSTANDING + "]"),
                e.getMessage());
    }
}
