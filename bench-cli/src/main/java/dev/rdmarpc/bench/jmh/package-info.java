/**
 * JMH benchmarks, run through the bench jar ({@code bench-cli jmh -prof gc}). State is preallocated in
 * {@code @State} objects and results are returned, so that {@code -prof gc}'s allocation rate is the
 * operation's own.
 */
package dev.rdmarpc.bench.jmh;
