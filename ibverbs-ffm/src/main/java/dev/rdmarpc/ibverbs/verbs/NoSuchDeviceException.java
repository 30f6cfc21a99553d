package dev.rdmarpc.ibverbs.verbs;

import dev.rdmarpc.ibverbs.VerbsException;

import java.util.List;

/** No RDMA device of the name asked for (or none active); the message names it and the devices there are. */
public class NoSuchDeviceException extends VerbsException {
    private static final long serialVersionUID = 1L;

    private final String device;

    /**
     * @param device    the name asked for, or {@code null} for "the first active device"
     * @param available the names of the devices there are
     */
    public NoSuchDeviceException(String device, List<String> available) {
        super((device == null ? "no active RDMA device" : "no RDMA device named '" + device + "'")
                + (available.isEmpty() ? " (no RDMA device found at all)" : " (devices: " + available + ")"), null);
        this.device = device;
    }

    /** The device name asked for, or {@code null} when any active device would have done. */
    public String device() {
        return device;
    }
}
