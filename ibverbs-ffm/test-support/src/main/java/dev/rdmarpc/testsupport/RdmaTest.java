package dev.rdmarpc.testsupport;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Marks a test class or method that needs real RDMA devices: JUnit tag {@code "rdma"} (selected by the
 * root pom's {@code -P rdma} profile) plus {@link RdmaTestExtension}.
 *
 * <p>Outside the Soft-RoCE VM the test is skipped when no usable RDMA device exists. Inside it
 * ({@code RDMARPC_IN_VM=1}) it is never skipped: an unusable environment fails it. Test methods may
 * declare an {@link RdmaEnvironment} parameter to learn the devices and addresses.
 *
 * {@snippet :
 * @RdmaTest
 * class QueuePairTest {
 *     @Test
 *     void sendRecv(RdmaEnvironment rdma) {
 *         String dev0 = rdma.device0();   // "rxe0" in the VM
 *     }
 * }
 * }
 */
@Target({ElementType.TYPE, ElementType.METHOD})
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Inherited
@Tag(RdmaTest.TAG)
@ExtendWith(RdmaTestExtension.class)
public @interface RdmaTest {
    /** The JUnit tag of RDMA tests. */
    String TAG = "rdma";
}
