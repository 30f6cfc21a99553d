package dev.rdmarpc.bench;

/**
 * A failure the user can act on (a transport that is not available, a server that cannot be reached).
 * Its message is one sentence; the CLI prints it without a stack trace and exits with status 1.
 */
public final class BenchException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public BenchException(String sentence) {
        super(sentence);
    }

    public BenchException(String sentence, Throwable cause) {
        super(sentence, cause);
    }
}
