/**
 * JUnit 5 support for tests that need RDMA devices: the {@link dev.rdmarpc.testsupport.RdmaTest}
 * meta-annotation (tag {@code "rdma"}), its extension and the {@link dev.rdmarpc.testsupport.RdmaEnvironment}
 * it resolves from the Soft-RoCE VM's variables and sysfs.
 */
package dev.rdmarpc.testsupport;
