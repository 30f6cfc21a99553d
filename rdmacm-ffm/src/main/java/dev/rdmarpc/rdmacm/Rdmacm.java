package dev.rdmarpc.rdmacm;

import java.lang.foreign.Arena;
import java.lang.foreign.SymbolLookup;

/**
 * Whether librdmacm can be used in this JVM, found out lazily (Netty style): nothing is loaded
 * until one of these methods, {@link RdmaCmNative} or a class of {@code dev.rdmarpc.rdmacm.raw} is
 * first used, so a TCP-only application never needs librdmacm.
 *
 * <p>Check {@link #ensureAvailability()} (or {@link #isAvailable()}) before touching the raw
 * bindings: a missing library then gives one clear {@link RdmaCmUnavailableException} instead of
 * an {@link ExceptionInInitializerError}. Thread-safe; the answer is computed once per JVM.
 */
public final class Rdmacm {
    /** The shared object loaded, by soname, on first use. */
    public static final String SONAME = "librdmacm.so.1";
    /** The Debian/Ubuntu package that installs {@link #SONAME}. */
    public static final String PACKAGE = "librdmacm1";

    private Rdmacm() {
    }

    private static final class Probe {
        static final RdmaCmUnavailableException CAUSE = probe(SONAME);
    }

    /** Whether librdmacm was loaded. It says nothing about RDMA devices (there may be none). */
    public static boolean isAvailable() {
        return Probe.CAUSE == null;
    }

    /**
     * Returns normally when librdmacm is loaded.
     *
     * @throws RdmaCmUnavailableException naming the library and the package that provides it
     */
    public static void ensureAvailability() {
        RdmaCmUnavailableException cause = Probe.CAUSE;
        if (cause != null) {
            throw new RdmaCmUnavailableException(cause.getMessage(), cause.getCause());
        }
    }

    /** Why librdmacm is not available, or {@code null} when it is. */
    public static Throwable unavailabilityCause() {
        return Probe.CAUSE;
    }

    /** Loads {@code soname} for the life of the JVM and says why that failed, or returns {@code null}. */
    static RdmaCmUnavailableException probe(String soname) {
        try {
            SymbolLookup.libraryLookup(soname, Arena.global());
            return null;
        } catch (IllegalArgumentException e) {
            return new RdmaCmUnavailableException("RDMA connection manager library " + soname
                    + " could not be loaded; install the " + PACKAGE + " package (Debian/Ubuntu): " + e.getMessage(), e);
        } catch (IllegalCallerException e) {
            return new RdmaCmUnavailableException("native access is not enabled for module dev.rdmarpc.rdmacm, so "
                    + soname + " cannot be loaded; run java with --enable-native-access=dev.rdmarpc.rdmacm"
                    + " (ALL-UNNAMED on the class path)", e);
        }
    }
}
