package dev.rdmarpc.testsupport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;
import static org.junit.platform.testkit.engine.EventConditions.event;
import static org.junit.platform.testkit.engine.EventConditions.finishedSuccessfully;
import static org.junit.platform.testkit.engine.EventConditions.finishedWithFailure;
import static org.junit.platform.testkit.engine.EventConditions.skippedWithReason;
import static org.junit.platform.testkit.engine.EventConditions.test;
import static org.junit.platform.testkit.engine.TestExecutionResultConditions.instanceOf;
import static org.junit.platform.testkit.engine.TestExecutionResultConditions.message;

import java.io.IOException;
import java.nio.file.Path;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.platform.engine.TestTag;
import org.junit.platform.engine.support.descriptor.ClassSource;
import org.junit.platform.testkit.engine.EngineExecutionResults;
import org.junit.platform.testkit.engine.EngineTestKit;

/** Runs a sample {@link RdmaTest} class through the Jupiter engine with faked environments. */
class RdmaTestExtensionTest {

    /** Run only through {@link EngineTestKit} (surefire skips nested classes). */
    @RdmaTest
    static class Sample {
        static volatile RdmaEnvironment seen;

        @Test
        void usesTheDevices(RdmaEnvironment rdma) {
            seen = rdma;
        }
    }

    @TempDir
    Path dir;

    private EngineExecutionResults run(Path sysfs, Map<String, String> env) {
        EngineTestKit.Builder b = EngineTestKit.engine("junit-jupiter")
                .selectors(selectClass(Sample.class))
                .configurationParameter(RdmaTestExtension.SYSFS_PARAMETER, sysfs.toString());
        for (String name : new String[] {RdmaEnvironment.IN_VM, RdmaEnvironment.DEV0, RdmaEnvironment.DEV1,
                RdmaEnvironment.ADDR0, RdmaEnvironment.ADDR1}) {
            b.configurationParameter(RdmaTestExtension.ENV_PARAMETER_PREFIX + name, env.getOrDefault(name, ""));
        }
        return b.execute();
    }

    private static Map<String, String> vm() {
        return Map.of(RdmaEnvironment.IN_VM, "1", RdmaEnvironment.DEV0, "rxe0", RdmaEnvironment.DEV1, "rxe1",
                RdmaEnvironment.ADDR0, "198.18.0.1", RdmaEnvironment.ADDR1, "198.18.0.2");
    }

    @Test
    void carriesTheRdmaTag() {
        EngineExecutionResults r = run(dir.resolve("none"), Map.of());
        Set<String> tags = r.allEvents().list().stream()
                .filter(e -> e.getTestDescriptor().getSource()
                        .filter(src -> src instanceof ClassSource c && c.getJavaClass() == Sample.class).isPresent())
                .flatMap(e -> e.getTestDescriptor().getTags().stream())
                .map(TestTag::getName)
                .collect(Collectors.toSet());
        assertEquals(Set.of("rdma"), tags);
    }

    @Test
    void outsideTheVmWithoutDevicesItSkips() {
        EngineExecutionResults r = run(dir.resolve("none"), Map.of());
        r.containerEvents().assertThatEvents().haveExactly(1,
                event(skippedWithReason(reason -> reason.startsWith("no usable RDMA device (no RDMA device:"))));
        r.testEvents().assertStatistics(s -> s.started(0).skipped(0).failed(0));
    }

    @Test
    void insideTheVmWithoutDevicesItFails() {
        EngineExecutionResults r = run(dir.resolve("none"), vm());
        r.containerEvents().assertStatistics(s -> s.skipped(0));
        // beforeAll fails the class: its test is reported as failed, never as skipped
        r.containerEvents().assertThatEvents().haveExactly(1, event(finishedWithFailure(
                instanceOf(IllegalStateException.class),
                message(m -> m.startsWith("RDMARPC_IN_VM=1 but the RDMA environment is unusable: no RDMA device")))));
    }

    @Test
    void insideTheVmWithOneDeviceDownItFails() throws IOException {
        FakeSysfs s = new FakeSysfs(dir.resolve("ib"))
                .device("rxe0", FakeSysfs.ACTIVE, "198.18.0.1").device("rxe1", FakeSysfs.DOWN, "198.18.0.2");
        EngineExecutionResults r = run(s.root(), vm());
        r.containerEvents().assertThatEvents().haveExactly(1, event(finishedWithFailure(
                message(m -> m.contains("rxe1 (RDMARPC_DEV1) has no ACTIVE port")))));
    }

    @Test
    void withDevicesItRunsAndInjectsTheEnvironment() throws IOException {
        FakeSysfs s = new FakeSysfs(dir.resolve("ib"))
                .device("rxe0", FakeSysfs.ACTIVE, "198.18.0.1").device("rxe1", FakeSysfs.ACTIVE, "198.18.0.2");
        Sample.seen = null;
        EngineExecutionResults r = run(s.root(), vm());
        r.testEvents().assertStatistics(st -> st.started(1).succeeded(1).skipped(0).failed(0));
        r.testEvents().assertThatEvents().haveExactly(1, event(test("usesTheDevices"), finishedSuccessfully()));
        assertTrue(Sample.seen.usable());
        assertEquals("rxe1", Sample.seen.device1());
        assertEquals("198.18.0.2", Sample.seen.address1());
    }
}
