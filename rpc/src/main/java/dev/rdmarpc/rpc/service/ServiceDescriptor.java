package dev.rdmarpc.rpc.service;

import dev.rdmarpc.rpc.CallContext;
import dev.rdmarpc.rpc.CallOptions;
import dev.rdmarpc.rpc.Method;
import dev.rdmarpc.rpc.RpcChannel;
import dev.rdmarpc.rpc.codec.Codec;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.reflect.Modifier;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.Type;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Future;
import java.util.concurrent.Flow;

/**
 * What an {@link RpcService} interface means on the wire: its service name and one
 * {@link ServiceMethod} per abstract method. Built once per interface (all checks happen here, so a
 * bad interface fails before anything is bound), then used by any number of clients and servers.
 * Immutable and thread-safe.
 * {@snippet :
 * ServiceDescriptor<Greeter> greeter = ServiceDescriptor.of(Greeter.class, MethodHandles.lookup());
 * Greeter a = Services.client(channelA, greeter);
 * Greeter b = Services.client(channelB, greeter);   // no second look at the interface
 * }
 *
 * <p>What counts: the interface's public abstract methods, its super-interfaces' included. Default
 * and static methods are local code, not RPC methods (a client runs a default method's body, which
 * may call the RPC methods; a server does not register it). Methods of {@code Object} redeclared in
 * the interface ({@code toString()}, ...) are not RPC methods either.
 *
 * <p>Refused, with an {@link IllegalArgumentException} that names the method: a class, or an
 * interface without {@link RpcService}; one without RPC methods; overloaded names (each RPC method
 * needs a name of its own); two methods with the same wire name or wire id; a generic method; more
 * than one request parameter (put several values in a record); a {@link CallOptions} anywhere but
 * last; a {@link CallContext} parameter (the server reads it with {@link Services#context()}); a
 * type without a codec ({@link CodecRegistry}); a checked exception in a {@code throws} clause
 * (a remote failure is an unchecked {@link dev.rdmarpc.rpc.RpcException} on the client, so the
 * caller could never catch it); a future type other than {@link CompletableFuture}; a
 * {@link Streaming} that is raw, has a wildcard or type variable for a message type, or is returned
 * by a method with parameters (a streaming method is {@code Streaming<Q, R> m()}), or one anywhere
 * else in a signature; other streaming shapes ({@code Flow.Publisher}, {@code Stream},
 * {@code Iterator} or {@code Iterable} requests and responses); {@link RpcMethod#inline()} on an
 * asynchronous or streaming method; names with {@code '/'}.
 *
 * @param <I> the service interface
 */
public final class ServiceDescriptor<I> {
    private final Class<I> type;
    private final String name;
    private final CodecRegistry codecs;
    private final List<ServiceMethod> methods;
    /** The generated client class's constructor, defined by the first {@link #newClient}. */
    private volatile MethodHandle clientConstructor;

    private ServiceDescriptor(Class<I> type, String name, CodecRegistry codecs, List<ServiceMethod> methods) {
        this.type = type;
        this.name = name;
        this.codecs = codecs;
        this.methods = List.copyOf(methods);
    }

    /**
     * Reads a service interface with the built-in codecs and records.
     *
     * @param type   the interface, annotated {@link RpcService}
     * @param lookup the caller's {@code MethodHandles.lookup()} (see {@link CodecRegistry#of})
     * @param <I>    the interface
     * @return its descriptor
     * @throws IllegalArgumentException when the interface cannot be a service, saying why
     */
    public static <I> ServiceDescriptor<I> of(Class<I> type, MethodHandles.Lookup lookup) {
        return of(type, CodecRegistry.of(lookup));
    }

