/**
 * The few C library calls rdmarpc makes, through the FFM API: the jextract-generated bindings
 * ({@code dev.rdmarpc.posix.raw}, internal: poll, eventfd, read, write, close, fcntl, socket calls,
 * sched_setaffinity, sched_getaffinity, if_indextoname, getpagesize, strerror) and over them the
 * errno-checked calls of {@code dev.rdmarpc.posix}: {@link dev.rdmarpc.posix.Posix} (file
 * descriptors), {@link dev.rdmarpc.posix.Sockets} (non-blocking TCP sockets to poll beside other
 * descriptors) and {@link dev.rdmarpc.posix.ThreadAffinity} (the CPUs a thread may run on). Linux (glibc) only.
 * Needs {@code --enable-native-access=dev.rdmarpc.posix}.
 */
module dev.rdmarpc.posix {
    exports dev.rdmarpc.posix;
}
