package dev.rdmarpc.testsupport;

import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ConditionEvaluationResult;
import org.junit.jupiter.api.extension.ExecutionCondition;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * The extension behind {@link RdmaTest}: skips when no usable RDMA device exists outside the Soft-RoCE
 * VM, fails (never skips) inside it, and injects {@link RdmaEnvironment} parameters.
 *
 * <p>The environment is resolved once per test run. For the extension's own tests, JUnit configuration
 * parameters {@code rdmarpc.test.env.<VARIABLE>} (empty value = unset) and {@code rdmarpc.test.sysfs}
 * replace the process environment and {@code /sys/class/infiniband}.
 */
public final class RdmaTestExtension implements ExecutionCondition, BeforeAllCallback, BeforeEachCallback,
        ParameterResolver {
    /** Configuration parameter prefix that overrides an environment variable. */
    public static final String ENV_PARAMETER_PREFIX = "rdmarpc.test.env.";
    /** Configuration parameter that overrides the sysfs folder. */
    public static final String SYSFS_PARAMETER = "rdmarpc.test.sysfs";

    private static final ExtensionContext.Namespace NAMESPACE = ExtensionContext.Namespace.create(RdmaTestExtension.class);

    /** The environment of this test run (cached in the root context). */
    public static RdmaEnvironment environment(ExtensionContext context) {
        return context.getRoot().getStore(NAMESPACE)
                .getOrComputeIfAbsent(RdmaEnvironment.class, k -> resolve(context), RdmaEnvironment.class);
    }

    private static RdmaEnvironment resolve(ExtensionContext context) {
        Map<String, String> env = new HashMap<>(System.getenv());
        for (String name : List.of(RdmaEnvironment.IN_VM, RdmaEnvironment.DEV0, RdmaEnvironment.DEV1,
                RdmaEnvironment.ADDR0, RdmaEnvironment.ADDR1)) {
            context.getConfigurationParameter(ENV_PARAMETER_PREFIX + name).ifPresent(v -> {
                if (v.isEmpty()) {
                    env.remove(name);
                } else {
                    env.put(name, v);
                }
            });
        }
        Path sysfs = context.getConfigurationParameter(SYSFS_PARAMETER).map(Path::of).orElse(RdmaEnvironment.SYSFS);
        return RdmaEnvironment.discover(env, sysfs);
    }

    @Override
    public ConditionEvaluationResult evaluateExecutionCondition(ExtensionContext context) {
        RdmaEnvironment env = environment(context);
        if (env.usable()) {
            return ConditionEvaluationResult.enabled("RDMA: " + env);
        }
        if (env.inVm()) {
            return ConditionEvaluationResult.enabled(RdmaEnvironment.IN_VM + "=1: RDMA tests never skip, they fail");
        }
        return ConditionEvaluationResult.disabled("no usable RDMA device (" + String.join("; ", env.problems())
                + "); run it in the Soft-RoCE VM: scripts/softroce-vm mvn -B -o -P rdma verify");
    }

    @Override
    public void beforeAll(ExtensionContext context) {
        check(context);
    }

    @Override
    public void beforeEach(ExtensionContext context) {
        check(context);
    }

    private static void check(ExtensionContext context) {
        RdmaEnvironment env = environment(context);
        if (!env.usable()) {
            // Only reachable inside the VM: outside, the condition above has skipped the test.
            throw new IllegalStateException(RdmaEnvironment.IN_VM + "=1 but the RDMA environment is unusable: "
                    + String.join("; ", env.problems()));
        }
    }

    @Override
    public boolean supportsParameter(ParameterContext parameterContext, ExtensionContext extensionContext) {
        return parameterContext.getParameter().getType() == RdmaEnvironment.class;
    }

    @Override
    public Object resolveParameter(ParameterContext parameterContext, ExtensionContext extensionContext) {
        return environment(extensionContext);
    }
}
