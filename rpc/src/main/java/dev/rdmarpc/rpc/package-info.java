/**
 * The RPC API: define {@link dev.rdmarpc.rpc.Method}s with {@link dev.rdmarpc.rpc.codec.Codec}s,
 * serve them with an {@link dev.rdmarpc.rpc.RpcServer}, call them with an
 * {@link dev.rdmarpc.rpc.RpcClient} or an {@link dev.rdmarpc.rpc.RpcClientPool}. Failures are
 * {@link dev.rdmarpc.rpc.RpcException}s with a {@link dev.rdmarpc.rpc.Status}.
 *
 * <p>TCP is the default transport ({@link dev.rdmarpc.rpc.transport.tcp.TcpTransport}); any
 * {@link dev.rdmarpc.rpc.transport.Transport} can be passed to the builders.
 */
package dev.rdmarpc.rpc;
