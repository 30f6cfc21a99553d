package dev.rdmarpc.rdmacm;

import dev.rdmarpc.rdmacm.raw.sockaddr;
import dev.rdmarpc.rdmacm.raw.sockaddr_in;
import dev.rdmarpc.rdmacm.raw.sockaddr_in6;
import dev.rdmarpc.rdmacm.raw.sockaddr_storage;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.SegmentAllocator;
import java.lang.foreign.ValueLayout;
import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.ByteOrder;

/**
 * {@link InetSocketAddress} to and from {@code struct sockaddr_in}/{@code sockaddr_in6}, the
 * address form librdmacm takes. Ports and IPv4 addresses are in network byte order in C.
 */
final class SocketAddresses {
    static final short AF_INET = 2;
    static final short AF_INET6 = 10;
    private static final ValueLayout.OfShort PORT = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);

    private SocketAddresses() {
    }

    /**
     * A {@code struct sockaddr_storage} holding {@code address}.
     *
     * @throws IllegalArgumentException for an unresolved address
     */
    static MemorySegment toNative(InetSocketAddress address, SegmentAllocator allocator) {
        if (address.isUnresolved()) {
            throw new IllegalArgumentException("unresolved address " + address + "; give an IP address");
        }
        MemorySegment storage = allocator.allocate(sockaddr_storage.layout());
        InetAddress ip = address.getAddress();
        if (ip instanceof Inet4Address) {
            sockaddr_in.sin_family(storage, AF_INET);
            storage.set(PORT, sockaddr_in.sin_port$offset(), (short) address.getPort());
            MemorySegment.copy(ip.getAddress(), 0, storage, ValueLayout.JAVA_BYTE, sockaddr_in.sin_addr$offset(), 4);
        } else {
            Inet6Address ip6 = (Inet6Address) ip;
            sockaddr_in6.sin6_family(storage, AF_INET6);
            storage.set(PORT, sockaddr_in6.sin6_port$offset(), (short) address.getPort());
            MemorySegment.copy(ip6.getAddress(), 0, storage, ValueLayout.JAVA_BYTE, sockaddr_in6.sin6_addr$offset(), 16);
            sockaddr_in6.sin6_scope_id(storage, ip6.getScopeId());
        }
        return storage;
    }

    /**
     * The address in a {@code struct sockaddr} (at least {@code sockaddr_storage} long), or
     * {@code null} when its family is neither AF_INET nor AF_INET6 (e.g. still unset: AF_UNSPEC).
     */
    static InetSocketAddress fromNative(MemorySegment sa) {
        short family = sockaddr.sa_family(sa);
        try {
            if (family == AF_INET) {
                byte[] ip = new byte[4];
                MemorySegment.copy(sa, ValueLayout.JAVA_BYTE, sockaddr_in.sin_addr$offset(), ip, 0, 4);
                return new InetSocketAddress(InetAddress.getByAddress(ip),
                        Short.toUnsignedInt(sa.get(PORT, sockaddr_in.sin_port$offset())));
            }
            if (family == AF_INET6) {
                byte[] ip = new byte[16];
                MemorySegment.copy(sa, ValueLayout.JAVA_BYTE, sockaddr_in6.sin6_addr$offset(), ip, 0, 16);
                int scope = sockaddr_in6.sin6_scope_id(sa);
                InetAddress address = scope != 0 ? Inet6Address.getByAddress(null, ip, scope) : InetAddress.getByAddress(ip);
                return new InetSocketAddress(address, Short.toUnsignedInt(sa.get(PORT, sockaddr_in6.sin6_port$offset())));
            }
        } catch (UnknownHostException e) {
            throw new AssertionError("a 4- or 16-byte address", e);
        }
        return null;
    }
}
