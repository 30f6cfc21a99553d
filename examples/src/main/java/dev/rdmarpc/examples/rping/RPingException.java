package dev.rdmarpc.examples.rping;

/** A failed rping run; the message is what the C tool would print on its way out. */
final class RPingException extends Exception {
    RPingException(String message) {
        super(message);
    }
}
