package dev.rdmarpc.rpc.settings;

import dev.rdmarpc.rpc.transport.IdleStrategy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.BiConsumer;
import java.util.function.Function;

/**
 * The settings of one configuration class, each declared once: its name, how to read it from text,
 * how to get and set it. The class's system-property defaults ({@code <prefix><name>}, in Aeron's
 * manner), its {@code copy()} and its {@code toString()} all come from this one list, so a setting
 * cannot be added to one and forgotten in another.
 *
 * <p>Thread-safe once built (it holds functions only); build it in a static initialiser.
 *
 * @param <C> the configuration class
 */
public final class SettingsTable<C> {
    /** One setting: text parser ({@code null} when it cannot come from a property), getter, setter. */
    private record Setting<C, T>(String name, Function<String, T> parse, Function<C, T> get, BiConsumer<C, T> set) {
        void copy(C from, C to) {
            set.accept(to, get.apply(from));
        }
    }

    private final String typeName;
    private final String propertyPrefix;
    private final List<Setting<C, ?>> settings = new ArrayList<>();

    /**
     * @param typeName       the name {@link #toString(Object)} starts with
     * @param propertyPrefix the system properties' common prefix, e.g. {@code rdmarpc.rdma.}
     */
    public SettingsTable(String typeName, String propertyPrefix) {
        this.typeName = typeName;
        this.propertyPrefix = propertyPrefix;
    }

    /**
     * Declares a setting.
     *
     * @param name  its name: the setter's and getter's, and the property's after the prefix
     * @param parse reads the property's text ({@code null}: not settable by a property)
     * @param get   reads the setting from a configuration
     * @param set   writes it (the setter, so its checks apply)
     * @return this
     */
    public <T> SettingsTable<C> add(String name, Function<String, T> parse, Function<C, T> get, BiConsumer<C, T> set) {
        settings.add(new Setting<>(name, parse, get, set));
        return this;
    }

    /** @return the system property that gives {@code setting} its default */
    public String property(String setting) {
        return propertyPrefix + setting;
    }

    /** @return every system property this table reads, in declaration order */
    public List<String> properties() {
        List<String> names = new ArrayList<>();
        for (Setting<C, ?> s : settings) {
            if (s.parse != null) {
                names.add(property(s.name));
            }
        }
        return names;
    }

    /**
     * Sets every setting whose system property is set ({@code <prefix><name>}) to its value: called by
     * the configuration's constructor, so the properties are defaults that setters still override.
     *
     * @throws IllegalArgumentException naming the property, when its value cannot be read
     */
    public void applySystemProperties(C target) {
        for (Setting<C, ?> s : settings) {
            if (s.parse != null) {
                String text = System.getProperty(property(s.name));
                if (text != null) {
                    apply(s, target, text);
                }
            }
        }
    }

    private <T> void apply(Setting<C, T> s, C target, String text) {
        T value;
        try {
            value = s.parse.apply(text.trim());
        } catch (RuntimeException e) {
            throw new IllegalArgumentException("system property " + property(s.name) + "='" + text + "': " + e.getMessage(), e);
        }
        s.set.accept(target, value);
    }

    /** Copies every setting of {@code from} to {@code to}. */
    public void copy(C from, C to) {
        for (Setting<C, ?> s : settings) {
            s.copy(from, to);
        }
    }

    /** @return {@code TypeName[name=value, ...]} with every setting in declaration order */
    public String toString(C c) {
        StringBuilder sb = new StringBuilder(typeName).append('[');
        for (int i = 0; i < settings.size(); i++) {
            Setting<C, ?> s = settings.get(i);
            if (i > 0) {
                sb.append(", ");
            }
            sb.append(s.name).append('=').append(s.get.apply(c));
        }
        return sb.append(']').toString();
    }

    // ------------------------------------------------------------------ parsers of property text

    /** Reads a decimal int. */
    public static int parseInt(String text) {
        return Integer.parseInt(text);
    }

    /** Reads {@code true} or {@code false}, nothing else. */
    public static boolean parseBoolean(String text) {
        return switch (text.toLowerCase(Locale.ROOT)) {
            case "true" -> true;
            case "false" -> false;
            default -> throw new IllegalArgumentException("expected true or false");
        };
    }

    /** Reads a byte count: a number, optionally followed by K, M or G (binary: 64K is 65536). */
    public static long parseBytes(String text) {
        String t = text.toUpperCase(Locale.ROOT);
        int shift = switch (t.isEmpty() ? ' ' : t.charAt(t.length() - 1)) {
            case 'K' -> 10;
            case 'M' -> 20;
            case 'G' -> 30;
            default -> 0;
        };
        long n = Long.parseLong(shift == 0 ? t : t.substring(0, t.length() - 1));
        if (n < 0 || (shift > 0 && n > (Long.MAX_VALUE >> shift))) {
            throw new IllegalArgumentException("not a byte count");
        }
        return n << shift;
    }

    /** Reads a byte count (see {@link #parseBytes}) that fits an int. */
    public static int parseIntBytes(String text) {
        return Math.toIntExact(parseBytes(text));
    }

    /** Reads a duration: a number followed by ns, us, ms or s ({@code 10ms}), or ISO-8601 ({@code PT10S}). */
    public static Duration parseDuration(String text) {
        String t = text.toLowerCase(Locale.ROOT);
        if (t.startsWith("pt")) {
            return Duration.parse(text);
        }
        int unitAt = 0;
        while (unitAt < t.length() && Character.isDigit(t.charAt(unitAt))) {
            unitAt++;
        }
        long n = Long.parseLong(t.substring(0, unitAt));
        return switch (t.substring(unitAt)) {
            case "ns" -> Duration.ofNanos(n);
            case "us" -> Duration.ofNanos(Math.multiplyExact(n, 1_000L));
            case "ms" -> Duration.ofMillis(n);
            case "s" -> Duration.ofSeconds(n);
            default -> throw new IllegalArgumentException("a duration needs a unit: ns, us, ms or s");
        };
    }

    /** Reads an idle strategy ({@link IdleStrategy#parse}). */
    public static IdleStrategy parseIdleStrategy(String text) {
        return IdleStrategy.parse(text);
    }
}
