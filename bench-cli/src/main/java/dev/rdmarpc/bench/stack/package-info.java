/**
 * The stacks the bench can measure: rdmarpc over TCP (and RDMA once it exists), and the baselines, gRPC-java
 * and a plain Netty NIO echo, each loaded from its directory beside the bench jar ({@code grpc-lib/},
 * {@code netty-lib/}) by a class loader of its own.
 */
package dev.rdmarpc.bench.stack;
