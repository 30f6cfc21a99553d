package dev.rdmarpc.rpc.transport.rdma;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Without {@code rdma()} nothing of RDMA is loaded: a TCP server and client run in a child JVM with
 * class-load logging, and no class of libibverbs' bindings or of the RDMA transport shows up.
 */
@Timeout(120)
class NoRdmaLoadedTest {

    @Test
    void aTcpOnlyApplicationLoadsNoVerbsClass() throws Exception {
        Process p = ChildJvm.command(List.of("-Xlog:class+load=info", "-Xmx128m"), TcpOnlyMain.class).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(60, TimeUnit.SECONDS));
        assertEquals(0, p.exitValue(), out.lines().filter(l -> !l.contains("[class,load]")).toList().toString());
        assertTrue(out.contains("ECHO OK"));
        assertTrue(out.contains("dev.rdmarpc.rpc.RpcServer"), "class-load logging works");
        List<String> rdma = out.lines().filter(l -> l.contains("[class,load]"))
                .filter(l -> l.contains(" dev.rdmarpc.ibverbs") || l.contains(" dev.rdmarpc.rdmacm")
                        || l.contains(" dev.rdmarpc.rpc.transport.rdma.") && !l.contains("TcpOnlyMain"))
                .toList();
        assertEquals(List.of(), rdma, "RDMA classes loaded by a TCP-only application");
    }
}
