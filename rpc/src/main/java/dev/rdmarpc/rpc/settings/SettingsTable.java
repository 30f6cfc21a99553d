package dev.rdmarpc.rpc.settings;

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
 * <p>A setting may be a group: another configuration object the class holds (created with the class,
 * edited in place), declared by its own table with {@link #group}. The group's settings take their
 * defaults from {@code <prefix><group>.<name>}, are copied into the copy's own group, and are listed
 * in {@code toString()} as {@code group=Type[name=value, ...]}.
 *
 * <p>Thread-safe once built (it holds functions only); build it in a static initialiser.
 *
 * @param <C> the configuration class
 */
public final class SettingsTable<C> {
    /** One entry of the table: a setting, or a group of them. */
    private interface Entry<C> {
        void properties(String prefix, List<String> into);

        void applySystemProperties(C target, String prefix);

        void copy(C from, C to);

        void append(StringBuilder sb, C c);
    }

    /** One setting: text parser ({@code null} when it cannot come from a property), getter, setter. */
    private record Setting<C, T>(String name, Function<String, T> parse, Function<C, T> get, BiConsumer<C, T> set)
            implements Entry<C> {
        @Override
        public void properties(String prefix, List<String> into) {
            if (parse != null) {
                into.add(prefix + name);
            }
        }

        @Override
        public void applySystemProperties(C target, String prefix) {
            if (parse == null) {
                return;
            }
            String property = prefix + name;
            String text = System.getProperty(property);
            if (text == null) {
                return;
            }
            T value;
            try {
                value = parse.apply(text.trim());
            } catch (RuntimeException e) {
                throw new IllegalArgumentException("system property " + property + "='" + text + "': " + e.getMessage(), e);
            }
            set.accept(target, value);
        }

        @Override
        public void copy(C from, C to) {
            set.accept(to, get.apply(from));
        }

        @Override
        public void append(StringBuilder sb, C c) {
            sb.append(name).append('=').append(get.apply(c));
        }
    }

    /** A group: a configuration object of type G that every C holds, with its own table. */
    private record Group<C, G>(String name, SettingsTable<G> table, Function<C, G> get) implements Entry<C> {
        @Override
        public void properties(String prefix, List<String> into) {
            table.properties(prefix + name + ".", into);
        }

        @Override
        public void applySystemProperties(C target, String prefix) {
            table.applySystemProperties(get.apply(target), prefix + name + ".");
        }

        @Override
        public void copy(C from, C to) {
            table.copy(get.apply(from), get.apply(to));
        }

        @Override
        public void append(StringBuilder sb, C c) {
            sb.append(name).append('=');
            table.append(sb, get.apply(c));
        }
    }

    /**
     * A setting another table declares, of an object every C holds: listed, read from a property and
     * copied as one of C's own, under C's prefix.
     */
    private record Borrowed<C, G>(Setting<G, ?> setting, Function<C, G> get) implements Entry<C> {
        @Override
        public void properties(String prefix, List<String> into) {
            setting.properties(prefix, into);
        }

        @Override
        public void applySystemProperties(C target, String prefix) {
            setting.applySystemProperties(get.apply(target), prefix);
        }

        @Override
        public void copy(C from, C to) {
            setting.copy(get.apply(from), get.apply(to));
        }

        @Override
        public void append(StringBuilder sb, C c) {
            setting.append(sb, get.apply(c));
        }
    }

    private final String typeName;
    private final String propertyPrefix;
    private final List<Entry<C>> settings = new ArrayList<>();

    /**
     * @param typeName       the name {@link #toString(Object)} starts with
     * @param propertyPrefix the system properties' common prefix, e.g. {@code rdmarpc.rdma.}; a table
     *                       used as a {@link #group} takes its prefix from the enclosing table instead
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

    /**
     * Declares a group of settings: a configuration object every {@code C} holds (created with it and
     * edited in place, never replaced by another instance), whose settings {@code table} declares.
     * Its properties are {@code <prefix><name>.<setting>}, whatever prefix {@code table} has of its
     * own; {@link #copy} copies them into the target's own group.
     *
     * @param name  the group's name: its getter's, and the middle of its properties' names
     * @param table the group's settings
     * @param get   the group of a configuration
     * @return this
     */
    public <G> SettingsTable<C> group(String name, SettingsTable<G> table, Function<C, G> get) {
        settings.add(new Group<>(name, table, get));
        return this;
    }

    /**
     * Declares, as one of this table's own settings, a setting that {@code table} declares for an
     * object every {@code C} holds (created with it, never replaced): one declaration serves several
     * configuration classes, each listing it, reading it from {@code <prefix><name>} and copying it
     * as if it were its own.
     *
     * @param table the table that declares the setting
     * @param name  the setting's name there (and here)
     * @param get   the object of a configuration that holds the setting
     * @return this
     * @throws IllegalArgumentException when {@code table} declares no setting of that name
     */
    public <G> SettingsTable<C> addFrom(SettingsTable<G> table, String name, Function<C, G> get) {
        for (Entry<G> e : table.settings) {
            if (e instanceof Setting<G, ?> s && s.name().equals(name)) {
                settings.add(new Borrowed<>(s, get));
                return this;
            }
        }
        throw new IllegalArgumentException(table.typeName + " declares no setting " + name);
    }

    /** @return the system property that gives {@code setting} its default */
    public String property(String setting) {
        return propertyPrefix + setting;
    }

    /** @return every system property this table reads, groups' included, in declaration order */
    public List<String> properties() {
        List<String> names = new ArrayList<>();
        properties(propertyPrefix, names);
        return names;
    }

    private void properties(String prefix, List<String> into) {
        for (Entry<C> e : settings) {
            e.properties(prefix, into);
        }
    }

    /**
     * Sets every setting whose system property is set ({@code <prefix><name>}, in a group
     * {@code <prefix><group>.<name>}) to its value: called by the configuration's constructor, so the
     * properties are defaults that setters still override.
     *
     * @throws IllegalArgumentException naming the property, when its value cannot be read
     */
    public void applySystemProperties(C target) {
        applySystemProperties(target, propertyPrefix);
    }

    private void applySystemProperties(C target, String prefix) {
        for (Entry<C> e : settings) {
            e.applySystemProperties(target, prefix);
        }
    }

    /** Copies every setting of {@code from} to {@code to}, groups' into {@code to}'s own groups. */
    public void copy(C from, C to) {
        for (Entry<C> e : settings) {
            e.copy(from, to);
        }
    }

    /** @return {@code TypeName[name=value, ...]} with every setting in declaration order, groups' nested */
    public String toString(C c) {
        StringBuilder sb = new StringBuilder();
        append(sb, c);
        return sb.toString();
    }

    private void append(StringBuilder sb, C c) {
        sb.append(typeName).append('[');
        for (int i = 0; i < settings.size(); i++) {
            if (i > 0) {
                sb.append(", ");
            }
            settings.get(i).append(sb, c);
        }
        sb.append(']');
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
}
