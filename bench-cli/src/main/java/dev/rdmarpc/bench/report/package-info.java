/**
 * Turns measured cells into what a person reads: an aligned table (the default, coro_rpc's columns plus
 * P50 and P99.9), CSV, JSON, and a PNG chart of throughput and P99 against concurrency.
 */
package dev.rdmarpc.bench.report;
