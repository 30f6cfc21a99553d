package dev.rdmarpc.rpc.service;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Marks an interface as an RPC service: each of its abstract methods is one RPC method, called
 * through {@link Services#client} and served through {@link Services#register}. Required: an
 * interface without it is refused, so an arbitrary interface is never bound by mistake.
 *
 * <p>The service name prefixes the wire name of each method: {@code service + "/" + method}
 * (see {@link RpcMethod}).
 */
@Documented
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.TYPE)
public @interface RpcService {
    /**
     * The service name on the wire, without {@code '/'}. Default: the interface's simple name
     * ({@code Greeter} for {@code com.example.Greeter}), so wire names stay short and readable in
     * {@code CallContext.methodName()}, interceptors and hand-written {@code Method.of("Greeter/hello", ...)}.
     * Moving the interface to another package keeps its wire names; renaming it changes them. Give a
     * qualified name ({@code "com.example.Greeter"}) when one server hosts services whose simple
     * names clash; a server refuses a second method with the same wire id at registration.
     *
     * @return the service name, or empty for the interface's simple name
     */
    String name() default "";
}
