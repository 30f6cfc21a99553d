/**
 * TLS for both transports: {@link dev.rdmarpc.rpc.transport.tls.TlsConfig}, the keys, trust and rules
 * a side uses, for every connection of a TCP transport and for the hello connection of an RDMA one.
 */
package dev.rdmarpc.rpc.transport.tls;
