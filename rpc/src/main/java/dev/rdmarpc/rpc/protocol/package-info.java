/**
 * The wire protocol: the frame layout ({@link dev.rdmarpc.rpc.protocol.FrameDescriptor}), the header
 * flyweight ({@link dev.rdmarpc.rpc.protocol.FrameHeader}) and the validation every transport applies
 * to bytes from the network. The human-readable description is {@code docs/protocol.md}.
 */
package dev.rdmarpc.rpc.protocol;
