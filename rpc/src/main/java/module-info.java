/**
 * The rdmarpc RPC layer: buffer pool, wire protocol and codecs, the TCP and RDMA transports, client
 * and server, and GPU attachments.
 *
 * <p>TCP needs nothing but this module and {@code dev.rdmarpc.posix}, the C library calls the
 * transports make (CPU pinning, the RDMA loop's poll and eventfd); {@code jdk.jfr} and
 * {@code jdk.net}, for per-socket keepalive timers, come with the JDK. The RDMA transport needs
 * {@code dev.rdmarpc.ibverbs}, GPU attachments {@code dev.rdmarpc.cuda} (and GPU-direct registration
 * both): they are {@code requires static}, so a TCP-only application's module graph holds neither.
 * An application that uses them puts them on the module path and resolves them, with
 * {@code requires dev.rdmarpc.ibverbs;} (or {@code dev.rdmarpc.cuda}) in its own module-info or
 * {@code --add-modules dev.rdmarpc.ibverbs,dev.rdmarpc.cuda} on the command line; on the class path
 * their jars are simply there. Native access: {@code --enable-native-access=dev.rdmarpc.posix,dev.rdmarpc.ibverbs,dev.rdmarpc.cuda,dev.rdmarpc.rpc}.
 */
module dev.rdmarpc.rpc {
    requires dev.rdmarpc.posix;
    requires static dev.rdmarpc.ibverbs;
    requires static dev.rdmarpc.cuda;
    requires jdk.jfr;
    requires jdk.net;

    exports dev.rdmarpc.rpc;
    exports dev.rdmarpc.rpc.buffer;
    exports dev.rdmarpc.rpc.codec;
    exports dev.rdmarpc.rpc.service;
    exports dev.rdmarpc.rpc.protocol;
    exports dev.rdmarpc.rpc.transport;
    exports dev.rdmarpc.rpc.transport.tcp;
    exports dev.rdmarpc.rpc.transport.tls;
    exports dev.rdmarpc.rpc.gpu;
    exports dev.rdmarpc.rpc.transport.rdma;

    // the API's builders find the implementation as a service: the API package depends on no
    // implementation package (see dev.rdmarpc.rpc.RpcProvider)
    uses dev.rdmarpc.rpc.RpcProvider;
    provides dev.rdmarpc.rpc.RpcProvider with dev.rdmarpc.rpc.core.provider.CoreProvider;
}
