package dev.rdmarpc.examples.rpc;

import dev.rdmarpc.rpc.ClientStream;
import dev.rdmarpc.rpc.RpcClient;
import dev.rdmarpc.rpc.RpcServer;
import dev.rdmarpc.rpc.service.RpcMethod;
import dev.rdmarpc.rpc.service.RpcService;
import dev.rdmarpc.rpc.service.Services;
import dev.rdmarpc.rpc.service.Streaming;
import java.io.PrintStream;
import java.lang.invoke.MethodHandles;
import java.net.InetSocketAddress;
import java.util.concurrent.CompletableFuture;

/**
 * A service described as a Java interface (package {@code dev.rdmarpc.rpc.service}): the server
 * registers an implementation, the client is generated at run time; no {@code Method} constants, no
 * build step. Wire names are {@code Service/method}, so hand-written {@code Method.of("Inventory/count",
 * ...)} calls interoperate.
 *
 * <pre>examples/run service</pre>
 */
public final class ServiceExample {
    /** Any record is a message. */
    public record Item(String name, int quantity) {
    }

    /** The service: wire names "Inventory/count", "Inventory/add", "Inventory/total", "Inventory/restock". */
    @RpcService
    public interface Inventory {
        @RpcMethod(inline = true)                      // short, never blocks: on the I/O thread
        int count(String name);

        Item add(Item item);                           // a virtual thread per call

        CompletableFuture<Integer> total(String ignored); // asynchronous

        Streaming<Item, Item> restock();               // a stream: Item messages each way
    }

    /** The server's implementation. */
    static final class InventoryImpl implements Inventory {
        private final java.util.Map<String, Integer> stock = java.util.Collections.synchronizedMap(new java.util.TreeMap<>());

        @Override
        public int count(String name) {
            return stock.getOrDefault(name, 0);
        }

        @Override
        public Item add(Item item) {
            return new Item(item.name(), stock.merge(item.name(), item.quantity(), Integer::sum));
        }

        @Override
        public CompletableFuture<Integer> total(String ignored) {
            synchronized (stock) {
                return CompletableFuture.completedFuture(stock.values().stream().mapToInt(Integer::intValue).sum());
            }
        }

        @Override
        public Streaming<Item, Item> restock() {       // called once, at registration
            return Streaming.serve(stream -> {         // each stream on a virtual thread of its own
                for (Item i; (i = stream.receive()) != null; ) {
                    stream.send(add(i));
                }
            });
        }
    }

    private ServiceExample() {
    }

    public static void main(String[] args) throws Exception {
        System.exit(run(System.out));
    }

    /** Runs the example, printing to {@code out}; returns the exit code. */
    public static int run(PrintStream out) throws Exception {
        try (RpcServer server = Services.register(RpcServer.builder().bind(new InetSocketAddress("127.0.0.1", 0)),
                        Inventory.class, new InventoryImpl(), MethodHandles.lookup()).start();
             RpcClient client = RpcClient.connect(server.address())) {
            Inventory inventory = Services.client(client, Inventory.class, MethodHandles.lookup());
            out.println("add " + inventory.add(new Item("apple", 3)));
            out.println("count apple " + inventory.count("apple"));
            try (ClientStream<Item, Item> restock = inventory.restock().open()) {
                restock.send(new Item("pear", 2));
                restock.send(new Item("apple", 4));
                restock.halfClose();
                for (Item i; (i = restock.receive()) != null; ) {
                    out.println("restocked " + i);
                }
            }
            out.println("total " + inventory.total("").get());
        }
        return 0;
    }
}
