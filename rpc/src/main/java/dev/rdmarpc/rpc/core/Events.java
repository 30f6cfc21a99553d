package dev.rdmarpc.rpc.core;

import java.net.InetSocketAddress;
import jdk.jfr.Category;
import jdk.jfr.DataAmount;
import jdk.jfr.Description;
import jdk.jfr.Enabled;
import jdk.jfr.Event;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;
import jdk.jfr.Timespan;

/**
 * JDK Flight Recorder events of the RPC layer. Each is created only when JFR has it enabled, so a
 * call costs nothing extra when no recording runs.
 *
 * <p>The per-call events ({@code dev.rdmarpc.ClientCall}, {@code dev.rdmarpc.ServerCall}) are off by
 * default, because a busy server makes hundreds of thousands of calls a second: enable them in the
 * recording's settings ({@code jfr configure}, a .jfc file, or {@code Recording.enable(name)}); a
 * threshold keeps only slow calls. The connection events are on by default.
 */
public final class Events {
    private static final ClientCall CLIENT_PROBE = new ClientCall();
    private static final ServerCall SERVER_PROBE = new ServerCall();
    private static final ConnectionOpened OPENED_PROBE = new ConnectionOpened();
    private static final ConnectionClosed CLOSED_PROBE = new ConnectionClosed();

    private Events() {
    }

    /** @return true when client call events are being recorded */
    public static boolean clientCallEnabled() {
        return CLIENT_PROBE.isEnabled();
    }

    /** @return true when server call events are being recorded */
    public static boolean serverCallEnabled() {
        return SERVER_PROBE.isEnabled();
    }

    public static void clientCall(String method, int methodId, InetSocketAddress peer, String status, long latencyNanos,
                           int requestBytes, int responseBytes) {
        ClientCall e = new ClientCall();
        e.call(method, methodId, peer, status, requestBytes);
        e.latency = latencyNanos;
        e.responseBytes = responseBytes;
        e.commit();
    }

    public static void serverCall(String method, int methodId, InetSocketAddress peer, String status, long durationNanos,
                           int requestBytes, String mode) {
        ServerCall e = new ServerCall();
        e.call(method, methodId, peer, status, requestBytes);
        e.handlerTime = durationNanos;
        e.mode = mode;
        e.commit();
    }

    public static void opened(String transport, String side, InetSocketAddress local, InetSocketAddress remote) {
        if (OPENED_PROBE.isEnabled()) {
            ConnectionOpened e = new ConnectionOpened();
            e.connection(transport, side, local, remote);
            e.commit();
        }
    }

    public static void closed(String transport, String side, InetSocketAddress local, InetSocketAddress remote, String reason) {
        if (CLOSED_PROBE.isEnabled()) {
            ConnectionClosed e = new ConnectionClosed();
            e.connection(transport, side, local, remote);
            e.reason = reason;
            e.commit();
        }
    }

    /** What both call events record of a call. */
    abstract static class CallEvent extends Event {
        @Label("Method")
        String method;
        @Label("Method Id")
        int methodId;
        @Label("Peer")
        String peer;
        @Label("Status")
        String status;
        @Label("Request Bytes")
        @DataAmount
        int requestBytes;

        final void call(String method, int methodId, InetSocketAddress peer, String status, int requestBytes) {
            this.method = method;
            this.methodId = methodId;
            this.peer = String.valueOf(peer);
            this.status = status;
            this.requestBytes = requestBytes;
        }
    }

    /** A call made by a client, recorded when its outcome is known. */
    @Name("dev.rdmarpc.ClientCall")
    @Label("RPC Client Call")
    @Category({"rdmarpc", "RPC"})
    @Description("One RPC call made by a client: method, outcome and latency")
    @StackTrace(false)
    @Enabled(false)
    static final class ClientCall extends CallEvent {
        @Label("Latency")
        @Timespan(Timespan.NANOSECONDS)
        long latency;
        @Label("Response Bytes")
        @DataAmount
        int responseBytes;
    }

    /** A call handled by a server. */
    @Name("dev.rdmarpc.ServerCall")
    @Label("RPC Server Call")
    @Category({"rdmarpc", "RPC"})
    @Description("One RPC call handled by a server: method, outcome and handler time")
    @StackTrace(false)
    @Enabled(false)
    static final class ServerCall extends CallEvent {
        @Label("Handler Time")
        @Timespan(Timespan.NANOSECONDS)
        long handlerTime;
        @Label("Mode")
        String mode;
    }

    /** What both connection events record of a connection. */
    abstract static class ConnectionEvent extends Event {
        @Label("Transport")
        String transport;
        @Label("Side")
        String side;
        @Label("Local Address")
        String local;
        @Label("Remote Address")
        String remote;

        final void connection(String transport, String side, InetSocketAddress local, InetSocketAddress remote) {
            this.transport = transport;
            this.side = side;
            this.local = String.valueOf(local);
            this.remote = String.valueOf(remote);
        }
    }

    /** A connection opened. */
    @Name("dev.rdmarpc.ConnectionOpened")
    @Label("RPC Connection Opened")
    @Category({"rdmarpc", "RPC"})
    @StackTrace(false)
    static final class ConnectionOpened extends ConnectionEvent {
    }

    /** A connection closed. */
    @Name("dev.rdmarpc.ConnectionClosed")
    @Label("RPC Connection Closed")
    @Category({"rdmarpc", "RPC"})
    @StackTrace(false)
    static final class ConnectionClosed extends ConnectionEvent {
        @Label("Reason")
        String reason;
    }
}
