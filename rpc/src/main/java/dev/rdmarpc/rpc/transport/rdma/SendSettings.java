package dev.rdmarpc.rpc.transport.rdma;

import dev.rdmarpc.rpc.settings.SettingsTable;
import java.util.function.Consumer;

/**
 * The send side of each connection ({@code rdmarpc.rdma.send.*}). Held by an {@link RdmaConfig},
 * edited through {@link RdmaConfig#send(Consumer)}.
 */
public final class SendSettings {
    static final SettingsTable<SendSettings> SETTINGS = new SettingsTable<SendSettings>("Send", "rdmarpc.rdma.send.")
            .add("window", SettingsTable::parseInt, SendSettings::window, SendSettings::window)
            .add("inlineThreshold", SettingsTable::parseIntBytes, SendSettings::inlineThreshold, SendSettings::inlineThreshold)
            .add("writeHighWaterMark", SettingsTable::parseBytes, SendSettings::writeHighWaterMark, SendSettings::writeHighWaterMark)
            .add("rendezvousThreshold", SettingsTable::parseIntBytes, SendSettings::rendezvousThreshold,
                    SendSettings::rendezvousThreshold);

    private int window = RdmaConfig.DEFAULT_SEND_WINDOW;
    private int rendezvousThreshold = RdmaConfig.DEFAULT_RENDEZVOUS_THRESHOLD;
    private int inlineThreshold = RdmaConfig.DEFAULT_INLINE_THRESHOLD;
    private long writeHighWaterMark = RdmaConfig.DEFAULT_WRITE_HIGH_WATER_MARK;

    SendSettings() {
    }

    /**
     * @param n SENDs in flight per connection, in [1, 1024]; default 4 (up to 1 MiB at the default
     *          chunk size). While all are in flight, small messages are coalesced into one chunk.
     * @return this
     */
    public SendSettings window(int n) {
        this.window = n;
        return this;
    }

    /**
     * @param bytes messages up to this size are sent inline (copied into the work request, no DMA
     *              read of the buffer), in [0, 1024]; default 256. The device's own limit applies
     *              on top; 0 disables inline sends.
     * @return this
     */
    public SendSettings inlineThreshold(int bytes) {
        this.inlineThreshold = bytes;
        return this;
    }

    /**
     * @param bytes bytes of responses committed but not yet sent on one accepted (server)
     *              connection above which it stops handling requests (their receives are not
     *              posted again, so the client runs out of credits) until they drain to half the
     *              mark; default 8 MiB. Client connections never stop handling responses: their
     *              requests are bounded by the RPC client before they are queued.
     * @return this
     */
    public SendSettings writeHighWaterMark(long bytes) {
        this.writeHighWaterMark = bytes;
        return this;
    }

    /**
     * @param bytes frames of at least this many bytes are not sent but read by the peer: the sender
     *              makes a key for the frame's memory alone (binds a memory window to it; on
     *              Soft-RoCE registers it on its own) and sends its address and key, the peer pulls
     *              the frame with RDMA READ straight into the buffer its handler gets (no
     *              reassembly copy), tells the sender it is done, and the sender revokes the key
     *              before the memory is used again (docs/rdma.md, "Rendezvous"). Used only when
     *              both sides enable it; 0 disables it on this side. At least 4 KiB when not 0
     *              ({@link RdmaConfig#SUGGESTED_RENDEZVOUS_THRESHOLD}, 512 KiB, is what its tests use);
     *              default 1 MiB ({@link RdmaConfig#DEFAULT_RENDEZVOUS_THRESHOLD}: the smallest size
     *              at which it was measured at least level with split SENDs in the Soft-RoCE VM).
     * @return this
     */
    public SendSettings rendezvousThreshold(int bytes) {
        this.rendezvousThreshold = bytes;
        return this;
    }

    /** @return the rendezvous threshold, 0 when disabled */
    public int rendezvousThreshold() {
        return rendezvousThreshold;
    }

    /** @return the send window */
    public int window() {
        return window;
    }

    /** @return the inline threshold */
    public int inlineThreshold() {
        return inlineThreshold;
    }

    /** @return the write high-water mark */
    public long writeHighWaterMark() {
        return writeHighWaterMark;
    }

    void check() {
        if (window < 1 || window > 1024) {
            throw new IllegalArgumentException("send.window must be in [1, 1024]: " + window);
        }
        if (inlineThreshold < 0 || inlineThreshold > 1024) {
            throw new IllegalArgumentException("send.inlineThreshold must be in [0, 1024]: " + inlineThreshold);
        }
        if (writeHighWaterMark < 1) {
            throw new IllegalArgumentException("send.writeHighWaterMark must be positive: " + writeHighWaterMark);
        }
        if (rendezvousThreshold != 0 && rendezvousThreshold < 4096) {
            throw new IllegalArgumentException("send.rendezvousThreshold must be 0 (off) or at least 4 KiB: "
                    + rendezvousThreshold);
        }
    }

    /** @return an independent copy */
    public SendSettings copy() {
        SendSettings c = new SendSettings();
        SETTINGS.copy(this, c);
        return c;
    }

    @Override
    public String toString() {
        return SETTINGS.toString(this);
    }
}