    /**
     * Reads a service interface with the codecs of {@code codecs}.
     *
     * @param type   the interface, annotated {@link RpcService}
     * @param codecs where request and response types get their codecs, and the caller's lookup
     * @param <I>    the interface
     * @return its descriptor
     * @throws IllegalArgumentException when the interface cannot be a service, saying why
     */
    public static <I> ServiceDescriptor<I> of(Class<I> type, CodecRegistry codecs) {
        Objects.requireNonNull(type, "type");
        Objects.requireNonNull(codecs, "codecs");
        if (!type.isInterface() || type.isAnnotation()) {
            throw new IllegalArgumentException(type.getName() + " is not an interface: a service is described by an"
                    + " interface annotated @RpcService");
        }
        RpcService annotation = type.getAnnotation(RpcService.class);
        if (annotation == null) {
            throw new IllegalArgumentException("interface " + type.getName() + " is not annotated @RpcService");
        }
        String name = annotation.name().isEmpty() ? type.getSimpleName() : annotation.name();
        checkName(name, "service name of " + type.getName());
        Map<String, java.lang.reflect.Method> byName = new LinkedHashMap<>();
        Map<Type, Codec<?>> codecCache = new HashMap<>();
        Map<Integer, String> ids = new HashMap<>();
        List<ServiceMethod> methods = new ArrayList<>();
        java.lang.reflect.Method[] candidates = type.getMethods();
        Arrays.sort(candidates, Comparator.comparing(java.lang.reflect.Method::getName)
                .thenComparing(java.lang.reflect.Method::toGenericString));
        for (java.lang.reflect.Method m : candidates) {
            if (Modifier.isStatic(m.getModifiers()) || m.isDefault() || isObjectMethod(m)) {
                if (m.isAnnotationPresent(RpcMethod.class)) {
                    throw new IllegalArgumentException(where(type, m) + ": @RpcMethod on a method that is not an RPC"
                            + " method (default, static and Object methods are local)");
                }
                continue;
            }
            java.lang.reflect.Method earlier = byName.put(m.getName(), m);
            if (earlier != null) {
                throw new IllegalArgumentException(where(type, m) + " is overloaded (also " + earlier.toGenericString()
                        + "): each RPC method needs a name of its own");
            }
            ServiceMethod sm = method(type, name, m, codecs, codecCache);
            String clash = ids.put(sm.method().id(), sm.method().name());
            if (clash != null) {
                throw new IllegalArgumentException(where(type, m) + ": wire name " + sm.method().name()
                        + (clash.equals(sm.method().name()) ? " is used twice" : " has the same wire id as " + clash));
            }
            methods.add(sm);
        }
        if (methods.isEmpty()) {
            throw new IllegalArgumentException("interface " + type.getName() + " has no RPC methods (abstract methods)");
        }
        return new ServiceDescriptor<>(type, name, codecs, methods);
    }

