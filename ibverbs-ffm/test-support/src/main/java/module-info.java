/**
 * JUnit 5 support for the RDMA test tier: {@link dev.rdmarpc.testsupport.RdmaTest} and the environment
 * it resolves. Used by every module's tests (test scope); never a runtime dependency.
 */
module dev.rdmarpc.testsupport {
    requires transitive org.junit.jupiter.api;

    exports dev.rdmarpc.testsupport;
}
