package dev.rdmarpc.ibverbs;

/** Facts about the native library behind this module. */
public final class Ibverbs {
    /** The shared object loaded, by soname, on first use. */
    public static final String SONAME = "libibverbs.so.1";

    private Ibverbs() {
    }
}
