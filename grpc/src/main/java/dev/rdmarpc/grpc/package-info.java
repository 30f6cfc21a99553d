/**
 * gRPC over rdmarpc: {@link dev.rdmarpc.grpc.RdmarpcChannelBuilder} for channels,
 * {@link dev.rdmarpc.grpc.RdmarpcServerBuilder} for servers, {@link dev.rdmarpc.grpc.MessageCopies}
 * to count the copies a message costs. See docs/grpc.md for what works and what does not.
 */
package dev.rdmarpc.grpc;
