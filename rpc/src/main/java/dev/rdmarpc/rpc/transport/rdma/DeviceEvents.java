package dev.rdmarpc.rpc.transport.rdma;

import dev.rdmarpc.ibverbs.verbs.AsyncEvent;
import dev.rdmarpc.ibverbs.verbs.AsyncEventType;
import dev.rdmarpc.ibverbs.verbs.SharedReceiveQueue;
import dev.rdmarpc.rpc.transport.rdma.DeviceTable.Device;
import dev.rdmarpc.rpc.transport.rdma.DeviceTable.FaultHandler;
import java.util.function.Consumer;

/**
 * Where a device's async events go ({@link DeviceTable#onAsyncEvent}): a port that went down, a
 * device that failed, a queue pair fault to the {@link FaultHandler}; a shared receive queue's limit
 * to its handler; the rest to the log.
 */
final class DeviceEvents {
    private static final System.Logger LOG = System.getLogger(DeviceTable.class.getName());

    private DeviceEvents() {
    }

    /** One event {@code ev} of {@code d}, on its monitor's thread, to {@code faults} or {@code srqLimits} (either may be null). */
    static void dispatch(Device d, AsyncEvent ev, FaultHandler faults, Consumer<SharedReceiveQueue> srqLimits) {
        AsyncEventType type = ev.type();
        switch (type) {
            case SRQ_LIMIT_REACHED -> {
                var h = srqLimits;
                if (h != null && ev.sharedReceiveQueue() != null) {
                    h.accept(ev.sharedReceiveQueue());
                }
            }
            case PORT_ERR -> {
                if (ev.port() == d.port && faults != null) {
                    faults.onFault(d, null, "RDMA port " + d.port + " of " + d.context.name() + " went down (" + describe(type) + ")");
                }
            }
            case DEVICE_FATAL -> {
                if (faults != null) {
                    faults.onFault(d, null, "RDMA device " + d.context.name() + " failed (" + describe(type) + ")");
                }
            }
            case QP_FATAL, QP_REQ_ERR, QP_ACCESS_ERR -> {
                if (faults != null && ev.queuePair() != null) {
                    faults.onFault(d, ev.queuePair(), "RDMA queue pair " + ev.queuePair().qpNum() + " on " + d.context.name()
                            + " failed (" + describe(type) + ")");
                }
            }
            case PORT_ACTIVE -> LOG.log(System.Logger.Level.INFO, "RDMA port {0} of {1} is active again", ev.port(), d.context.name());
            default -> LOG.log(System.Logger.Level.DEBUG, "RDMA async event on {0}: {1}", d.context.name(), describe(type));
        }
    }

    private static String describe(AsyncEventType type) {
        try {
            return "IBV_EVENT_" + type.name() + ": " + type.text();
        } catch (RuntimeException e) {
            return "IBV_EVENT_" + type.name();
        }
    }
}
