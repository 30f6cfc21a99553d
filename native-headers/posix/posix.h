/* jextract input for dev.rdmarpc.posix.raw: the few C library (glibc) calls rdmarpc makes around
 * file descriptors and CPU affinity. _GNU_SOURCE declares sched_setaffinity and cpu_set_t. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <poll.h>
#include <sched.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>
