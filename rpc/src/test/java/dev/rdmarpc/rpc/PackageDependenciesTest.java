package dev.rdmarpc.rpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The layering of the module's classes, read from the compiled classes: every class a class names in
 * its constant pool (the classes it uses, and the types in its fields', methods' and generic
 * signatures), so a fully qualified name in the code counts as much as an import. A nested class
 * counts as part of its top-level class.
 */
class PackageDependenciesTest {
    private static final Path CLASSES = Path.of("target", "classes").toAbsolutePath();
    private static final Pattern RPC_CLASS = Pattern.compile("dev/rdmarpc/rpc/(?:[a-z_][a-z0-9_]*/)*[A-Z][\\w$]*");
    private static final String ROOT = "dev.rdmarpc.rpc";
    private static final String CORE = "dev.rdmarpc.rpc.core";

    /** Each top-level class of the module and the module's top-level classes it names. */
    private static Map<String, Set<String>> uses;

    @BeforeAll
    static void readClasses() throws IOException {
        uses = classUses();
        assertTrue(uses.size() > 100, "the module's classes under " + CLASSES + ": " + uses.size());
    }

    @Test
    void settingsDependsOnNoOtherPackageOfTheModule() {
        Map<String, Set<String>> outside = new TreeMap<>();
        uses.forEach((cls, used) -> {
            if (packageOf(cls).equals(ROOT + ".settings")) {
                used.stream().filter(u -> !packageOf(u).equals(ROOT + ".settings"))
                        .forEach(u -> outside.computeIfAbsent(cls, k -> new TreeSet<>()).add(u));
            }
        });
        assertTrue(uses.keySet().stream().anyMatch(c -> packageOf(c).equals(ROOT + ".settings")), "settings' classes");
        assertEquals(Map.of(), outside, "settings is read by the transports' configurations and must not depend on them");
    }

    /**
     * The two transports are siblings: RDMA's TCP side (its hellos, liveness connections and plain
     * TCP clients) runs on the shared {@code transport.stream} connection code, on its own threads,
     * not on the TCP transport; and the shared code knows neither transport.
     */
    @Test
    void theRdmaTransportAndTheSharedTcpConnectionNameNoClassOfTheTcpTransport() {
        Map<String, Set<String>> named = new TreeMap<>();
        for (String pkg : List.of(ROOT + ".transport.rdma", ROOT + ".transport.stream")) {
            uses.forEach((cls, used) -> {
                if (packageOf(cls).equals(pkg)) {
                    used.stream().filter(u -> packageOf(u).equals(ROOT + ".transport.tcp")
                                    || pkg.endsWith("stream") && packageOf(u).equals(ROOT + ".transport.rdma"))
                            .forEach(u -> named.computeIfAbsent(cls, k -> new TreeSet<>()).add(u));
                }
            });
        }
        assertTrue(uses.keySet().stream().anyMatch(c -> packageOf(c).equals(ROOT + ".transport.stream")), "stream's classes");
        assertEquals(Map.of(), named, "classes of transport.rdma or transport.stream and the transport classes each names");
    }

    /**
     * The API package holds two layers: what a call is made of (Metadata, Status, Method, the handler
     * and listener interfaces, ...), which {@code core} implements calls with, and the entry points
     * that build and drive {@code core} (the client, pool and server and their builders). Nothing core
     * depends on, directly or through other classes of the module, may itself depend on core: the
     * root package names both layers, but its classes and core's form no cycle.
     */
    @Test
    void nothingCoreDependsOnDependsOnCore() {
        assertEquals(List.of(), chainBackIntoCore(uses), "a chain of references from core back into core");
    }

    @Test
    void theChainCheckFindsAChainBackIntoCore() {
        Map<String, Set<String>> g = new HashMap<>();
        g.put(CORE + ".client.ClientCore", Set.of(ROOT + ".Metadata", CORE + ".server.ServerCore"));
        g.put(CORE + ".server.ServerCore", Set.of(ROOT + ".Status"));
        g.put(ROOT + ".Metadata", Set.of(ROOT + ".CallOptions"));
        g.put(ROOT + ".CallOptions", Set.of(ROOT + ".AbstractChannel"));
        g.put(ROOT + ".AbstractChannel", Set.of(CORE + ".client.ClientCore", ROOT + ".Metadata"));
        assertEquals(List.of(CORE + ".client.ClientCore", ROOT + ".Metadata", ROOT + ".CallOptions",
                ROOT + ".AbstractChannel", CORE + ".client.ClientCore"), chainBackIntoCore(g));
        g.put(ROOT + ".CallOptions", Set.of(ROOT + ".Status"));
        assertEquals(List.of(), chainBackIntoCore(g));
    }

