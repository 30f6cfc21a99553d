package dev.rdmarpc.rdmacm;

/** Facts about the native library behind this module. */
public final class Rdmacm {
    /** The shared object loaded, by soname, on first use. */
    public static final String SONAME = "librdmacm.so.1";

    private Rdmacm() {
    }
}
