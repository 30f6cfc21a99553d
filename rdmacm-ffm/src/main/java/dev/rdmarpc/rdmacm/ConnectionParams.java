package dev.rdmarpc.rdmacm;

/**
 * The parameters of {@code struct rdma_conn_param} other than the private data: what a client
 * offers in {@link CmId#connect}, what a server answers in {@link CmId#accept}, and what the other
 * side sent, as a {@link CmEvent} reports it.
 *
 * <p>Immutable; start from {@link #DEFAULT} and change fields with the {@code with*} methods. Each
 * value is checked when the record is made, so a bad value fails here with the field's name rather
 * than later in the kernel.
 *
 * @param responderResources RDMA READ / atomic operations the local side accepts in flight as the
 *                           target (0..255; {@link #MAX} asks for the device's maximum)
 * @param initiatorDepth     RDMA READ / atomic operations the local side issues in flight
 *                           (0..255; {@link #MAX} asks for the device's maximum)
 * @param flowControl        whether the hardware does end-to-end flow control (0 or 1; ignored by
 *                           RoCE)
 * @param retryCount         transport retries after a timeout (0..7)
 * @param rnrRetryCount      retries after a receiver-not-ready NAK (0..7; 7 retries forever)
 * @param srq                whether the QP uses a shared receive queue (honoured only when the id
 *                           has no QP; librdmacm fills it from the id's QP otherwise)
 * @param qpNumber           the QP number (honoured only when the id has no QP; librdmacm fills
 *                           it from the id's QP otherwise); 24 bits
 */
public record ConnectionParams(int responderResources, int initiatorDepth, int flowControl, int retryCount,
                               int rnrRetryCount, boolean srq, int qpNumber) {

    /** {@code RDMA_MAX_RESP_RES} / {@code RDMA_MAX_INIT_DEPTH}: "as many as the device allows". */
    public static final int MAX = 0xFF;

    /**
     * The defaults: 1 responder resource, initiator depth 1, flow control 1, 7 retries, 7 RNR
     * retries (retry forever), no SRQ, QP number 0 (taken from the id's QP).
     */
    public static final ConnectionParams DEFAULT = new ConnectionParams(1, 1, 1, 7, 7, false, 0);

    /** Checks every field. */
    public ConnectionParams {
        range("responderResources", responderResources, 0, 255);
        range("initiatorDepth", initiatorDepth, 0, 255);
        range("flowControl", flowControl, 0, 1);
        range("retryCount", retryCount, 0, 7);
        range("rnrRetryCount", rnrRetryCount, 0, 7);
        range("qpNumber", qpNumber, 0, 0xFF_FFFF);
    }

    /** A copy with {@link #responderResources()} changed. */
    public ConnectionParams withResponderResources(int value) {
        return new ConnectionParams(value, initiatorDepth, flowControl, retryCount, rnrRetryCount, srq, qpNumber);
    }

    /** A copy with {@link #initiatorDepth()} changed. */
    public ConnectionParams withInitiatorDepth(int value) {
        return new ConnectionParams(responderResources, value, flowControl, retryCount, rnrRetryCount, srq, qpNumber);
    }

    /** A copy with {@link #flowControl()} changed. */
    public ConnectionParams withFlowControl(int value) {
        return new ConnectionParams(responderResources, initiatorDepth, value, retryCount, rnrRetryCount, srq, qpNumber);
    }

    /** A copy with {@link #retryCount()} changed. */
    public ConnectionParams withRetryCount(int value) {
        return new ConnectionParams(responderResources, initiatorDepth, flowControl, value, rnrRetryCount, srq, qpNumber);
    }

    /** A copy with {@link #rnrRetryCount()} changed. */
    public ConnectionParams withRnrRetryCount(int value) {
        return new ConnectionParams(responderResources, initiatorDepth, flowControl, retryCount, value, srq, qpNumber);
    }

    /** A copy with {@link #srq()} changed. */
    public ConnectionParams withSrq(boolean value) {
        return new ConnectionParams(responderResources, initiatorDepth, flowControl, retryCount, rnrRetryCount, value, qpNumber);
    }

    /** A copy with {@link #qpNumber()} changed. */
    public ConnectionParams withQpNumber(int value) {
        return new ConnectionParams(responderResources, initiatorDepth, flowControl, retryCount, rnrRetryCount, srq, value);
    }

    private static void range(String name, int value, int min, int max) {
        if (value < min || value > max) {
            throw new IllegalArgumentException(name + " must be in " + min + ".." + max + ", was " + value);
        }
    }
}
