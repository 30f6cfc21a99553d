/**
 * What the packages of {@code dev.rdmarpc.rpc} share and users do not see (not exported): which of the
 * optional modules are present ({@link dev.rdmarpc.rpc.internal.OptionalModule}).
 */
package dev.rdmarpc.rpc.internal;
