package dev.rdmarpc.rpc.codec;

import java.lang.foreign.MemorySegment;

/**
 * Encodes values of type {@code T} into native memory and decodes them back: the payload of a
 * request or a response.
 *
 * <p>The RPC layer calls {@link #encodedSize} first, reserves exactly that many bytes in a pooled
 * frame buffer, then calls {@link #encode} to write them in place, so a codec never allocates a
 * buffer of its own. Decoding gets the exact payload range. Implementations must be stateless (or
 * otherwise thread-safe): one codec serves every connection and thread at once.
 *
 * <p>A codec for your own type, as a flyweight over the payload, might look like this:
 * {@snippet :
 * record Point(int x, int y) {}
 * Codec<Point> POINT = new Codec<>() {
 *     public int encodedSize(Point p) { return 8; }
 *     public void encode(Point p, MemorySegment dst, long offset) {
 *         dst.set(Codecs.INT_LE, offset, p.x());
 *         dst.set(Codecs.INT_LE, offset + 4, p.y());
 *     }
 *     public Point decode(MemorySegment src, long offset, int length) {
 *         Codecs.requireLength(length, 8);
 *         return new Point(src.get(Codecs.INT_LE, offset), src.get(Codecs.INT_LE, offset + 4));
 *     }
 * };
 * }
 *
 * @param <T> the value type
 */
public interface Codec<T> {
    /**
     * The exact number of bytes {@link #encode} will write for {@code value}.
     *
     * @param value the value (may be null if the codec accepts null)
     * @return the size in bytes, at least 0
     */
    int encodedSize(T value);

    /**
     * Writes {@code value} into {@code dst} at {@code offset}, exactly {@link #encodedSize} bytes.
     *
     * @param value  the value
     * @param dst    destination memory
     * @param offset where to start writing
     */
    void encode(T value, MemorySegment dst, long offset);

    /**
     * Reads a value from {@code length} bytes of {@code src} starting at {@code offset}. Must not read
     * outside that range.
     *
     * @param src    source memory
     * @param offset where the payload starts
     * @param length payload length in bytes
     * @return the value
     * @throws IllegalArgumentException (or another runtime exception) when the bytes are malformed;
     *                                  the RPC layer reports it as a protocol error of that call
     */
    T decode(MemorySegment src, long offset, int length);

    /**
     * Whether {@link #decode} returns objects that still point into {@code src} (zero-copy views).
     * Such values are only valid while the source buffer is; the RPC layer copies the payload into
     * memory the value can own wherever it must outlive the network buffer (for example the
     * response of a {@code CompletableFuture} call).
     *
     * @return true for view-returning codecs; false by default
     */
    default boolean decodesToView() {
        return false;
    }
}
