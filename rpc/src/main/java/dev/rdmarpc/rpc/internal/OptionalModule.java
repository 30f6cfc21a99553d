package dev.rdmarpc.rpc.internal;

/**
 * The modules {@code dev.rdmarpc.rpc} requires {@code static}: present only where an application put
 * them on its module path and resolved them (or their jars on the class path). An entry point that
 * needs one calls {@link #require(String)} before it touches any of its classes, so a TCP-only
 * application that reaches for RDMA or a GPU gets one sentence saying what is missing instead of a
 * {@link NoClassDefFoundError}.
 *
 * <p>Each answer is computed once, when this class initialises; it reads no class of the modules
 * themselves. Thread-safe.
 */
public enum OptionalModule {
    /** libibverbs bindings and the verbs layer: the RDMA transport and GPU-direct registration. */
    IBVERBS("dev.rdmarpc.ibverbs", "ibverbs-ffm", "dev.rdmarpc.ibverbs.Ibverbs"),
    /** CUDA driver bindings and layer: GPU attachments. */
    CUDA("dev.rdmarpc.cuda", "cuda-ffm", "dev.rdmarpc.cuda.Cuda");

    private final String moduleName;
    private final String artifact;
    private final boolean present;

    OptionalModule(String moduleName, String artifact, String probeClass) {
        this.moduleName = moduleName;
        this.artifact = artifact;
        this.present = probe(moduleName, probeClass);
    }

    /** @return the Java module's name, e.g. {@code dev.rdmarpc.ibverbs} */
    public String moduleName() {
        return moduleName;
    }

    /** @return whether this module's classes can be used from {@code dev.rdmarpc.rpc} */
    public boolean isPresent() {
        return present;
    }

    /**
     * Throws unless the module is {@link #isPresent() present}.
     *
     * @param feature what needs it, as the singular subject of a sentence ("The RDMA transport", "GPU staging")
     * @throws IllegalStateException naming the module and how to add it
     */
    public void require(String feature) {
        if (!present) {
            throw new IllegalStateException(missing(feature));
        }
    }

    /** The sentence {@link #require(String)} throws with. */
    String missing(String feature) {
        return OptionalModule.class.getModule().isNamed()
                ? feature + " needs module " + moduleName + " (" + artifact + ") on the module path: dev.rdmarpc.rpc"
                        + " requires it only statically, so add it with 'requires " + moduleName
                        + ";' in your module-info or '--add-modules " + moduleName + "'"
                : feature + " needs " + artifact + " (module " + moduleName + ") on the class path";
    }

    private static boolean probe(String moduleName, String probeClass) {
        Module self = OptionalModule.class.getModule();
        if (self.isNamed()) {
            ModuleLayer layer = self.getLayer();
            return layer != null && layer.findModule(moduleName).filter(self::canRead).isPresent();
        }
        try {
            Class.forName(probeClass, false, OptionalModule.class.getClassLoader());
            return true;
        } catch (ClassNotFoundException | LinkageError e) {
            return false;
        }
    }
}
