package dev.rdmarpc.cuda;

import dev.rdmarpc.cuda.raw.cuda_h;

import java.lang.foreign.AddressLayout;
import java.lang.foreign.Arena;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;

/**
 * Whether the CUDA driver ({@code libcuda.so.1}) can be used in this JVM, found out lazily (Netty
 * style), and the conversion of a driver result ({@code CUresult}) into a {@link CudaException}.
 * Nothing is loaded until one of these methods or a class of {@code dev.rdmarpc.cuda.raw} is first
 * used, so an application without GPUs never needs the driver.
 *
 * <p>Check {@link #ensureAvailability()} (or {@link #isAvailable()}) before touching the raw
 * bindings: without the driver that gives one clear {@link CudaDriverNotFoundException} ("CUDA
 * driver not found: ...") instead of an {@link ExceptionInInitializerError}. Thread-safe; the
 * answer is computed once per JVM. A loadable driver says nothing about devices: {@code cuInit}
 * then reports {@code CUDA_ERROR_NO_DEVICE} where there is no GPU.
 */
public final class Cuda {
    /** The shared object loaded, by soname, on first use. */
    public static final String SONAME = "libcuda.so.1";
    /** Who installs {@link #SONAME}. */
    public static final String PROVIDED_BY = "the NVIDIA driver (Debian/Ubuntu: libcuda1 / libnvidia-compute-*)";

    private static final AddressLayout C_STRING =
            ADDRESS.withTargetLayout(MemoryLayout.sequenceLayout(Long.MAX_VALUE, JAVA_BYTE));

    private Cuda() {
    }

    private static final class Probe {
        static final CudaDriverNotFoundException CAUSE = probe(SONAME);
    }

    /** Whether the CUDA driver library was loaded. */
    public static boolean isAvailable() {
        return Probe.CAUSE == null;
    }

    /**
     * Returns normally when the CUDA driver library is loaded.
     *
     * @throws CudaDriverNotFoundException "CUDA driver not found: ...", naming the library and who provides it
     */
    public static void ensureAvailability() {
        CudaDriverNotFoundException cause = Probe.CAUSE;
        if (cause != null) {
            throw new CudaDriverNotFoundException(cause.getMessage(), cause.getCause());
        }
    }

    /** Why the CUDA driver is not available, or {@code null} when it is. */
    public static Throwable unavailabilityCause() {
        return Probe.CAUSE;
    }

    /**
     * Checks a driver result: returns when it is {@code CUDA_SUCCESS} (0), else throws.
     *
     * @param operation the driver function that returned it (e.g. {@code cuMemAlloc_v2})
     * @param result    its {@code CUresult}
     * @throws CudaException with the driver's name and text for {@code result}
     */
    public static void check(String operation, int result) {
        if (result != 0) {
            throw new CudaException(operation, result, errorName(result), errorString(result));
        }
    }

    /**
     * The driver's name of a {@code CUresult} ({@code cuGetErrorName}, e.g.
     * {@code CUDA_ERROR_OUT_OF_MEMORY}), or {@code "CUresult <n>"} for a value the driver does not know.
     */
    public static String errorName(int result) {
        ensureAvailability();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment text = arena.allocate(C_STRING);
            if (cuda_h.cuGetErrorName(result, text) != 0) {
                return "CUresult " + result;
            }
            return text.get(C_STRING, 0).getString(0);
        }
    }

    /** The driver's description of a {@code CUresult} ({@code cuGetErrorString}), or {@code null} if unknown. */
    public static String errorString(int result) {
        ensureAvailability();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment text = arena.allocate(C_STRING);
            if (cuda_h.cuGetErrorString(result, text) != 0) {
                return null;
            }
            return text.get(C_STRING, 0).getString(0);
        }
    }

    /** {@code cuInit(0)}, run once per JVM: its result is sticky in the driver anyway. */
    private static final class Init {
        static final int RESULT = cuda_h.cuInit(0);
    }

    /**
     * Initialises the driver API ({@code cuInit(0)}, once per JVM; later calls return at once or
     * throw the same failure again). Every entry point of this package calls it first.
     *
     * @throws CudaDriverNotFoundException when {@code libcuda.so.1} cannot be loaded
     * @throws CudaException               when {@code cuInit} fails, e.g. {@code CUDA_ERROR_NO_DEVICE}
     *                                     (a driver without a GPU)
     */
    public static void init() {
        ensureAvailability();
        check("cuInit", Init.RESULT);
    }

    /**
     * The CUDA version the driver supports ({@code cuDriverGetVersion}): 1000 * major + 10 * minor,
     * e.g. 13000 for CUDA 13.0.
     *
     * @throws CudaDriverNotFoundException when {@code libcuda.so.1} cannot be loaded
     */
    public static int driverVersion() {
        ensureAvailability();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment v = arena.allocate(JAVA_INT);
            check("cuDriverGetVersion", cuda_h.cuDriverGetVersion(v));
            return v.get(JAVA_INT, 0);
        }
    }

    /** Loads {@code soname} for the life of the JVM and says why that failed, or returns {@code null}. */
    static CudaDriverNotFoundException probe(String soname) {
        try {
            SymbolLookup.libraryLookup(soname, Arena.global());
            return null;
        } catch (IllegalArgumentException e) {
            return new CudaDriverNotFoundException("CUDA driver not found: " + soname + " could not be loaded; it is"
                    + " installed by " + PROVIDED_BY + ": " + e.getMessage(), e);
        } catch (IllegalCallerException e) {
            return new CudaDriverNotFoundException("CUDA driver not usable: native access is not enabled for module"
                    + " dev.rdmarpc.cuda; run java with --enable-native-access=dev.rdmarpc.cuda"
                    + " (ALL-UNNAMED on the class path)", e);
        }
    }
}
