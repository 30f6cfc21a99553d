/**
 * Machinery shared by both transports (not exported): {@link dev.rdmarpc.rpc.transport.frame.EndpointChecks}
 * checks the arguments of listen and connect alike; {@link
 * dev.rdmarpc.rpc.transport.frame.FrameReassembler} completes a frame larger than a receive buffer,
 * whether its pieces arrive as RDMA messages or as socket reads.
 */
package dev.rdmarpc.rpc.transport.frame;
