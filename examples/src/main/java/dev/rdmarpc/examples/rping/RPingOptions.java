package dev.rdmarpc.examples.rping;

import java.net.InetAddress;
import java.net.UnknownHostException;

/**
 * The command line of rdma-core's {@code rping}, as far as this example speaks it:
 *
 * <pre>
 * rping -s [-vVdq] [-S size] [-C count] [-a addr] [-p port]
 * rping -c [-vVdq] [-S size] [-C count] [-I addr] -a addr [-p port]
 * </pre>
 *
 * {@code -s}/{@code -c} server or client, {@code -a} the server's address (the server binds to it;
 * any address when left out), {@code -I} the client's source address, {@code -p} port (7174),
 * {@code -S} ping data size (64; 26 to 65,535), {@code -C} ping count (client; 0 = forever),
 * {@code -v} print the ping data, {@code -V} validate it (client), {@code -d} debug lines,
 * {@code -q} a queue pair this program creates and moves through its states itself (with the
 * connection manager's attributes) instead of one made by {@code rdma_create_qp}. Flags combine as
 * with getopt ({@code -vV}). The persistent server ({@code -P}) is not implemented.
 */
record RPingOptions(boolean server, InetAddress address, InetAddress source, int port, int size, int count,
                    boolean verbose, boolean validate, boolean debug, boolean selfCreatedQueuePair) {
    static final int DEFAULT_PORT = 7174;
    static final int DEFAULT_SIZE = 64;
    /** {@code sizeof(stringify(INT_MAX)) + sizeof(RPING_MSG_FMT)}: the longest "rdma-ping-N: " and its NUL fit. */
    static final int MIN_SIZE = 26;
    static final int MAX_SIZE = 64 * 1024 - 1;

    static final String USAGE = """
            rping -s [-vVdq] [-S size] [-C count] [-a addr] [-p port]
            rping -c [-vVdq] [-S size] [-C count] [-I addr] -a addr [-p port]
            \t-c\t\tclient side
            \t-I\t\tSource address to bind to for client.
            \t-s\t\tserver side
            \t-v\t\tdisplay ping data to stdout
            \t-V\t\tvalidate ping data
            \t-d\t\tdebug printfs
            \t-S size \tping data size
            \t-C count\tping count times
            \t-a addr\t\taddress
            \t-p port\t\tport
            \t-q\t\tuse self-created, self-modified QP""";

    /** A command line that is not rping's: the message says what is wrong. */
    static final class UsageException extends Exception {
        UsageException(String message) {
            super(message);
        }
    }

    static RPingOptions parse(String... args) throws UsageException {
        Boolean server = null;
        InetAddress address = null;
        InetAddress source = null;
        int port = DEFAULT_PORT;
        int size = DEFAULT_SIZE;
        int count = 0;
        boolean verbose = false;
        boolean validate = false;
        boolean debug = false;
        boolean selfQp = false;
        for (int i = 0; i < args.length; i++) {
            String arg = args[i];
            if (arg.length() < 2 || arg.charAt(0) != '-') {
                throw new UsageException("unexpected argument: " + arg);
            }
            for (int j = 1; j < arg.length(); j++) {
                char flag = arg.charAt(j);
                switch (flag) {
                    case 's' -> server = true;
                    case 'c' -> server = false;
                    case 'v' -> verbose = true;
                    case 'V' -> validate = true;
                    case 'd' -> debug = true;
                    case 'q' -> selfQp = true;
                    case 'a', 'I', 'p', 'S', 'C' -> {
                        String value;
                        if (j + 1 < arg.length()) {
                            value = arg.substring(j + 1);
                        } else if (i + 1 < args.length) {
                            value = args[++i];
                        } else {
                            throw new UsageException("-" + flag + " needs a value");
                        }
                        switch (flag) {
                            case 'a' -> address = address(value);
                            case 'I' -> source = address(value);
                            case 'p' -> port = number(flag, value, 0, 65_535);
                            case 'S' -> size = number(flag, value, MIN_SIZE, MAX_SIZE);
                            default -> count = number(flag, value, 0, Integer.MAX_VALUE);
                        }
                        j = arg.length(); // the value took the rest of this argument
                    }
                    default -> throw new UsageException("unknown option -" + flag);
                }
            }
        }
        if (server == null) {
            throw new UsageException("say -s (server) or -c (client)");
        }
        if (!server && address == null) {
            throw new UsageException("a client needs the server's address (-a)");
        }
        return new RPingOptions(server, address, source, port, size, count, verbose, validate, debug, selfQp);
    }

    private static InetAddress address(String value) throws UsageException {
        try {
            return InetAddress.getByName(value);
        } catch (UnknownHostException e) {
            throw new UsageException("invalid hostname or IP address: " + value);
        }
    }

    private static int number(char flag, String value, int min, int max) throws UsageException {
        int n;
        try {
            n = Integer.parseInt(value);
        } catch (NumberFormatException e) {
            throw new UsageException("-" + flag + " takes a number, not " + value);
        }
        if (n < min || n > max) {
            throw new UsageException("-" + flag + " " + n + " is outside " + min + ".." + max);
        }
        return n;
    }
}
