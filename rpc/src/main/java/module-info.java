module dev.rdmarpc.rpc {
    requires transitive dev.rdmarpc.ibverbs;
    requires transitive dev.rdmarpc.rdmacm;
    requires transitive dev.rdmarpc.cuda;
    exports dev.rdmarpc.rpc;
}
