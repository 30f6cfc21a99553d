package dev.rdmarpc.cuda;

/** Facts about the native library behind this module. */
public final class Cuda {
    /** The shared object loaded, by soname, on first use. */
    public static final String SONAME = "libcuda.so.1";

    private Cuda() {
    }
}
