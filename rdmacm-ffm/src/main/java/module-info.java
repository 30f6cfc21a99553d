/**
 * librdmacm through the FFM API: the jextract-generated bindings ({@code dev.rdmarpc.rdmacm.raw},
 * exported for users of the raw connection manager; verbs types come from
 * {@code dev.rdmarpc.ibverbs.raw}) and the hand-written pieces in {@code dev.rdmarpc.rdmacm}.
 * Needs {@code --enable-native-access=dev.rdmarpc.rdmacm} (and dev.rdmarpc.ibverbs).
 */
module dev.rdmarpc.rdmacm {
    requires transitive dev.rdmarpc.ibverbs;
    exports dev.rdmarpc.rdmacm;
    exports dev.rdmarpc.rdmacm.raw;
}
