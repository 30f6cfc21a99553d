package dev.rdmarpc.ibverbs;

/** libibverbs cannot be loaded; the message names the library and the package that provides it. */
public class VerbsUnavailableException extends VerbsException {
    private static final long serialVersionUID = 1L;

    /**
     * @param message names the library and the package that provides it
     * @param cause   what the JDK reported
     */
    public VerbsUnavailableException(String message, Throwable cause) {
        super(message, cause);
    }
}
