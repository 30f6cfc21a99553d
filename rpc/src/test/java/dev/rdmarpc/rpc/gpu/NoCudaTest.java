package dev.rdmarpc.rpc.gpu;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import dev.rdmarpc.cuda.Cuda;
import dev.rdmarpc.cuda.CudaDevice;
import dev.rdmarpc.cuda.CudaDriverNotFoundException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.api.io.TempDir;

/** Host-only RPC never touches CUDA; GPU entry points without the driver fail with one clear exception. */
class NoCudaTest {

    @Test
    @Timeout(120)
    void hostAttachmentRpcLoadsNoCudaClassAndNoLibcuda(@TempDir Path dir) throws Exception {
        String modulePath = System.getProperty("jdk.module.path");
        Path testClasses = Path.of("target", "test-classes").toAbsolutePath();
        assertTrue(modulePath != null && Files.isDirectory(testClasses), "module path " + modulePath + ", " + testClasses);
        Path classLog = dir.resolve("classes.log");
        String java = ProcessHandle.current().info().command().orElseThrow();
        List<String> cmd = new ArrayList<>(List.of(java,
                "--enable-native-access=dev.rdmarpc.posix,dev.rdmarpc.ibverbs,dev.rdmarpc.cuda,dev.rdmarpc.rpc",
                "-Xlog:class+load=info:file=" + classLog,
                "--module-path", modulePath,
                // resolved, as in an application that can do GPU work: host-only calls still load none of it
                "--add-modules", "dev.rdmarpc.ibverbs,dev.rdmarpc.cuda",
                "--patch-module", "dev.rdmarpc.rpc=" + testClasses,
                "-m", "dev.rdmarpc.rpc/dev.rdmarpc.rpc.HostOnlyMain"));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        boolean exited = p.waitFor(90, TimeUnit.SECONDS);
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!exited) {
            p.destroyForcibly();
        }
        assertTrue(exited, "child JVM did not finish: " + out);
        assertEquals(0, p.exitValue(), out);
        assertTrue(out.contains("host attachments ok"), out);
        assertTrue(out.contains("libcuda mapped: false"), out);
        List<String> loaded = Files.readAllLines(classLog);
        assertTrue(loaded.stream().anyMatch(l -> l.contains("dev.rdmarpc.rpc.RpcClient ")), "the log lists our classes");
        List<String> cuda = loaded.stream().filter(l -> l.contains("dev.rdmarpc.cuda.")).toList();
        assertEquals(List.of(), cuda, "no class of the CUDA module was loaded");
        List<String> gpu = loaded.stream().filter(l -> l.contains("dev.rdmarpc.rpc.gpu.")).toList();
        assertEquals(List.of(), gpu, "no class of the GPU package was loaded");
    }

    @Test
    void withoutTheDriverTheGpuEntryPointsSayCudaDriverNotFound() {
        assumeFalse(Cuda.isAvailable(), "libcuda.so.1 is installed here: the no-driver behaviour is not observable");
        List<Executable> entries = List.of(() -> GpuStaging.create(0), () -> GpuStaging.create(CudaDevice.get(0)),
                () -> GpuFacts.of(CudaDevice.get(0)));
        for (Executable e : entries) {
            CudaDriverNotFoundException x = assertThrows(CudaDriverNotFoundException.class, e);
            assertTrue(x.getMessage().startsWith("CUDA driver not found"), x.getMessage());
        }
    }
}
