/**
 * GPU memory in the RPC: device attachments and how their bytes travel.
 *
 * <ul>
 *   <li>{@link dev.rdmarpc.rpc.gpu.GpuStaging}: makes {@link dev.rdmarpc.rpc.Attachment#device device
 *       attachments} of one GPU and moves their bytes through pinned host memory for TCP, double
 *       buffered on a stream so that GPU copies overlap the socket writes.</li>
 *   <li>{@link dev.rdmarpc.rpc.gpu.GpuBufferPool}: the seam for the RDMA transport: GPU buffers
 *       registered with the NIC as {@link dev.rdmarpc.rpc.gpu.GpuDirectSelector} decides (dma-buf,
 *       else peer-memory, else staged, with a {@link dev.rdmarpc.rpc.gpu.GpuDirectDecision} that says
 *       why), and messages of two SGEs: headers in host memory, the attachment on the GPU.
 *       Registration and SGEs go through the verbs layer ({@link dev.rdmarpc.rpc.gpu.VerbsNicRegistrar}
 *       over a {@code ProtectionDomain}, {@link dev.rdmarpc.rpc.gpu.GpuBuffer#writeSges} into a
 *       {@code SendWorkRequest}); CUDA through the CUDA layer; no class here touches a {@code raw}
 *       binding.</li>
 * </ul>
 *
 * <p>Nothing here is loaded unless an application uses GPU attachments. Module {@code dev.rdmarpc.cuda}
 * is optional to {@code dev.rdmarpc.rpc} ({@code requires static}): without it
 * {@link dev.rdmarpc.rpc.gpu.GpuStaging#create(int)} throws an {@link IllegalStateException} naming
 * it; without the CUDA driver every entry point throws {@link dev.rdmarpc.cuda.CudaDriverNotFoundException}.
 */
package dev.rdmarpc.rpc.gpu;
