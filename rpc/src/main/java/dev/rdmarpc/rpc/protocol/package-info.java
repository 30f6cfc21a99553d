/**
 * The wire protocol: the frame layout ({@link dev.rdmarpc.rpc.protocol.FrameDescriptor}), the header
 * flyweights ({@link dev.rdmarpc.rpc.protocol.FrameHeaderEncoder} writes one field by field,
 * {@link dev.rdmarpc.rpc.protocol.FrameHeader} reads them) and the validation every transport applies
 * to bytes from the network. The human-readable description is {@code docs/protocol.md}.
 */
package dev.rdmarpc.rpc.protocol;
