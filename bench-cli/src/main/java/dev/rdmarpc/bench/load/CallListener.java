package dev.rdmarpc.bench.load;

/** Hears the outcome of one {@link EchoCaller#call}. Implementations are preallocated and reused. */
public interface CallListener {

    /** The response arrived and had the expected length. */
    void onResponse();

    /** The call failed, or its response was not what the echo contract says. */
    void onFailure(Throwable cause);
}
