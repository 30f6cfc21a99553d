package dev.rdmarpc.rpc.transport.rdma;

import static dev.rdmarpc.rpc.transport.rdma.RdmaRpcTest.ATTACHMENT_HASH;
import static dev.rdmarpc.rpc.transport.rdma.RdmaRpcTest.echoServer;
import static dev.rdmarpc.rpc.transport.rdma.RdmaRpcTest.hash;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.rdmarpc.rpc.Attachment;
import dev.rdmarpc.rpc.CallOptions;
import dev.rdmarpc.rpc.Method;
import dev.rdmarpc.rpc.RpcClient;
import dev.rdmarpc.rpc.RpcServer;
import dev.rdmarpc.rpc.codec.Codecs;
import dev.rdmarpc.testsupport.RdmaTest;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Rendezvous is on by default ({@link RdmaConfig#DEFAULT_RENDEZVOUS_THRESHOLD}, 1 MiB), in the
 * Soft-RoCE VM: two transports whose configuration leaves the send group as it is take rendezvous for
 * a call with a 1 MiB attachment, and split SENDs, copied into a reassembly buffer, for one whose
 * frame is below 1 MiB. What can fail here: the counts of frames sent and read by rendezvous on each
 * side, the bytes copied to reassemble, and the attachment's hash.
 */
@RdmaTest
@Timeout(300)
class DefaultRendezvousRdmaTest {

    private static MemorySegment pattern(Arena arena, int size, int seed) {
        MemorySegment s = arena.allocate(size);
        for (long i = 0; i + 8 <= size; i += 8) {
            s.set(ValueLayout.JAVA_LONG_UNALIGNED, i, (i + seed) * 0x9E3779B97F4A7C15L);
        }
        return s;
    }

    @Test
    void theDefaultConfigurationReadsAMebibyteAttachmentByRendezvousAndSplitsSmallerFrames() throws Exception {
        RdmaConfig config = RdmaTestEnv.smallConfig(); // the send group's defaults
        assertEquals(1 << 20, config.send().rendezvousThreshold(), "the default threshold");
        try (RdmaTransport serverT = RdmaTransport.create(config);
             RdmaTransport clientT = RdmaTransport.create(RdmaTestEnv.smallConfig());
             RpcServer server = echoServer().transport(serverT).start();
             RpcClient client = RpcClient.builder().address(server.address()).transport(clientT)
                     .defaultTimeout(Duration.ofSeconds(60)).connect();
             Arena arena = Arena.ofShared()) {
            Method<MemorySegment, Long> hashCall = Method.of(ATTACHMENT_HASH.name(), Codecs.SEGMENT, Codecs.LONG);
            // below the threshold: the whole frame (header, 10 bytes of payload, the attachment) under 1 MiB
            // at the threshold and over: a 1 MiB attachment alone makes the frame at least 1 MiB
            for (int size : new int[] {(1 << 20) - (64 << 10), 1 << 20}) {
                boolean rendezvous = size >= 1 << 20;
                MemorySegment attachment = pattern(arena, size, size);
                long sent0 = clientT.metrics().rendezvousSent();
                long read0 = serverT.metrics().rendezvousRead();
                long copied0 = serverT.metrics().reassemblyCopiedBytes();
                long h = client.call(hashCall, pattern(arena, 16, 1).asSlice(0, 10),
                        CallOptions.DEFAULT.withAttachment(Attachment.of(attachment)));
                assertEquals(hash(attachment), h, "an attachment of " + size + " bytes arrived intact");
                String what = "a request with an attachment of " + size + " bytes: " + serverT.metrics();
                long copied = serverT.metrics().reassemblyCopiedBytes() - copied0;
                if (rendezvous) {
                    assertEquals(1, clientT.metrics().rendezvousSent() - sent0, "sent by rendezvous, " + what);
                    assertEquals(1, serverT.metrics().rendezvousRead() - read0, "read by rendezvous, " + what);
                    assertEquals(0, copied, "copied to reassemble, " + what);
                } else {
                    assertEquals(0, clientT.metrics().rendezvousSent() - sent0, "sent by rendezvous, " + what);
                    assertEquals(0, serverT.metrics().rendezvousRead() - read0, "read by rendezvous, " + what);
                    assertTrue(copied >= size, "split SENDs copied into a reassembly buffer, " + what);
                }
            }
            assertEquals(0, clientT.metrics().completionErrors() + serverT.metrics().completionErrors());
        }
    }
}
