package dev.rdmarpc.rpc.core;

import dev.rdmarpc.rpc.Attachment;
import dev.rdmarpc.rpc.DeviceStaging;
import dev.rdmarpc.rpc.transport.Connection;
import dev.rdmarpc.rpc.transport.ZeroCopySend;
import java.io.IOException;
import java.lang.foreign.MemorySegment;

/**
 * Sending and landing {@link Attachment.Location#DEVICE device} attachments over a transport that
 * carries host memory. Used by the client and server cores only for device attachments, so the
 * host-only path never reaches a {@link DeviceStaging} (nor the CUDA driver behind it).
 *
 * <p>Sending: the frame's header and payload are written in the claimed space first. Off the I/O
 * thread the frame is then committed as a <em>partial frame</em> ({@link ZeroCopySend#commitPartial}):
 * the transport starts sending the header and payload while the staging copies the attachment from
 * the GPU in chunks, and each finished chunk is reported written, and sent, at once. On the I/O
 * thread, or when the connection takes no partial frame (none at all, or not now), the attachment is copied under the claim and the frame
 * committed whole.
 */
public final class DeviceAttachments {
    private DeviceAttachments() {
    }

    /** Throws IllegalArgumentException unless {@code a} is device memory its staging can move. */
    public static void validate(Attachment a) {
        if (a.location() == Attachment.Location.DEVICE) {
            a.staging().validate(a.deviceId(), a.address(), a.length());
        }
    }

    /**
     * Fills the device attachment of the claimed frame and commits it.
     *
     * @param c          the connection, with the claim open
     * @param zeroCopy   {@code c} as a {@link ZeroCopySend}, or null when it is none
     * @param buf        {@code c.claimBuffer()}
     * @param frameStart the claimed offset
     * @param attOffset  where the attachment goes in {@code buf} (header and payload are written)
     * @param att        the device attachment
     * @throws RuntimeException when the copy fails: before the commit the claim is aborted; after a
     *                          partial commit the frame is abandoned, which closes the connection (the
     *                          peer never gets a frame with unwritten bytes)
     */
    public static void fillAndCommit(Connection c, ZeroCopySend zeroCopy, MemorySegment buf, long frameStart,
                                     long attOffset, Attachment att) {
        DeviceStaging staging = att.staging();
        int ready = (int) (attOffset - frameStart);
        int frameLength = ready + att.length();
        if (zeroCopy != null && !c.inEventLoop()) {
            long token = zeroCopy.commitPartial(ready);
            if (token >= 0) {
                try {
                    staging.copyToHost(att.address(), buf, attOffset, att.length(),
                            n -> zeroCopy.partialWritten(token, ready + (int) n));
                } catch (Throwable t) {
                    zeroCopy.abandonPartial(token, new IOException("GPU " + att.deviceId()
                            + " attachment could not be copied to host memory mid-frame: " + t.getMessage(), t));
                    throw t;
                }
                zeroCopy.partialWritten(token, frameLength); // the staging reported it all; make sure the frame is whole
                return;
            }
        }
        try {
            staging.copyToHost(att.address(), buf, attOffset, att.length(), n -> { });
        } catch (Throwable t) {
            c.abort();
            throw t;
        }
        c.commit();
    }

    /**
     * Copies a received attachment into the target the caller provided.
     *
     * @return the filled prefix of {@code target}
     */
    public static Attachment land(MemorySegment buf, long offset, int length, Attachment target) {
        if (target.location() == Attachment.Location.DEVICE) {
            target.staging().copyToDevice(buf, offset, target.address(), length);
        } else {
            MemorySegment.copy(buf, offset, target.segment(), 0, length);
        }
        return target.prefix(length);
    }
}
