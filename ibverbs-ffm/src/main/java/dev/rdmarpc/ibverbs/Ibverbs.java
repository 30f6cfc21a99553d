package dev.rdmarpc.ibverbs;

import java.lang.foreign.Arena;
import java.lang.foreign.SymbolLookup;

/**
 * Whether libibverbs can be used in this JVM, found out lazily, the way Netty's native transports
 * do: nothing is loaded until one of these methods (or a class of {@code dev.rdmarpc.ibverbs.raw})
 * is first used, so a TCP-only application never needs libibverbs.
 *
 * <p>Check {@link #ensureAvailability()} (or {@link #isAvailable()}) before touching the raw
 * bindings: when the library is missing, that gives one clear {@link VerbsUnavailableException},
 * where a raw class would fail with an {@link ExceptionInInitializerError}. All methods are
 * thread-safe; the answer is computed once per JVM.
 */
public final class Ibverbs {
    /** The shared object loaded, by soname, on first use. */
    public static final String SONAME = "libibverbs.so.1";
    /** The Debian/Ubuntu package that installs {@link #SONAME}. */
    public static final String PACKAGE = "libibverbs1";
    /** The Debian/Ubuntu package with the RDMA device drivers (providers) libibverbs loads. */
    public static final String PROVIDERS_PACKAGE = "ibverbs-providers";

    private Ibverbs() {
    }

    private static final class Probe {
        static final VerbsUnavailableException CAUSE = probe(SONAME);
    }

    /** Whether libibverbs was loaded. It says nothing about RDMA devices (there may be none). */
    public static boolean isAvailable() {
        return Probe.CAUSE == null;
    }

    /**
     * Returns normally when libibverbs is loaded.
     *
     * @throws VerbsUnavailableException naming the library and the package that provides it
     */
    public static void ensureAvailability() {
        VerbsUnavailableException cause = Probe.CAUSE;
        if (cause != null) {
            throw new VerbsUnavailableException(cause.getMessage(), cause.getCause());
        }
    }

    /** Why libibverbs is not available, or {@code null} when it is. */
    public static Throwable unavailabilityCause() {
        return Probe.CAUSE;
    }

    /**
     * Loads {@code soname} (kept loaded for the life of the JVM, as the raw bindings will load it
     * again anyway) and says why that failed, or returns {@code null}.
     */
    static VerbsUnavailableException probe(String soname) {
        try {
            SymbolLookup.libraryLookup(soname, Arena.global());
            return null;
        } catch (IllegalArgumentException e) {
            return new VerbsUnavailableException("RDMA verbs library " + soname + " could not be loaded; install the "
                    + PACKAGE + " package (Debian/Ubuntu; the device drivers come with " + PROVIDERS_PACKAGE
                    + "): " + e.getMessage(), e);
        } catch (IllegalCallerException e) {
            return new VerbsUnavailableException("native access is not enabled for module dev.rdmarpc.ibverbs, so "
                    + soname + " cannot be loaded; run java with --enable-native-access=dev.rdmarpc.ibverbs"
                    + " (ALL-UNNAMED on the class path)", e);
        }
    }
}
