/**
 * Service interfaces: describe a service as a Java interface, get a client for any
 * {@link dev.rdmarpc.rpc.RpcChannel} and register an implementation on a server, instead of writing
 * one {@link dev.rdmarpc.rpc.Method} constant and one handler per method.
 * {@snippet :
 * @RpcService                                       // service name "Greeter"
 * interface Greeter {
 *     @RpcMethod(inline = true)                     // short, never blocks: served on the I/O thread
 *     String hello(String name);                    // wire name "Greeter/hello"
 *     Pair next(Pair p, CallOptions options);       // any record; options per call; a virtual thread per call
 *     CompletableFuture<Integer> count(String text); // asynchronous
 *     Streaming<Pair, Pair> chat();                 // streaming: Pair messages each way
 * }
 * record Pair(String name, long n) {}
 *
 * class GreeterImpl implements Greeter {
 *     // hello, next, count: return their results
 *     public Streaming<Pair, Pair> chat() {         // called once, at registration
 *         return Streaming.serve(stream -> {        // each stream, on a virtual thread of its own
 *             for (Pair p; (p = stream.receive()) != null; ) stream.send(new Pair(p.name(), p.n() + 1));
 *         });
 *     }
 * }
 *
 * RpcServer server = Services.register(RpcServer.builder(), Greeter.class, new GreeterImpl(),
 *         MethodHandles.lookup()).start();
 * Greeter greeter = Services.client(client, Greeter.class, MethodHandles.lookup());
 * String s = greeter.hello("ada");                  // = client.call(Method.of("Greeter/hello", STRING, STRING), "ada")
 * Pair p = greeter.next(new Pair("p", 1), CallOptions.DEFAULT.withTimeout(Duration.ofMillis(50)));
 * try (ClientStream<Pair, Pair> st = greeter.chat().open()) {   // = client.openStream(Method.of("Greeter/chat", ...))
 *     st.send(p);
 *     st.halfClose();
 *     for (Pair q; (q = st.receive()) != null; ) { ... }
 * }
 * }
 *
 * <h2>The interface</h2>
 * An interface annotated {@link dev.rdmarpc.rpc.service.RpcService}; each abstract method is one RPC
 * method, whose wire name is {@code serviceName + "/" + methodName} (the service name defaults to the
 * interface's simple name, the method name to the Java one; {@link dev.rdmarpc.rpc.service.RpcMethod}
 * renames it) and whose wire id is the FNV-1a hash of that name, as for any
 * {@link dev.rdmarpc.rpc.Method}: a hand-written {@code Method.of("Greeter/hello", ...)} with the same
 * codecs calls the service's method, and a service client calls a hand-registered handler of that
 * name. The signatures ({@code R m(Q)}, {@code CompletableFuture<R> m(Q)}, each with an optional
 * trailing {@link dev.rdmarpc.rpc.CallOptions}, and without a request; {@code Streaming<Q, R> m()} for
 * a streaming method, see {@link dev.rdmarpc.rpc.service.Streaming}) are in
 * {@link dev.rdmarpc.rpc.service.ServiceMethod}; what is refused, and why, in
 * {@link dev.rdmarpc.rpc.service.ServiceDescriptor}; where codecs come from (built-in types, records,
 * your own) in {@link dev.rdmarpc.rpc.service.CodecRegistry}. Everything is checked when the
 * interface is first read, with a message naming the method: nothing fails at call time that could
 * have failed at bind time.
 *
 * <h2>Threads, on the server</h2>
 * A synchronous method runs on a virtual thread per call ({@code registerBlocking}) unless it is
 * {@link dev.rdmarpc.rpc.service.RpcMethod#inline() inline} ({@code register}: on the connection's
 * I/O thread, for short methods that never block). The default is the safe one: a method that
 * blocks on the I/O thread stalls every connection of that thread, while a method on a virtual thread
 * that did not need one only costs that thread. A {@code CompletableFuture} method is started on the
 * I/O thread ({@code registerAsync}) and must not block there. A streaming method's handler runs on a
 * virtual thread per stream ({@code registerStream}), where blocking in {@code receive} and
 * {@code send} is the point. The implementation reads its call (peer, metadata, deadline,
 * cancellation) with {@link dev.rdmarpc.rpc.service.Services#context()}; a stream handler has it as its
 * {@link dev.rdmarpc.rpc.ServerStream} too.
 *
 * <h2>How, and what it costs per call</h2>
 * At run time, with no build step: the client is a hidden class generated when the first client of a
 * {@link dev.rdmarpc.rpc.service.ServiceDescriptor} is made, defined through the caller's
 * {@link java.lang.invoke.MethodHandles.Lookup} in the caller's package, whose methods are the typed
 * calls written out: {@code return (R) channel.call(METHOD_i, request, CallOptions.DEFAULT)}. A call
 * through it is the typed call plus a few field loads: it allocates exactly what the typed call does.
 * A streaming method's {@code Streaming} is built with the client and returned by a field load, so
 * {@code greeter.chat()} allocates nothing, and {@code open(options)} is
 * {@code channel.openStream(method, options)}, nothing added: a stream costs what a hand-opened
 * stream does.
 * JMH ({@code ServiceBench}, {@code -prof gc}, all threads counted, TCP loopback, 128-byte strings,
 * three forks): 729 B per blocking call both ways, 985 B per asynchronous call both ways, 640 B
 * (service) and 642 B (typed) when three methods are called from call sites compiled apart.
 *
 * <p>Not {@link java.lang.reflect.Proxy}: it passes the arguments in a new {@code Object[]}, which
 * C2 removes only when it inlines the invocation handler into each proxy method, and it stops doing
 * that once the handler is compiled on its own, being hot from every method of every service
 * ("already compiled into a big method"). Measured with the same benchmark: a Proxy client allocated
 * 664 B instead of 640 B per call (one {@code Object[1]}) in one of four forks, and as much as the
 * typed call in the other three; the generated class never depends on it. Not an annotation
 * processor either: it would need a build step in every project that declares a service, and a
 * processor in this module (its {@code provides} and {@code java.compiler}); the generated class
 * costs the same per call without them.
 *
 * <p>What the run-time way costs instead, once per descriptor: reading the interface with reflection
 * and defining one small hidden class (unloaded once the descriptor and its clients are gone). The lookup must have full privilege access
 * (pass {@code MethodHandles.lookup()}) and reach the interface and its response types: it can then
 * define only what code in the caller's package could have written. On the server, a bound method
 * is a handler that calls the implementation through a {@link java.lang.invoke.MethodHandle} and sets
 * the thread's current call for {@code Services.context()}: nothing allocated on the I/O thread
 * (an inline method: 729 B per call, as with a hand-registered handler), one thread-local
 * entry, 32 B, on each call's new virtual thread (blocking methods: 1,586 B against 1,556 B). A
 * streaming method's handler is registered as the implementation returned it, wrapped once to set the
 * same thread-local entry on each stream's virtual thread (not measured: one entry per stream, not per
 * message; the messages go through the {@link dev.rdmarpc.rpc.ServerStream} untouched).
 *
 * <h2>Why streaming methods look the way they do</h2>
 * {@code Streaming<Q, R> m()} is one type for both sides, since a Java interface method has one return
 * type: the client's value opens streams, the server's ({@link dev.rdmarpc.rpc.service.Streaming#serve})
 * carries the handler, and each refuses the other's use. The stream itself is the library's
 * {@link dev.rdmarpc.rpc.ClientStream} / {@link dev.rdmarpc.rpc.ServerStream} pair with its blocking,
 * flow-controlled {@code send} and {@code receive}, not a {@code Flow.Publisher} (whose
 * demand-signalling would be a second flow control over the stream's window) nor a
 * {@code StreamObserver}-style callback pair (which would have to run user code on the I/O thread or
 * hand each message to another thread); the three shapes are ways of using one stream, as on the wire.
 * Options come at {@code open(options)}, not as a parameter, so the method value can be built once.
 */
package dev.rdmarpc.rpc.service;
