package dev.rdmarpc.ibverbs.verbs;

/** {@code enum ibv_fork_status}, the answer of {@link Verbs#forkStatus()}. */
public enum ForkStatus {
    /** Fork support is off: a child process may corrupt registered memory of the parent. */
    DISABLED,
    /** {@code ibv_fork_init} ran (or {@code RDMAV_FORK_SAFE} was set): registered memory is {@code MADV_DONTFORK}. */
    ENABLED,
    /** The kernel copies pinned pages on fork itself (Linux 5.13+): nothing to do. */
    UNNEEDED;

    static ForkStatus of(int value) {
        return switch (value) {
            case 1 -> ENABLED;
            case 2 -> UNNEEDED;
            default -> DISABLED;
        };
    }
}
