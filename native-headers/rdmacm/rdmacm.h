/* jextract input for dev.rdmarpc.rdmacm.raw: the librdmacm public API of rdma-core. */
#include <rdma/rdma_cma.h>
#include <rdma/rdma_verbs.h>
