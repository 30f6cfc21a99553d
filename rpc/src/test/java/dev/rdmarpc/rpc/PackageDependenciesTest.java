package dev.rdmarpc.rpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The layering of the module's packages, read from the compiled classes: every class a class names
 * (in its constant pool: the classes it uses, and the types in its fields', methods' and generic
 * signatures), so a fully qualified name in the code counts as much as an import.
 */
class PackageDependenciesTest {
    private static final Path CLASSES = Path.of("target", "classes").toAbsolutePath();
    private static final Pattern RPC_TYPE = Pattern.compile("dev/rdmarpc/rpc/((?:[a-z_][a-z0-9_]*/)*)[A-Z]");

    @Test
    void settingsDependsOnNoOtherPackageOfTheModule() throws IOException {
        Map<String, Set<String>> uses = usesOf("dev/rdmarpc/rpc/settings/");
        assertTrue(!uses.isEmpty(), "no classes of dev.rdmarpc.rpc.settings under " + CLASSES);
        assertEquals(Map.of(), outside(uses, "dev.rdmarpc.rpc.settings"),
                "settings is read by the transports' configurations and must not depend on them");
    }

    @Test
    void theScanSeesThePackagesAClassNames() throws IOException {
        // LoopSettings names settings.SettingsTable in a field's generic signature, settings.CpuList in a
        // field and a method reference, IdleStrategy of its own package in its methods.
        Set<String> used = usesOf("dev/rdmarpc/rpc/transport/LoopSettings").get("dev.rdmarpc.rpc.transport.LoopSettings");
        assertEquals(Set.of("dev.rdmarpc.rpc.transport", "dev.rdmarpc.rpc.settings"), used);
    }

    /** @return each class under {@code prefix} (a path in the class tree) and the module's packages it names */
    static Map<String, Set<String>> usesOf(String prefix) throws IOException {
        Map<String, Set<String>> uses = new TreeMap<>();
        try (Stream<Path> files = Files.walk(CLASSES)) {
            for (Path f : (Iterable<Path>) files::iterator) {
                String name = CLASSES.relativize(f).toString().replace('\\', '/');
                if (!name.startsWith(prefix) || !name.endsWith(".class") || name.endsWith("module-info.class")
                        || name.endsWith("package-info.class")) {
                    continue;
                }
                Set<String> packages = new TreeSet<>();
                for (String s : utf8Constants(Files.readAllBytes(f))) {
                    Matcher m = RPC_TYPE.matcher(s);
                    while (m.find()) {
                        String sub = m.group(1);
                        packages.add("dev.rdmarpc.rpc" + (sub.isEmpty() ? "" : "." + sub.substring(0, sub.length() - 1).replace('/', '.')));
                    }
                }
                uses.put(name.substring(0, name.length() - ".class".length()).replace('/', '.'), packages);
            }
        }
        return uses;
    }

    /** @return the classes of {@code uses} that name a package other than {@code own}, with those packages */
    static Map<String, Set<String>> outside(Map<String, Set<String>> uses, String own) {
        Map<String, Set<String>> out = new TreeMap<>();
        uses.forEach((cls, packages) -> {
            Set<String> others = new TreeSet<>(packages);
            others.remove(own);
            if (!others.isEmpty()) {
                out.put(cls, others);
            }
        });
        return out;
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
