/**
 * What the packages of {@code dev.rdmarpc.rpc} share and users do not see (not exported): which of the
 * optional modules are present ({@link dev.rdmarpc.rpc.internal.OptionalModule}), the builders' checks of
 * their settings ({@link dev.rdmarpc.rpc.internal.Settings}), their way to the RDMA transport
 * ({@link dev.rdmarpc.rpc.internal.RdmaSupport}) and the API's check that an I/O thread may touch a
 * caller's memory ({@link dev.rdmarpc.rpc.internal.Segments}).
 */
package dev.rdmarpc.rpc.internal;
