/* jextract input for dev.rdmarpc.ibverbs.raw: the libibverbs public API of rdma-core. */
#include <infiniband/verbs.h>