    /**
     * The entry points (client, pool, server and their builders) reach the implementation only through
     * {@link RpcProvider}, found with {@link java.util.ServiceLoader}: no class of the root package
     * names a class of core.
     */
    @Test
    void theRootPackageNamesNoClassOfCore() {
        Map<String, Set<String>> named = new TreeMap<>();
        uses.forEach((cls, used) -> {
            if (packageOf(cls).equals(ROOT)) {
                used.stream().filter(PackageDependenciesTest::inCore)
                        .forEach(u -> named.computeIfAbsent(cls, k -> new TreeSet<>()).add(u));
            }
        });
        assertEquals(Map.of(), named, "classes of the root package and the classes of core each names");
    }

    /**
     * Core depends on the root package (the vocabulary calls are made of); the root package must not
     * depend on core, neither directly nor through any other package of the module, so that the two
     * form no package cycle. Core's subpackages count as core.
     */
    @Test
    void noPackageCycleBetweenRootAndCore() {
        Map<String, Set<String>> packages = packageUses(uses);
        assertEquals(List.of(), packagePath(packages, ROOT, CORE), "a chain of packages from the root package into core (core depends on the root package)");
        assertEquals(List.of(CORE, ROOT), packagePath(packages, CORE, ROOT), "core uses the root package's vocabulary");
    }

    @Test
    void thePackageCycleCheckFindsAPathThroughAnotherPackage() {
        Map<String, Set<String>> g = new HashMap<>();
        g.put(CORE + ".client.ClientCore", Set.of(ROOT + ".Metadata"));
        g.put(ROOT + ".RpcClient", Set.of(ROOT + ".Metadata", ROOT + ".gpu.Staging"));
        g.put(ROOT + ".gpu.Staging", Set.of(ROOT + ".buffer.Pool"));
        g.put(ROOT + ".buffer.Pool", Set.of(CORE + ".server.ServerCore"));
        Map<String, Set<String>> packages = packageUses(g);
        assertEquals(List.of(ROOT, ROOT + ".gpu", ROOT + ".buffer", CORE), packagePath(packages, ROOT, CORE));
        assertEquals(List.of(CORE, ROOT), packagePath(packages, CORE, ROOT));
        g.put(ROOT + ".buffer.Pool", Set.of(ROOT + ".Metadata"));
        assertEquals(List.of(), packagePath(packageUses(g), ROOT, CORE));
    }

    /** @return each package of {@code g}'s classes and the other packages they name, core's subpackages as core */
    static Map<String, Set<String>> packageUses(Map<String, Set<String>> g) {
        Map<String, Set<String>> packages = new TreeMap<>();
        g.forEach((cls, used) -> {
            Set<String> to = packages.computeIfAbsent(packageNode(cls), k -> new TreeSet<>());
            used.forEach(u -> to.add(packageNode(u)));
            to.remove(packageNode(cls));
        });
        return packages;
    }

    /** @return the shortest chain of packages from {@code from} to {@code to} (both included), or an empty list */
    static List<String> packagePath(Map<String, Set<String>> packages, String from, String to) {
        Map<String, String> cameFrom = new HashMap<>();
        cameFrom.put(from, null);
        ArrayDeque<String> queue = new ArrayDeque<>(List.of(from));
        while (!queue.isEmpty()) {
            String p = queue.remove();
            if (p.equals(to)) {
                List<String> path = new ArrayList<>();
                for (String q = p; q != null; q = cameFrom.get(q)) {
                    path.add(q);
                }
                Collections.reverse(path);
                return path;
            }
            for (String next : packages.getOrDefault(p, Set.of())) {
                if (!cameFrom.containsKey(next)) {
                    cameFrom.put(next, p);
                    queue.add(next);
                }
            }
        }
        return List.of();
    }

    private static String packageNode(String cls) {
        return inCore(cls) ? CORE : packageOf(cls);
    }

