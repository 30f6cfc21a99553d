package dev.rdmarpc.cuda;

/**
 * The CUDA driver library cannot be loaded. The message starts with "CUDA driver not found" and
 * names the library and who provides it.
 */
public class CudaDriverNotFoundException extends CudaException {
    private static final long serialVersionUID = 1L;

    /**
     * @param message starts with "CUDA driver not found", names the library and who provides it
     * @param cause   what the JDK reported
     */
    public CudaDriverNotFoundException(String message, Throwable cause) {
        super(message, cause);
    }
}
