/**
 * The inputs of binding generation: one wrapper header, one jextract argument file and a version
 * record per native library. This module carries them as resources; it has no code.
 */
module dev.rdmarpc.nativeheaders {
}
