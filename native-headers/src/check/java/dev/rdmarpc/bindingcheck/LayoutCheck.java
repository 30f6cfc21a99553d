package dev.rdmarpc.bindingcheck;

import java.io.IOException;
import java.lang.foreign.GroupLayout;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.PaddingLayout;
import java.lang.foreign.SequenceLayout;
import java.lang.foreign.UnionLayout;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * Compares the layouts jextract generated with what the C compiler says for the same headers.
 *
 * <p>For every struct or union class of a raw package (found generically, see {@link RawBindings})
 * it checks {@code sizeof} and {@code _Alignof} of the type, and for every named member, however
 * deeply nested, {@code offsetof} and {@code sizeof} (and {@code _Alignof} for nested aggregates).
 * Members of anonymous structs/unions (jextract names them {@code $anon$line:col}) are reached the
 * way C reaches them, through the enclosing type; the anonymous aggregates themselves are counted,
 * not compared. Typedef classes jextract derives from a struct class ({@code CUDA_MEMCPY2D extends
 * CUDA_MEMCPY2D_st}) and scalar typedefs of the header class are compared by {@code sizeof}.
 *
 * <p>The probe is one C file that includes the same wrapper header jextract read, prints one
 * number per check, and is compiled with gcc.
 */
public final class LayoutCheck {

    /** What was compared, and every difference found (empty when all agree). */
    public record Report(int types, int fields, int anonymousMembers, int typedefAliases, int scalarTypedefs,
                         int checks, List<String> mismatches) {
        /** One line for the test log. */
        public String summary() {
            return types + " structs/unions and " + fields + " fields compared (" + checks + " checks; "
                    + anonymousMembers + " anonymous members reached through their enclosing type; "
                    + typedefAliases + " struct typedefs and " + scalarTypedefs + " scalar typedefs by size); "
                    + mismatches.size() + " mismatches";
        }
    }

    private record Check(String label, String cExpression, long expected) {
    }

    private final List<Check> checks = new ArrayList<>();
    private int types;
    private int fields;
    private int anonymous;
    private int aliases;
    private int scalars;

    private LayoutCheck() {
    }

    /** gcc on the PATH, if any. */
    public static Optional<Path> gcc() {
        String path = System.getenv("PATH");
        if (path == null) {
            return Optional.empty();
        }
        for (String dir : path.split(java.io.File.pathSeparator)) {
            Path p = Path.of(dir, "gcc");
            if (Files.isExecutable(p)) {
                return Optional.of(p);
            }
        }
        return Optional.empty();
    }

    /**
     * Runs the comparison.
     *
     * @param raw           the generated package
     * @param wrapperHeader the header jextract was given (native-headers/&lt;lib&gt;/&lt;lib&gt;.h)
     * @param includeDirs   extra include directories jextract was given
     * @param workDir       where the probe is written, compiled and run
     */
    public static Report run(RawBindings raw, Path wrapperHeader, List<Path> includeDirs, Path workDir)
            throws IOException, InterruptedException {
        LayoutCheck c = new LayoutCheck();
        for (Class<?> cls : raw.topLevelClasses()) {
            GroupLayout own = RawBindings.declaredLayout(cls);
            if (own != null) {
                c.addType(cls, own);
            } else {
                GroupLayout inherited = inheritedLayout(cls);
                if (inherited != null) {
                    c.aliases++;
                    c.checks.add(new Check("sizeof(" + cls.getSimpleName() + ")",
                            "sizeof(" + cls.getSimpleName() + ")", inherited.byteSize()));
                    c.checks.add(new Check("_Alignof(" + cls.getSimpleName() + ")",
                            "_Alignof(" + cls.getSimpleName() + ")", inherited.byteAlignment()));
                }
            }
        }
        for (Map.Entry<String, MemoryLayout> e : raw.scalarTypedefs().entrySet()) {
            c.scalars++;
            c.checks.add(new Check("sizeof(" + e.getKey() + ")", "sizeof(" + e.getKey() + ")",
                    e.getValue().byteSize()));
        }
        List<String> mismatches = c.compile(wrapperHeader, includeDirs, workDir);
        return new Report(c.types, c.fields, c.anonymous, c.aliases, c.scalars, c.checks.size(), mismatches);
    }

    private static GroupLayout inheritedLayout(Class<?> cls) {
        for (Class<?> s = cls.getSuperclass(); s != null && s.getPackage() == cls.getPackage(); s = s.getSuperclass()) {
            GroupLayout l = RawBindings.declaredLayout(s);
            if (l != null) {
                return l;
            }
        }
        return null;
    }

    private void addType(Class<?> cls, GroupLayout layout) {
        String name = layout.name().orElse("$anon");
        // A typedef of an anonymous struct/union: jextract names the class after the typedef.
        String cType = name.startsWith("$anon") ? cls.getSimpleName()
                : (layout instanceof UnionLayout ? "union " : "struct ") + name;
        types++;
        checks.add(new Check("sizeof(" + cType + ")", "sizeof(" + cType + ")", layout.byteSize()));
        checks.add(new Check("_Alignof(" + cType + ")", "_Alignof(" + cType + ")", layout.byteAlignment()));
        addMembers(cType, layout, 0, "");
    }

