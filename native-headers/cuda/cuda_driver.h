/* jextract input for dev.rdmarpc.cuda.raw: the CUDA driver API (not the runtime API). */
#include <cuda.h>
