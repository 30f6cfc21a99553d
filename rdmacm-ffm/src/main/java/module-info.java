/**
 * librdmacm through the FFM API: the jextract-generated bindings ({@code dev.rdmarpc.rdmacm.raw},
 * exported for users of the raw connection manager; verbs types come from
 * {@code dev.rdmarpc.ibverbs.raw}) and the hand-written pieces in {@code dev.rdmarpc.rdmacm}.
 * Its C library calls (poll, fcntl) go through {@code dev.rdmarpc.posix}. Needs
 * {@code --enable-native-access=dev.rdmarpc.rdmacm} (and dev.rdmarpc.ibverbs, dev.rdmarpc.posix).
 */
module dev.rdmarpc.rdmacm {
    requires transitive dev.rdmarpc.ibverbs;
    requires dev.rdmarpc.posix;
    exports dev.rdmarpc.rdmacm;
    exports dev.rdmarpc.rdmacm.raw;
}
