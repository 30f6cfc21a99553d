package dev.rdmarpc.rpc.service;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Optional settings of one method of an {@link RpcService} interface. Without it a method is named
 * by its Java name and a synchronous method is served on a virtual thread per call.
 */
@Documented
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.METHOD)
public @interface RpcMethod {
    /**
     * The method's name within its service, without {@code '/'}. Its wire name, the name of its
     * {@link dev.rdmarpc.rpc.Method}, is {@code serviceName + "/" + name}, and its wire id the FNV-1a
     * hash of that ({@link dev.rdmarpc.rpc.Method#id()}).
     *
     * @return the name, or empty for the Java method's name
     */
    String name() default "";

    /**
     * How the server runs a synchronous method ({@code R m(Q)}): {@code false} (the default) on a
     * new virtual thread per call ({@code RpcServer.Builder.registerBlocking}), where it may block;
     * {@code true} inline on the connection's I/O thread ({@code register}), cheaper, for short
     * methods that never block (a blocked I/O thread stalls every connection it serves). A method
     * returning a {@link java.util.concurrent.CompletableFuture} always starts on the I/O thread
     * ({@code registerAsync}) and must not block there; this setting is refused on it. The client
     * side ignores it.
     *
     * @return true to run on the I/O thread
     */
    boolean inline() default false;
}
