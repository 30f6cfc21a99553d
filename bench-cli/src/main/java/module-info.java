module dev.rdmarpc.bench {
    requires dev.rdmarpc.rpc;
    requires info.picocli;
    requires HdrHistogram;
    opens dev.rdmarpc.bench to info.picocli;
}
