/**
 * The RDMA connection manager in Java: connection setup for reliable (RC) queue pairs over IP
 * addresses, the RDMA counterpart of sockets, over the generated bindings in
 * {@code dev.rdmarpc.rdmacm.raw}.
 *
 * <ul>
 *   <li>{@link dev.rdmarpc.rdmacm.EventChannel}: the channel events arrive on;
 *       {@link dev.rdmarpc.rdmacm.EventChannel#poll(java.time.Duration)} returns each as a
 *       {@link dev.rdmarpc.rdmacm.CmEvent} value (type {@link dev.rdmarpc.rdmacm.CmEventType},
 *       status, id, private data, {@link dev.rdmarpc.rdmacm.ConnectionParams}), already
 *       acknowledged.</li>
 *   <li>{@link dev.rdmarpc.rdmacm.CmId}: bind, listen, resolve address and route, connect, accept,
 *       reject, disconnect, and the queue pair of the connection: one made on the id
 *       ({@code createQueuePair}, which reports the sizes the device granted), or one the caller
 *       created and drives with the CM's attributes ({@code moveQueuePair}, {@code establish}).</li>
 *   <li>One thread can wait on an event channel and completion channels together:
 *       {@link dev.rdmarpc.ibverbs.verbs.FdPoller} over their {@code fd()}s.</li>
 *   <li>Ownership: every resource is {@link java.lang.AutoCloseable}, closes once, and refuses to
 *       close before what depends on it (queue pair, then id, then channel);
 *       {@link dev.rdmarpc.rdmacm.RdmaCmCounters} counts what is open.</li>
 *   <li>Errors: a failed call throws {@link dev.rdmarpc.rdmacm.RdmaCmException} naming the C
 *       function and errno; an error event becomes a {@link dev.rdmarpc.rdmacm.CmEventException}
 *       naming the event and errno.</li>
 *   <li>Below them: lazy availability ({@link dev.rdmarpc.rdmacm.Rdmacm}) and the raw calls with
 *       errno captured ({@link dev.rdmarpc.rdmacm.RdmaCmNative}).</li>
 * </ul>
 */
package dev.rdmarpc.rdmacm;
