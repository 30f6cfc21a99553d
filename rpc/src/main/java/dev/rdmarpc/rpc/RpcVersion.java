package dev.rdmarpc.rpc;

/** Version of the RPC library and of its wire protocol. */
public final class RpcVersion {
    /** Wire protocol version carried in every frame header. */
    public static final int PROTOCOL = 1;

    private RpcVersion() {
    }
}
