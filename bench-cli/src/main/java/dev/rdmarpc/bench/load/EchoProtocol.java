package dev.rdmarpc.bench.load;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/**
 * The echo contract every stack implements, so that a server needs no per-run configuration.
 *
 * <p>A request of at least {@link #HEADER_BYTES} bytes starts with the wanted response length as a
 * little-endian {@code int}; the server answers with that many bytes (the request itself when the two
 * lengths are equal). A shorter request is echoed as it is. The rest of the request is filler.
 *
 * <p>A server-streaming call ({@link Workload#stream}) opens with one request of {@link #HEADER_BYTES}
 * bytes, {@link #streamRequest}: the size of the messages wanted, read with {@link #responseBytes}. The
 * server then sends messages of that many bytes (one preallocated payload, sent again and again) until the
 * client cancels the stream.
 */
public final class EchoProtocol {
    /** Bytes of the response-length header at the start of a request. */
    public static final int HEADER_BYTES = 4;

    private static final ValueLayout.OfInt INT_LE = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    private EchoProtocol() {
    }

    /** Whether a request of this size can ask for a response of that size. */
    public static boolean canExpress(int requestBytes, int responseBytes) {
        return requestBytes >= HEADER_BYTES || requestBytes == responseBytes;
    }

    /** Fills a request segment: header, then a byte pattern. */
    public static void fillRequest(MemorySegment request, int responseBytes) {
        for (long i = 0; i < request.byteSize(); i++) {
            request.set(ValueLayout.JAVA_BYTE, i, (byte) i);
        }
        if (request.byteSize() >= HEADER_BYTES) {
            request.set(INT_LE, 0, responseBytes);
        }
    }

    /** Fills a request array: header, then a byte pattern. */
    public static byte[] newRequest(int requestBytes, int responseBytes) {
        byte[] request = new byte[requestBytes];
        fillRequest(MemorySegment.ofArray(request), responseBytes);
        return request;
    }

    /** The request that opens a server-streaming call for messages of {@code messageBytes} bytes. */
    public static byte[] streamRequest(int messageBytes) {
        return newRequest(HEADER_BYTES, messageBytes);
    }

    /** The response length a request asks for. */
    public static int responseBytes(MemorySegment request) {
        return request.byteSize() >= HEADER_BYTES ? request.get(INT_LE, 0) : (int) request.byteSize();
    }

    /** The response length a request asks for. */
    public static int responseBytes(byte[] request) {
        if (request.length < HEADER_BYTES) {
            return request.length;
        }
        return (request[0] & 0xff) | (request[1] & 0xff) << 8 | (request[2] & 0xff) << 16 | (request[3] & 0xff) << 24;
    }
}
