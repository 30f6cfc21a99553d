/**
 * Hand-written companions of the generated CUDA driver API bindings in {@code dev.rdmarpc.cuda.raw}:
 * lazy availability of {@code libcuda.so.1} and {@code CUresult} checking
 * ({@link dev.rdmarpc.cuda.Cuda}), failures as {@link dev.rdmarpc.cuda.CudaException}.
 */
package dev.rdmarpc.cuda;
