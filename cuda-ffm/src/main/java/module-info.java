/**
 * The CUDA driver API through the FFM API: the jextract-generated bindings
 * ({@code dev.rdmarpc.cuda.raw}, exported for raw use) and the hand-written pieces in
 * {@code dev.rdmarpc.cuda} (whose C library calls, close and getpagesize, go through
 * {@code dev.rdmarpc.posix}). Needs {@code --enable-native-access=dev.rdmarpc.cuda,dev.rdmarpc.posix};
 * works without a GPU or driver until CUDA is actually used.
 */
module dev.rdmarpc.cuda {
    requires dev.rdmarpc.posix;
    exports dev.rdmarpc.cuda;
    exports dev.rdmarpc.cuda.raw;
}
