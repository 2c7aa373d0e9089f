#ifndef COURIER_CPOSIX_SHIM_H
#define COURIER_CPOSIX_SHIM_H

/* glibc declares syncfs(2) only under _GNU_SOURCE, which Swift's Glibc
   module does not define. */
#define _GNU_SOURCE 1
#include <unistd.h>
#include <sys/vfs.h>

static inline int courier_syncfs(int fd) { return syncfs(fd); }

/* The file system type (statfs(2)'s f_type) of an open file, or -1. Swift's
   Glibc module does not bring <sys/vfs.h>. */
static inline long courier_file_system_type(int fd) {
    struct statfs info;
    return fstatfs(fd, &info) == 0 ? (long)info.f_type : -1;
}

#endif
