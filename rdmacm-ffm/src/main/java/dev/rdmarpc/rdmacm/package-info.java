/**
 * Hand-written companions of the generated librdmacm bindings in {@code dev.rdmarpc.rdmacm.raw}:
 * lazy availability ({@link dev.rdmarpc.rdmacm.Rdmacm}) and the connection-manager calls with
 * errno captured ({@link dev.rdmarpc.rdmacm.RdmaCmNative}, failures as
 * {@link dev.rdmarpc.rdmacm.RdmaCmException}).
 */
package dev.rdmarpc.rdmacm;
