#ifndef COURIER_CPOSIX_SHIM_H
#define COURIER_CPOSIX_SHIM_H

/* glibc declares syncfs(2) only under _GNU_SOURCE, which Swift's Glibc
   module does not define. */
#define _GNU_SOURCE 1
#include <unistd.h>

static inline int courier_syncfs(int fd) { return syncfs(fd); }

#endif
