/**
 * TLS material for the bench: a throwaway certificate authority and server certificate made at run time
 * with the JDK's {@code keytool} ({@code local --tls}, {@code server --tls} without keys, the JMH echo's
 * TLS variant), and the plain-words description of certificates that {@code doctor} prints.
 */
package dev.rdmarpc.bench.tls;
