/**
 * The one buffer abstraction shared by every transport: a {@link dev.rdmarpc.rpc.buffer.BufferPool}
 * of fixed-size chunks carved from large native slabs, plus a large-buffer path for frames bigger
 * than a chunk.
 *
 * <p>Frames are encoded straight into pooled {@link java.lang.foreign.MemorySegment}s and decoded by
 * flyweights over them; nothing on the data path copies a payload into a heap array. A transport
 * that must register memory with a device (RDMA) installs a {@link dev.rdmarpc.rpc.buffer.SlabListener}
 * and registers each slab once, when it is created, instead of each buffer on each use.
 */
package dev.rdmarpc.rpc.buffer;
