module dev.rdmarpc.ibverbs {

    exports dev.rdmarpc.ibverbs;
}
