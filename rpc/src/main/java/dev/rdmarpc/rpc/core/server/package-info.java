/**
 * The server side: {@link dev.rdmarpc.rpc.core.server.ServerCore} accepts connections, a
 * {@code ServerConnection} per connection dispatches each request by its
 * method's mode (inline, raw, blocking, asynchronous, stream), the call classes hold a call from its
 * request to its response, and {@code ResponseWriter} writes that response.
 */
package dev.rdmarpc.rpc.core.server;
