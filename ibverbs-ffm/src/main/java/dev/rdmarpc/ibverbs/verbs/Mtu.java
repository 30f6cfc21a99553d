package dev.rdmarpc.ibverbs.verbs;

/** {@code enum ibv_mtu}: the path MTU of a connection, at most the port's active MTU. */
public enum Mtu {
    MTU_256(1, 256), MTU_512(2, 512), MTU_1024(3, 1024), MTU_2048(4, 2048), MTU_4096(5, 4096);

    private final int value;
    private final int bytes;

    Mtu(int value, int bytes) {
        this.value = value;
        this.bytes = bytes;
    }

    /** The C value ({@code IBV_MTU_256} is 1). */
    public int value() {
        return value;
    }

    /** The MTU in bytes. */
    public int bytes() {
        return bytes;
    }

    /** The smaller of the two. */
    public Mtu min(Mtu other) {
        return value <= other.value ? this : other;
    }

    /**
     * The constant for a C value.
     *
     * @throws IllegalArgumentException for a value that is no MTU
     */
    public static Mtu of(int value) {
        if (value < 1 || value > 5) {
            throw new IllegalArgumentException("not an ibv_mtu value: " + value);
        }
        return values()[value - 1];
    }

    /**
     * The constant for a size in bytes.
     *
     * @throws IllegalArgumentException for a size that is no MTU
     */
    public static Mtu ofBytes(int bytes) {
        for (Mtu m : values()) {
            if (m.bytes == bytes) {
                return m;
            }
        }
        throw new IllegalArgumentException("not an MTU: " + bytes + " bytes (256, 512, 1024, 2048 or 4096)");
    }
}
