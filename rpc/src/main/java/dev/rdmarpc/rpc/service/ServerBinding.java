package dev.rdmarpc.rpc.service;

import dev.rdmarpc.rpc.AsyncHandler;
import dev.rdmarpc.rpc.CallContext;
import dev.rdmarpc.rpc.CallOptions;
import dev.rdmarpc.rpc.Handler;
import dev.rdmarpc.rpc.RpcServer;
import dev.rdmarpc.rpc.ServerStream;
import dev.rdmarpc.rpc.StreamHandler;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.reflect.UndeclaredThrowableException;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;

/** The server side of a service: one handler per RPC method, calling the implementation object. */
final class ServerBinding {
    /** The call the current thread serves, while it runs an implementation's method. */
    static final ThreadLocal<CallContext> CURRENT = new ThreadLocal<>();

    private ServerBinding() {
    }

    static <I> RpcServer.Builder register(RpcServer.Builder builder, ServiceDescriptor<I> service, I impl) {
        Objects.requireNonNull(builder, "builder");
        Objects.requireNonNull(impl, "impl");
        if (!service.type().isInstance(impl)) {
            throw new IllegalArgumentException(impl.getClass().getName() + " does not implement " + service.type().getName());
        }
        // Check every method (and take every stream handler) before registering any, so a failure
        // leaves the builder as it was.
        MethodHandle[] targets = new MethodHandle[service.methods().size()];
        StreamHandler<Object, Object>[] streams = newStreamHandlers(targets.length);
        for (int i = 0; i < targets.length; i++) {
            ServiceMethod m = service.methods().get(i);
            targets[i] = target(service, m, impl);
            if (m.kind() == ServiceMethod.Kind.STREAM) {
                streams[i] = streamHandler(service, m, targets[i]);
            }
        }
        for (int i = 0; i < targets.length; i++) {
            ServiceMethod m = service.methods().get(i);
            switch (m.kind()) {
                case UNARY -> {
                    Handler<Object, Object> h = new Blocking(targets[i]);
                    if (m.inline()) {
                        builder.register(m.erased(), h);
                    } else {
                        builder.registerBlocking(m.erased(), h);
                    }
                }
                case UNARY_ASYNC -> builder.registerAsync(m.erased(), new Async(targets[i]));
                case STREAM -> builder.registerStream(m.erased(), streams[i]);
            }
        }
        return builder;
    }

    @SuppressWarnings("unchecked")
    private static StreamHandler<Object, Object>[] newStreamHandlers(int n) {
        return (StreamHandler<Object, Object>[]) new StreamHandler<?, ?>[n];
    }

    /**
     * A streaming method's handler: calls {@code impl.m()} once, now, and takes the handler out of
     * what {@link Streaming#serve} returned; the handler then runs with {@link Services#context()}
     * set to its stream.
     */
    private static StreamHandler<Object, Object> streamHandler(ServiceDescriptor<?> service, ServiceMethod m,
                                                                MethodHandle target) {
        String where = service.type().getSimpleName() + "." + m.javaMethod().getName() + "()";
        Object value;
        try {
            value = (Object) target.invokeExact((Object) null);
        } catch (Throwable t) {
            throw new IllegalArgumentException(where + " threw at registration, where the server takes its handler: "
                    + t, t);
        }
        if (value instanceof ServedStreaming<?, ?> served) {
            @SuppressWarnings("unchecked")
            StreamHandler<Object, Object> handler = (StreamHandler<Object, Object>) served.handler;
            return new Stream(handler);
        }
        String what = value == null ? "null" : value instanceof BoundStreaming ? "a service client's Streaming (" + value
                + "), which opens streams and serves none" : value.toString();
        throw new IllegalArgumentException(where + " returned " + what + ": the implementation of a streaming method"
                + " returns Streaming.serve(handler), whose handler the server registers");
    }

    /** {@code impl}'s method as {@code (Object request)Object}. */
    private static MethodHandle target(ServiceDescriptor<?> service, ServiceMethod m, Object impl) {
        MethodHandle mh;
        try {
            mh = service.codecs().lookup().unreflect(m.javaMethod());
        } catch (IllegalAccessException e) {
            throw new IllegalArgumentException("the lookup " + service.codecs().lookup() + " cannot call "
                    + m.javaMethod() + ": pass MethodHandles.lookup() from code that can (" + e.getMessage() + ")", e);
        }
        mh = mh.bindTo(impl);
        if (m.optionsIndex >= 0) {
            mh = MethodHandles.insertArguments(mh, m.optionsIndex, CallOptions.DEFAULT);
        }
        if (m.requestIndex < 0) {
            mh = MethodHandles.dropArguments(mh, 0, Object.class);
        }
        return mh.asType(MethodType.methodType(Object.class, Object.class));
    }

    static Object invoke(MethodHandle target, CallContext ctx, Object request) throws Exception {
        CallContext outer = CURRENT.get();
        CURRENT.set(ctx);
        try {
            return (Object) target.invokeExact(request);
        } catch (Exception | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new UndeclaredThrowableException(t);
        } finally {
            CURRENT.set(outer);
        }
    }

    /** A synchronous method, inline or on a virtual thread. */
    private record Blocking(MethodHandle target) implements Handler<Object, Object> {
        @Override
        public Object handle(CallContext context, Object request) throws Exception {
            return invoke(target, context, request);
        }
    }

    /** A streaming method's handler, with {@link Services#context()} set to the stream. */
    private record Stream(StreamHandler<Object, Object> handler) implements StreamHandler<Object, Object> {
        @Override
        public void handle(ServerStream<Object, Object> stream) throws Exception {
            CallContext outer = CURRENT.get();
            CURRENT.set(stream);
            try {
                handler.handle(stream);
            } finally {
                CURRENT.set(outer);
            }
        }
    }

    /** A method returning a future. */
    private record Async(MethodHandle target) implements AsyncHandler<Object, Object> {
        @Override
        @SuppressWarnings("unchecked")
        public CompletableFuture<Object> handle(CallContext context, Object request) throws Exception {
            CompletableFuture<Object> f = (CompletableFuture<Object>) invoke(target, context, request);
            if (f == null) {
                throw new NullPointerException("the asynchronous service method returned null instead of a future");
            }
            return f;
        }
    }
}
