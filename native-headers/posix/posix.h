/* jextract input for dev.rdmarpc.posix.raw: the few C library (glibc) calls rdmarpc makes around
 * file descriptors, non-blocking TCP sockets (and epoll, to wait for many), and CPU affinity. _GNU_SOURCE declares
 * sched_setaffinity and cpu_set_t. */
#define _GNU_SOURCE
#include <features.h>

/* The socket headers first, and without __USE_GNU: with it, <sys/socket.h> declares the address
 * arguments of bind, connect, accept4, getsockname and getpeername as transparent unions of every
 * sockaddr type, which jextract cannot express; without it they are plain struct sockaddr pointers
 * (the same ABI). accept4, declared only with __USE_GNU, is declared here as glibc declares it,
 * without the union. (<net/if.h> includes <sys/socket.h>, hence first.) */
#undef __USE_GNU
#include <sys/socket.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
extern int accept4(int __fd, struct sockaddr *__restrict __addr, socklen_t *__restrict __addr_len, int __flags);
#define __USE_GNU 1

#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <poll.h>
#include <sched.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>
