package dev.rdmarpc.ibverbs.verbs;

/**
 * An RDMA device as {@code ibv_get_device_list} lists it (see {@link Verbs#devices()}); open it with
 * {@link Context#open(String)}.
 *
 * @param name     the device name ({@code rxe0}, {@code mlx5_0})
 * @param guid     the node GUID, as the 64-bit number {@code ibv_devices} prints (network byte order
 *                 read as big-endian)
 * @param nodeType the kind of device
 * @param index    the kernel's device index ({@code ibv_get_device_index}), or -1 when unknown
 */
public record DeviceInfo(String name, long guid, NodeType nodeType, int index) {
    /** The GUID as {@code ibv_devinfo} prints it: {@code 0002:c903:00fe:1234}. */
    public String guidString() {
        return formatGuid(guid);
    }

    static String formatGuid(long guid) {
        String hex = String.format("%016x", guid);
        return hex.substring(0, 4) + ':' + hex.substring(4, 8) + ':' + hex.substring(8, 12) + ':' + hex.substring(12);
    }
}
