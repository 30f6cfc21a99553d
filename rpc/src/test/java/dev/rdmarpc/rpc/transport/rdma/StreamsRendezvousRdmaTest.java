package dev.rdmarpc.rpc.transport.rdma;

import dev.rdmarpc.testsupport.RdmaTest;
import org.junit.jupiter.api.Timeout;

/**
 * {@link dev.rdmarpc.rpc.StreamsContract} over RDMA as {@link StreamsRdmaTest} runs it, with
 * rendezvous on both sides: its 1 MiB messages are read by rendezvous, and its many small ones travel
 * beside credits of which each side keeps its last for done reports. With that kept credit counted as
 * available by the peer (before the fix in {@link Credits}), the client and server streaming tests
 * waited forever, each side for the other's credits.
 */
@RdmaTest
@Timeout(300)
class StreamsRendezvousRdmaTest extends StreamsRdmaTest {
    @Override
    protected RdmaConfig config() {
        return super.config().send(s -> s.rendezvousThreshold(RdmaConfig.SUGGESTED_RENDEZVOUS_THRESHOLD));
    }
}