    private void addMembers(String cType, GroupLayout group, long base, String prefix) {
        boolean union = group instanceof UnionLayout;
        long offset = 0;
        for (MemoryLayout m : group.memberLayouts()) {
            long at = base + (union ? 0 : offset);
            if (!union) {
                offset += m.byteSize();
            }
            if (m instanceof PaddingLayout) {
                continue;
            }
            String name = m.name().orElseThrow(() -> new IllegalStateException("unnamed member in " + cType));
            if (name.startsWith("$anon$")) {
                // C promotes the members of an anonymous struct/union into the enclosing type.
                anonymous++;
                addMembers(cType, (GroupLayout) m, at, prefix);
                continue;
            }
            String designator = prefix + name;
            String member = "((" + cType + " *)0)->" + designator;
            fields++;
            checks.add(new Check("offsetof(" + cType + ", " + designator + ")",
                    "offsetof(" + cType + ", " + designator + ")", at));
            checks.add(new Check("sizeof(" + cType + "::" + designator + ")", "sizeof(" + member + ")", m.byteSize()));
            MemoryLayout element = m;
            String elementDesignator = designator;
            while (element instanceof SequenceLayout s) {
                element = s.elementLayout();
                elementDesignator += "[0]";
            }
            if (element instanceof GroupLayout g) {
                // The member's alignment where it stands (GCC's __alignof__ of the member itself): in
                // a packed struct (struct epoll_event on x86-64) that is 1, as jextract lays it out,
                // where _Alignof(__typeof__(member)) would name the type's own alignment.
                checks.add(new Check("_Alignof(" + cType + "::" + elementDesignator + ")",
                        "__alignof__(((" + cType + " *)0)->" + elementDesignator + ")", g.byteAlignment()));
                addMembers(cType, g, at, elementDesignator + ".");
            }
        }
    }

    private List<String> compile(Path wrapperHeader, List<Path> includeDirs, Path workDir)
            throws IOException, InterruptedException {
        workDir = Files.createDirectories(workDir.toAbsolutePath());
        StringBuilder src = new StringBuilder();
        src.append("/* Layout probe written by dev.rdmarpc.bindingcheck.LayoutCheck. */\n")
                .append("#include <stddef.h>\n#include <stdio.h>\n")
                .append("#include \"").append(wrapperHeader.toAbsolutePath()).append("\"\n")
                .append("int main(void) {\n");
        for (int i = 0; i < checks.size(); i++) {
            src.append("    printf(\"%d %lld\\n\", ").append(i).append(", (long long)(")
                    .append(checks.get(i).cExpression()).append("));\n");
        }
        src.append("    return 0;\n}\n");
        Path probe = workDir.resolve("layout_probe.c");
        Path exe = workDir.resolve("layout_probe");
        Files.writeString(probe, src, StandardCharsets.UTF_8);

        List<String> cmd = new ArrayList<>(List.of(gcc().orElseThrow().toString(), "-std=gnu11", "-w"));
        for (Path dir : includeDirs) {
            cmd.add("-I");
            cmd.add(dir.toString());
        }
        cmd.addAll(List.of("-o", exe.toString(), probe.toString()));
        run(cmd, workDir);
        String out = run(List.of(exe.toString()), workDir);

        long[] actual = new long[checks.size()];
        boolean[] seen = new boolean[checks.size()];
        for (String line : out.split("\n")) {
            if (line.isBlank()) {
                continue;
            }
            String[] parts = line.trim().split(" ");
            int i = Integer.parseInt(parts[0]);
            actual[i] = Long.parseLong(parts[1]);
            seen[i] = true;
        }
        List<String> mismatches = new ArrayList<>();
        for (int i = 0; i < checks.size(); i++) {
            Check ck = checks.get(i);
            if (!seen[i]) {
                mismatches.add(ck.label() + ": no output from the probe");
            } else if (actual[i] != ck.expected()) {
                mismatches.add(ck.label() + ": C says " + actual[i] + ", jextract layout says " + ck.expected());
            }
        }
        return mismatches;
    }

    private static String run(List<String> cmd, Path dir) throws IOException, InterruptedException {
        Path log = Files.createTempFile(dir, "run", ".log");
        Process p = new ProcessBuilder(cmd).directory(dir.toFile()).redirectErrorStream(true)
                .redirectOutput(log.toFile()).start();
        if (!p.waitFor(120, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new IOException("timed out after 120 s: " + String.join(" ", cmd));
        }
        String out = Files.readString(log, StandardCharsets.UTF_8);
        Files.delete(log);
        if (p.exitValue() != 0) {
            throw new IOException("failed (exit " + p.exitValue() + "): " + String.join(" ", cmd) + "\n" + out);
        }
        return out;
    }
}
