import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;

/**
 * The hostile peers of scripts/rss-after-attack (issue 15): opens BIG connections that each send a
 * frame header declaring a 16 MiB payload and then BIG_BODY bytes of it, PARTIAL connections that send
 * 16 of a header's 32 bytes, and IDLE connections that send one byte; then all hold still for HOLD ms
 * and close. Source addresses rotate over 127.0.0.2 .. 127.0.0.20, since a server takes at most 512
 * connections from one address. Bounded: at most 20,000 connections and 2 minutes of connecting.
 *
 * <pre>java scripts/lib/HostilePeers.java HOST PORT IDLE BIG PARTIAL HOLD_MS BIG_BODY</pre>
 */
public final class HostilePeers {
    public static void main(String[] args) throws Exception {
        String host = args[0];
        int port = Integer.parseInt(args[1]);
        int idle = Integer.parseInt(args[2]);
        int big = Integer.parseInt(args[3]);
        int partial = Integer.parseInt(args[4]);
        long holdMs = Long.parseLong(args[5]);
        byte[] body = new byte[Integer.parseInt(args[6])];
        ByteBuffer h = ByteBuffer.allocate(32).order(ByteOrder.LITTLE_ENDIAN);
        h.putInt(0x524D4452).put((byte) 1).put((byte) 1).putShort((short) 0).putLong(1).putInt(0x12345678)
                .putShort((short) 0).putShort((short) 0).putInt(16 << 20).putInt(0);
        byte[] header = h.array();
        int total = Math.min(20_000, big + partial + idle);
        long deadline = System.nanoTime() + 120_000_000_000L;
        List<Socket> sockets = new ArrayList<>();
        int failed = 0;
        for (int i = 0; i < total && System.nanoTime() < deadline; i++) {
            Socket s = new Socket();
            try {
                s.bind(new InetSocketAddress("127.0.0." + (2 + i % 19), 0));
                s.connect(new InetSocketAddress(host, port), 2000);
                OutputStream o = s.getOutputStream();
                if (i < big) {
                    o.write(header);
                    o.write(body);
                } else if (i < big + partial) {
                    o.write(header, 0, 16);
                } else {
                    o.write(1);
                }
                o.flush();
                sockets.add(s);
            } catch (IOException e) {
                failed++;
                s.close();
            }
        }
        System.out.println("hostile peers: " + sockets.size() + " connected (the server refuses those over its limits),"
                + " " + failed + " failed; holding " + holdMs + " ms");
        Thread.sleep(holdMs);
        for (Socket s : sockets) {
            try {
                s.close();
            } catch (IOException e) {
                // closed already
            }
        }
    }
}
