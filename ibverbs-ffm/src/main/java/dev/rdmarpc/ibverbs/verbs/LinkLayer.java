package dev.rdmarpc.ibverbs.verbs;

/** The link layer of a port: InfiniBand, or Ethernet (RoCE, needing a GRH on every packet). */
public enum LinkLayer {
    UNSPECIFIED, INFINIBAND, ETHERNET, UNKNOWN;

    /** The constant for a C value ({@code IBV_LINK_LAYER_UNSPECIFIED} is 0). */
    public static LinkLayer of(int value) {
        return value >= 0 && value < UNKNOWN.ordinal() ? values()[value] : UNKNOWN;
    }
}
