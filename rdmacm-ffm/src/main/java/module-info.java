module dev.rdmarpc.rdmacm {
    requires transitive dev.rdmarpc.ibverbs;
    exports dev.rdmarpc.rdmacm;
}
