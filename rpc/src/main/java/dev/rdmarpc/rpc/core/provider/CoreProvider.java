package dev.rdmarpc.rpc.core.provider;

import dev.rdmarpc.rpc.RpcProvider;
import dev.rdmarpc.rpc.core.client.ClientChannel;
import dev.rdmarpc.rpc.core.client.ClientPool;
import dev.rdmarpc.rpc.core.server.MethodRegistry;
import dev.rdmarpc.rpc.core.server.ServerCore;
import dev.rdmarpc.rpc.transport.Transport;
import java.net.InetSocketAddress;

/**
 * This module's {@link RpcProvider}, which the API's builders find with
 * {@link java.util.ServiceLoader} (module-info {@code provides}, and
 * {@code META-INF/services} on the class path): clients are {@link ClientChannel}s, pools
 * {@link ClientPool}s, servers {@link ServerCore}s.
 */
public final class CoreProvider implements RpcProvider {
    /** Made by {@link java.util.ServiceLoader}. */
    public CoreProvider() {
    }

    @Override
    public Client connect(Transport transport, ClientSettings settings, InetSocketAddress address) {
        return ClientChannel.connect(transport, settings, address);
    }

    @Override
    public Pool pool(Transport transport, ClientSettings settings, PoolSettings pool) {
        return new ClientPool(transport, settings, pool);
    }

    @Override
    public Server server(Transport transport, ServerSettings settings) {
        return new ServerCore(MethodRegistry.of(settings.methods()), settings.maxFrameLength(), settings.maxMetadataBytes(),
                settings.interceptors(), settings.maxInFlight(), transport.bufferPool(), transport.name(),
                settings.streamWindowBytes());
    }
}
