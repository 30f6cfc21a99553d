package dev.rdmarpc.cuda;

/**
 * A CUDA driver failure: the operation, its {@code CUresult} and the driver's own name for it
 * ({@code CUDA_ERROR_OUT_OF_MEMORY}, ...). The base of every exception of this module.
 */
public class CudaException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final String operation;
    private final int result;
    private final String errorName;

    /**
     * A driver call that returned an error.
     *
     * @param operation   the driver function (e.g. {@code cuMemAlloc_v2})
     * @param result      its {@code CUresult}
     * @param errorName   the driver's name for {@code result} ({@code cuGetErrorName})
     * @param errorString the driver's description ({@code cuGetErrorString}), or {@code null}
     */
    public CudaException(String operation, int result, String errorName, String errorString) {
        super(operation + " failed: " + errorName + " (" + result + ")" + (errorString == null ? "" : ": " + errorString));
        this.operation = operation;
        this.result = result;
        this.errorName = errorName;
    }

    /** A failure that is not a driver result (e.g. no driver). */
    public CudaException(String message, Throwable cause) {
        super(message, cause);
        this.operation = null;
        this.result = -1;
        this.errorName = null;
    }

    /** The driver function that failed, or {@code null} when the failure is not a driver result. */
    public String operation() {
        return operation;
    }

    /** The {@code CUresult}, or -1 when the failure is not a driver result. */
    public int result() {
        return result;
    }

    /** The driver's name for {@link #result()}, or {@code null} when the failure is not a driver result. */
    public String errorName() {
        return errorName;
    }
}