    @Test
    void theScanSeesTheClassesAClassNames() {
        // LoopSettings names SettingsTable in a field's generic signature, CpuList in a field and a
        // method reference, IdleStrategy in its methods.
        Set<String> used = uses.get(ROOT + ".transport.LoopSettings");
        assertTrue(used.containsAll(Set.of(ROOT + ".settings.SettingsTable", ROOT + ".settings.CpuList",
                ROOT + ".transport.IdleStrategy")), used.toString());
        assertFalse(used.contains(ROOT + ".transport.LoopSettings"), "a class does not count itself");
    }

    /**
     * @return a chain of references that starts in core, leaves it and comes back to it (the class it
     *         comes back to last), or an empty list when there is none
     */
    static List<String> chainBackIntoCore(Map<String, Set<String>> g) {
        Map<String, String> cameFrom = new HashMap<>();
        ArrayDeque<String> queue = new ArrayDeque<>();
        for (String c : new TreeSet<>(g.keySet())) {
            if (inCore(c)) {
                cameFrom.put(c, null);
                queue.add(c);
            }
        }
        while (!queue.isEmpty()) {
            String c = queue.remove();
            for (String u : new TreeSet<>(g.getOrDefault(c, Set.of()))) {
                if (cameFrom.containsKey(u)) {
                    continue;
                }
                cameFrom.put(u, c);
                queue.add(u);
                for (String back : new TreeSet<>(g.getOrDefault(u, Set.of()))) {
                    if (inCore(back)) { // u is outside core (core's own classes were all seen first)
                        List<String> chain = new ArrayList<>();
                        for (String p = u; p != null; p = cameFrom.get(p)) {
                            chain.add(p);
                        }
                        Collections.reverse(chain);
                        chain.add(back);
                        return chain;
                    }
                }
            }
        }
        return List.of();
    }

    private static boolean inCore(String cls) {
        String p = packageOf(cls);
        return p.equals(CORE) || p.startsWith(CORE + ".");
    }

    private static String packageOf(String cls) {
        return cls.substring(0, cls.lastIndexOf('.'));
    }

    /** @return each top-level class under {@link #CLASSES} and the module's other top-level classes it names */
    static Map<String, Set<String>> classUses() throws IOException {
        Map<String, Set<String>> uses = new TreeMap<>();
        try (Stream<Path> files = Files.walk(CLASSES.resolve("dev").resolve("rdmarpc").resolve("rpc"))) {
            files.filter(f -> f.toString().endsWith(".class") && !f.getFileName().toString().equals("package-info.class"))
                    .forEach(f -> {
                        String cls = topLevel(CLASSES.relativize(f).toString().replace('\\', '/').replaceAll("\\.class$", ""));
                        Set<String> used = uses.computeIfAbsent(cls, k -> new TreeSet<>());
                        try {
                            for (String s : utf8Constants(Files.readAllBytes(f))) {
                                Matcher m = RPC_CLASS.matcher(s);
                                while (m.find()) {
                                    used.add(topLevel(m.group()));
                                }
                            }
                        } catch (IOException e) {
                            throw new UncheckedIOException(f.toString(), e);
                        }
                        used.remove(cls);
                    });
        }
        return uses;
    }

    private static String topLevel(String internalName) {
        int nested = internalName.indexOf('$');
        return (nested < 0 ? internalName : internalName.substring(0, nested)).replace('/', '.');
    }

    /** @return the UTF-8 entries of a class file's constant pool (names, descriptors, signatures, strings) */
    static Set<String> utf8Constants(byte[] classFile) throws IOException {
        DataInputStream in = new DataInputStream(new ByteArrayInputStream(classFile));
        if (in.readInt() != 0xCAFEBABE) {
            throw new IOException("not a class file");
        }
        in.readUnsignedShort();
        in.readUnsignedShort();
        int count = in.readUnsignedShort();
        Set<String> strings = new TreeSet<>();
        for (int i = 1; i < count; i++) {
            int tag = in.readUnsignedByte();
            switch (tag) {
                case 1 -> strings.add(in.readUTF());
                case 7, 8, 16, 19, 20 -> in.skipNBytes(2);
                case 15 -> in.skipNBytes(3);
                case 3, 4, 9, 10, 11, 12, 17, 18 -> in.skipNBytes(4);
                case 5, 6 -> {
                    in.skipNBytes(8);
                    i++;
                }
                default -> throw new IOException("constant pool tag " + tag + " at entry " + i);
            }
        }
        return strings;
    }
}
