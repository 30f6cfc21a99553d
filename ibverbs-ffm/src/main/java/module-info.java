/**
 * libibverbs through the FFM API: the jextract-generated bindings ({@code dev.rdmarpc.ibverbs.raw},
 * exported for users of raw verbs) and the hand-written pieces beside them in
 * {@code dev.rdmarpc.ibverbs}: lazy availability ({@link dev.rdmarpc.ibverbs.Ibverbs}), errno
 * capture ({@link dev.rdmarpc.ibverbs.VerbsNative}) and the static inline data path of verbs.h
 * ({@link dev.rdmarpc.ibverbs.VerbsInline}); and over them the idiomatic, allocation-free verbs layer
 * {@code dev.rdmarpc.ibverbs.verbs} (devices, protection domains, memory regions, completion queues,
 * queue pairs, reusable work-request batches), whose C library calls (poll, fcntl, eventfd) go through
 * {@code dev.rdmarpc.posix}. Needs {@code --enable-native-access=dev.rdmarpc.ibverbs,dev.rdmarpc.posix}.
 */
module dev.rdmarpc.ibverbs {
    requires dev.rdmarpc.posix;
    exports dev.rdmarpc.ibverbs;
    exports dev.rdmarpc.ibverbs.verbs;
    exports dev.rdmarpc.ibverbs.raw;
}