    private static ServiceMethod method(Class<?> service, String serviceName, java.lang.reflect.Method m,
                                        CodecRegistry codecs, Map<Type, Codec<?>> cache) {
        String where = where(service, m);
        if (m.getTypeParameters().length != 0) {
            throw new IllegalArgumentException(where + " is generic: an RPC method's types must be concrete");
        }
        for (Class<?> e : m.getExceptionTypes()) {
            if (!RuntimeException.class.isAssignableFrom(e) && !Error.class.isAssignableFrom(e)) {
                throw new IllegalArgumentException(where + " declares checked " + e.getName() + ": a remote failure"
                        + " reaches the caller as an unchecked RpcException, so it could never be caught; remove it");
            }
        }
        RpcMethod settings = m.getAnnotation(RpcMethod.class);
        String methodName = settings == null || settings.name().isEmpty() ? m.getName() : settings.name();
        checkName(methodName, where + ": method name");
        boolean inline = settings != null && settings.inline();
        Type returnType = m.getGenericReturnType();
        Class<?> rawReturn = raw(returnType);
        if (rawReturn != null && Streaming.class.isAssignableFrom(rawReturn)) {
            return streamingMethod(where, serviceName + "/" + methodName, m, inline, codecs, cache);
        }

        Type[] params = m.getGenericParameterTypes();
        int requestIndex = -1;
        int optionsIndex = -1;
        for (int i = 0; i < params.length; i++) {
            Class<?> raw = raw(params[i]);
            if (raw == CallOptions.class) {
                if (i != params.length - 1) {
                    throw new IllegalArgumentException(where + ": CallOptions must be the last parameter");
                }
                optionsIndex = i;
            } else if (raw == CallContext.class) {
                throw new IllegalArgumentException(where + ": a CallContext parameter cannot come from the client;"
                        + " the server's implementation reads it with Services.context()");
            } else if (requestIndex >= 0) {
                throw new IllegalArgumentException(where + " takes more than one request parameter: an RPC method"
                        + " takes one request (put several values in a record)");
            } else {
                requestIndex = i;
            }
        }
        Type requestType = requestIndex < 0 ? Void.class : params[requestIndex];
        streamingCheck(where, "request", requestType);

        ServiceMethod.Kind kind;
        Type responseType;
        if (rawReturn == CompletableFuture.class) {
            if (!(returnType instanceof ParameterizedType p)) {
                throw new IllegalArgumentException(where + " returns a raw CompletableFuture: give its response type,"
                        + " CompletableFuture<R>");
            }
            if (inline) {
                throw new IllegalArgumentException(where + ": @RpcMethod(inline = true) on an asynchronous method, which"
                        + " always starts on the I/O thread");
            }
            kind = ServiceMethod.Kind.UNARY_ASYNC;
            responseType = p.getActualTypeArguments()[0];
        } else if (rawReturn != null && (Future.class.isAssignableFrom(rawReturn)
                || CompletionStage.class.isAssignableFrom(rawReturn))) {
            throw new IllegalArgumentException(where + " returns " + rawReturn.getName() + ": an asynchronous method"
                    + " returns CompletableFuture<R>");
        } else {
            kind = ServiceMethod.Kind.UNARY;
            responseType = returnType;
        }
        streamingCheck(where, "response", responseType);

        Codec<?> requestCodec = codec(where, "request", requestType, codecs, cache);
        Codec<?> responseCodec = codec(where, "response", responseType, codecs, cache);
        @SuppressWarnings("unchecked")
        Method<Object, Object> method = Method.of(serviceName + "/" + methodName, (Codec<Object>) requestCodec,
                (Codec<Object>) responseCodec);
        return new ServiceMethod(m, method, kind, inline, requestType, responseType, requestIndex, optionsIndex);
    }

    /** {@code Streaming<Q, R> m()}: no parameters, not inline, two concrete message types with codecs. */
    private static ServiceMethod streamingMethod(String where, String wireName, java.lang.reflect.Method m,
                                                 boolean inline, CodecRegistry codecs, Map<Type, Codec<?>> cache) {
        Type returnType = m.getGenericReturnType();
        Class<?> rawReturn = raw(returnType);
        if (rawReturn != Streaming.class) {
            throw new IllegalArgumentException(where + " returns " + rawReturn.getName() + ": a streaming method returns"
                    + " Streaming<Q, R> itself");
        }
        if (!(returnType instanceof ParameterizedType p)) {
            throw new IllegalArgumentException(where + " returns a raw Streaming: give its message types, Streaming<Q, R>"
                    + " (Q the client's, R the server's)");
        }
        if (m.getParameterCount() != 0) {
            throw new IllegalArgumentException(where + " is a streaming method with parameters: it takes none (the"
                    + " messages go through the stream, CallOptions through Streaming.open(options))");
        }
        if (inline) {
            throw new IllegalArgumentException(where + ": @RpcMethod(inline = true) on a streaming method, whose handler"
                    + " always runs on a virtual thread of its own");
        }
        Type requestType = p.getActualTypeArguments()[0];
        Type responseType = p.getActualTypeArguments()[1];
        for (Type t : p.getActualTypeArguments()) {
            if (!(t instanceof Class<?>) && !(t instanceof ParameterizedType)) {
                throw new IllegalArgumentException(where + " returns " + returnType.getTypeName() + ": its message types"
                        + " must be concrete (no wildcard or type variable), Streaming<Q, R>");
            }
        }
        Codec<?> requestCodec = codec(where, "client message", requestType, codecs, cache);
        Codec<?> responseCodec = codec(where, "server message", responseType, codecs, cache);
        @SuppressWarnings("unchecked")
        Method<Object, Object> method = Method.of(wireName, (Codec<Object>) requestCodec, (Codec<Object>) responseCodec);
        return new ServiceMethod(m, method, ServiceMethod.Kind.STREAM, false, requestType, responseType, -1, -1);
    }

