package dev.rdmarpc.bindingcheck;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Checks that every function of a generated header class resolves in one named shared library:
 * the symbol is looked up in that library alone (not in libc or the process, which jextract's own
 * lookup falls back to), and jextract's {@code name$address()} must return the same address.
 */
public final class SymbolCheck {

    /** How many functions were resolved, and the ones that were not (with the reason). */
    public record Report(int functions, List<String> unresolved) {
    }

    private SymbolCheck() {
    }

    /** Resolves every function of {@code raw} in the library {@code soname}. */
    public static Report run(RawBindings raw, String soname) {
        Map<String, Method> functions = raw.functionAddressAccessors();
        List<String> unresolved = new ArrayList<>();
        try (Arena arena = Arena.ofConfined()) {
            SymbolLookup library = SymbolLookup.libraryLookup(soname, arena);
            for (Map.Entry<String, Method> f : functions.entrySet()) {
                Optional<MemorySegment> own = library.find(f.getKey());
                if (own.isEmpty()) {
                    unresolved.add(f.getKey() + ": not exported by " + soname);
                    continue;
                }
                try {
                    MemorySegment generated = (MemorySegment) f.getValue().invoke(null);
                    if (generated.address() != own.get().address()) {
                        unresolved.add(f.getKey() + ": jextract resolved 0x" + Long.toHexString(generated.address())
                                + ", " + soname + " exports 0x" + Long.toHexString(own.get().address()));
                    }
                } catch (InvocationTargetException e) {
                    unresolved.add(f.getKey() + ": " + e.getCause());
                } catch (IllegalAccessException e) {
                    throw new IllegalStateException(e);
                }
            }
        }
        return new Report(functions.size(), unresolved);
    }
}
