/**
 * Codecs: how a value becomes payload bytes in a {@link java.lang.foreign.MemorySegment} and back.
 * {@link dev.rdmarpc.rpc.codec.Codec} is the interface for your own types (flyweights welcome);
 * {@link dev.rdmarpc.rpc.codec.Codecs} has the built-in ones (String, byte[], zero-copy
 * MemorySegment views, primitives, records).
 */
package dev.rdmarpc.rpc.codec;
