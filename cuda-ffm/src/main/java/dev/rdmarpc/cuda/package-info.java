/**
 * The CUDA driver API the Java way, over the generated bindings in {@code dev.rdmarpc.cuda.raw}.
 *
 * <ul>
 *   <li>{@link dev.rdmarpc.cuda.Cuda}: is {@code libcuda.so.1} there ({@code isAvailable},
 *       {@code ensureAvailability}, {@code unavailabilityCause}), {@code cuInit}, and {@code CUresult}
 *       checks that throw {@link dev.rdmarpc.cuda.CudaException} with the driver's own error name and
 *       text.</li>
 *   <li>{@link dev.rdmarpc.cuda.CudaDevice}: the GPUs, with name, PCI bus id, memory, and dma-buf /
 *       GPUDirect RDMA support.</li>
 *   <li>{@link dev.rdmarpc.cuda.CudaContext}: one reference to a GPU's primary context; it makes
 *       {@link dev.rdmarpc.cuda.DeviceBuffer device memory}, {@link dev.rdmarpc.cuda.PinnedHostMemory
 *       pinned} and {@link dev.rdmarpc.cuda.HostRegistration registered} host memory,
 *       {@link dev.rdmarpc.cuda.CudaStream streams} and {@link dev.rdmarpc.cuda.CudaEvent events},
 *       copies by address, and {@link dev.rdmarpc.cuda.DmaBuf dma-buf} exports.</li>
 * </ul>
 *
 * <p>Without the driver every entry point throws {@link dev.rdmarpc.cuda.CudaDriverNotFoundException}
 * ("CUDA driver not found: ..."), and nothing is loaded until one is called, so code that never
 * touches a GPU never needs the driver. Every native object has one owner and closes once; closing a
 * context closes what was made from it. Needs {@code --enable-native-access=dev.rdmarpc.cuda}.
 */
package dev.rdmarpc.cuda;
