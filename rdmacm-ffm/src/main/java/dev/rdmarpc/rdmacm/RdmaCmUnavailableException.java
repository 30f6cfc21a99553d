package dev.rdmarpc.rdmacm;

/** librdmacm cannot be loaded; the message names the library and the package that provides it. */
public class RdmaCmUnavailableException extends RdmaCmException {
    private static final long serialVersionUID = 1L;

    /**
     * @param message names the library and the package that provides it
     * @param cause   what the JDK reported
     */
    public RdmaCmUnavailableException(String message, Throwable cause) {
        super(message, cause);
    }
}
