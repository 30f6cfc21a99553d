/**
 * Hand-written companions of the generated libibverbs bindings in {@code dev.rdmarpc.ibverbs.raw}:
 * what jextract cannot produce.
 *
 * <ul>
 *   <li>{@link dev.rdmarpc.ibverbs.Ibverbs}: is libibverbs loadable? Checked lazily, once.</li>
 *   <li>{@link dev.rdmarpc.ibverbs.VerbsNative}: the calls that report failure through errno, with
 *       errno captured and turned into a {@link dev.rdmarpc.ibverbs.VerbsException}.</li>
 *   <li>{@link dev.rdmarpc.ibverbs.VerbsInline}: the {@code static inline} data path of verbs.h
 *       ({@code ibv_post_send}, {@code ibv_poll_cq}, ...) through {@code struct ibv_context_ops}.</li>
 * </ul>
 */
package dev.rdmarpc.ibverbs;
