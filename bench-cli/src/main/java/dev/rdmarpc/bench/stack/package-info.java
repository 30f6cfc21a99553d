/**
 * The stacks the bench can measure: rdmarpc over TCP (and RDMA once it exists), and the gRPC-java
 * baseline, which is loaded from {@code grpc-lib/} beside the bench jar by a class loader of its own.
 */
package dev.rdmarpc.bench.stack;
