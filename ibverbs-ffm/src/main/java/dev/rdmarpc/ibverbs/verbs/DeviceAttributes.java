package dev.rdmarpc.ibverbs.verbs;

/**
 * The capabilities of an opened device ({@code struct ibv_device_attr}, {@link Context#queryDevice()}).
 *
 * @param firmwareVersion        {@code fw_ver}
 * @param nodeGuid               node GUID, as a big-endian number
 * @param systemImageGuid        system image GUID, as a big-endian number
 * @param maxMrSize              largest memory region, bytes (a {@code uint64_t}: -1 means 2^64 - 1, no limit)
 * @param pageSizeCap            supported page sizes (bit mask)
 * @param vendorId               IEEE vendor id
 * @param vendorPartId           vendor part id
 * @param hardwareVersion        hardware version
 * @param maxQp                  queue pairs
 * @param maxQpWr                work requests per queue
 * @param deviceCapFlags         {@code enum ibv_device_cap_flags} bits
 * @param maxSge                 scatter/gather entries per send or receive work request
 * @param maxSgeRd               scatter entries per RDMA READ
 * @param maxCq                  completion queues
 * @param maxCqe                 entries per completion queue
 * @param maxMr                  memory regions
 * @param maxPd                  protection domains
 * @param maxQpRdAtom            outstanding RDMA READs/atomics a queue pair may receive (responder)
 * @param maxQpInitRdAtom        outstanding RDMA READs/atomics a queue pair may issue (initiator)
 * @param maxSrq                 shared receive queues
 * @param maxSrqWr               work requests per shared receive queue
 * @param maxSrqSge              scatter entries per shared receive work request
 * @param maxAh                  address handles
 * @param atomicCap              {@code enum ibv_atomic_cap}
 * @param localCaAckDelay        local CA ack delay
 * @param physicalPortCount      number of ports (numbered from 1)
 */
public record DeviceAttributes(String firmwareVersion, long nodeGuid, long systemImageGuid, long maxMrSize,
                               long pageSizeCap, int vendorId, int vendorPartId, int hardwareVersion, int maxQp,
                               int maxQpWr, int deviceCapFlags, int maxSge, int maxSgeRd, int maxCq, int maxCqe,
                               int maxMr, int maxPd, int maxQpRdAtom, int maxQpInitRdAtom, int maxSrq, int maxSrqWr,
                               int maxSrqSge, int maxAh, int atomicCap, int localCaAckDelay, int physicalPortCount) {
}
