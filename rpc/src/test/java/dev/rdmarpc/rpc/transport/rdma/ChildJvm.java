package dev.rdmarpc.rpc.transport.rdma;

import java.io.File;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/** Starts a main class of the test sources in a child JVM: this JVM's java, module path and test classes. */
final class ChildJvm {
    private ChildJvm() {
    }

    static ProcessBuilder command(List<String> jvmOptions, Class<?> mainClass, String... args) {
        String java = ProcessHandle.current().info().command().orElse(
                Path.of(System.getProperty("java.home"), "bin", "java").toString());
        String modulePath = System.getProperty("jdk.module.path");
        String basedir = System.getProperty("basedir", System.getProperty("user.dir"));
        String testClasses = Path.of(basedir, "target", "test-classes").toString();
        List<String> cmd = new ArrayList<>();
        cmd.add(java);
        cmd.addAll(jvmOptions);
        if (modulePath != null && !modulePath.isBlank()) {
            cmd.add("--enable-native-access=dev.rdmarpc.posix,dev.rdmarpc.ibverbs,dev.rdmarpc.cuda,dev.rdmarpc.rpc");
            cmd.add("-p");
            cmd.add(modulePath);
            cmd.add("--add-modules"); // rpc requires them static: an RDMA application resolves them itself
            cmd.add("dev.rdmarpc.ibverbs,dev.rdmarpc.cuda");
            cmd.add("--patch-module");
            cmd.add("dev.rdmarpc.rpc=" + testClasses);
            cmd.add("-m");
            cmd.add("dev.rdmarpc.rpc/" + mainClass.getName());
        } else {
            cmd.add("--enable-native-access=ALL-UNNAMED");
            cmd.add("-cp");
            cmd.add(System.getProperty("java.class.path") + File.pathSeparator + testClasses);
            cmd.add(mainClass.getName());
        }
        cmd.addAll(List.of(args));
        return new ProcessBuilder(cmd).redirectErrorStream(true);
    }
}