    /** Streaming types in a unary signature get a message of their own, rather than a codec-less one. */
    private static void streamingCheck(String where, String what, Type t) {
        Class<?> raw = raw(t);
        if (raw != null && Streaming.class.isAssignableFrom(raw)) {
            throw new IllegalArgumentException(where + ": a Streaming " + what + "; a streaming method returns"
                    + " Streaming<Q, R> itself and takes no parameters");
        }
        if (raw != null && (raw == Flow.Publisher.class || raw == java.util.stream.Stream.class
                || raw == java.util.Iterator.class || raw == Iterable.class)) {
            throw new IllegalArgumentException(where + ": a " + raw.getSimpleName() + " " + what
                    + " would be a streaming signature; declare a streaming method as Streaming<Q, R> m()");
        }
    }

    private static Codec<?> codec(String where, String what, Type t, CodecRegistry codecs, Map<Type, Codec<?>> cache) {
        Codec<?> c = cache.get(t);
        if (c == null) {
            try {
                c = codecs.codecFor(t);
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException(where + ": " + what + " " + e.getMessage(), e);
            }
            cache.put(t, c);
        }
        return c;
    }

    private static Class<?> raw(Type t) {
        if (t instanceof Class<?> c) {
            return c;
        }
        if (t instanceof ParameterizedType p && p.getRawType() instanceof Class<?> c) {
            return c;
        }
        return null;
    }

    private static boolean isObjectMethod(java.lang.reflect.Method m) {
        try {
            return Modifier.isPublic(Object.class.getMethod(m.getName(), m.getParameterTypes()).getModifiers());
        } catch (NoSuchMethodException e) {
            return false;
        }
    }

    private static void checkName(String name, String what) {
        if (name.isEmpty() || name.indexOf('/') >= 0) {
            throw new IllegalArgumentException(what + " '" + name + "' must be non-empty and without '/'");
        }
    }

    private static String where(Class<?> service, java.lang.reflect.Method m) {
        return service.getSimpleName() + "." + m.getName() + (m.getDeclaringClass() == service ? ""
                : " (from " + m.getDeclaringClass().getName() + ")");
    }

    /** @return the interface */
    public Class<I> type() {
        return type;
    }

    /** @return the service name, the prefix of its methods' wire names */
    public String name() {
        return name;
    }

    /** @return the codecs and lookup it was built with */
    public CodecRegistry codecs() {
        return codecs;
    }

    /** @return its RPC methods, ordered by Java name */
    public List<ServiceMethod> methods() {
        return methods;
    }

    /**
     * @param javaName a method's Java name
     * @return that RPC method
     * @throws IllegalArgumentException when the interface has no RPC method of that name
     */
    public ServiceMethod method(String javaName) {
        for (ServiceMethod m : methods) {
            if (m.javaMethod().getName().equals(javaName)) {
                return m;
            }
        }
        throw new IllegalArgumentException(type.getName() + " has no RPC method " + javaName);
    }

    /** A client over {@code channel}: an instance of the client class, defined on first use ({@link ClientClass}). */
    I newClient(RpcChannel channel) {
        MethodHandle constructor = clientConstructor;
        if (constructor == null) {
            constructor = ClientClass.define(this); // two threads at once may define two classes: harmless
            clientConstructor = constructor;
        }
        Method<?, ?>[] wire = new Method<?, ?>[methods.size()];
        Streaming<?, ?>[] streams = new Streaming<?, ?>[methods.size()];
        for (int i = 0; i < wire.length; i++) {
            ServiceMethod m = methods.get(i);
            if (m.kind() == ServiceMethod.Kind.STREAM) {
                streams[i] = new BoundStreaming(channel, m.erased());
            } else {
                wire[i] = m.method();
            }
        }
        try {
            return type.cast((Object) constructor.invokeExact(channel, wire, streams, name + " client over " + channel));
        } catch (Throwable t) {
            throw new AssertionError("the generated client constructor failed", t);
        }
    }

    @Override
    public String toString() {
        return "ServiceDescriptor[" + name + ", " + type.getName() + ", " + methods.size() + " methods]";
    }
}
