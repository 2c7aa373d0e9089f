#ifndef COURIER_CPOSIX_SHIM_H
#define COURIER_CPOSIX_SHIM_H

/* glibc declares syncfs(2), renameat2(2) and statx(2) only under
   _GNU_SOURCE, which Swift's Glibc module does not define. */
#define _GNU_SOURCE 1
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/vfs.h>
#include <unistd.h>

static inline int courier_syncfs(int fd) { return syncfs(fd); }

/* An eventfd(2) counter, non-blocking; -1 with errno if none. Swift's Glibc
   module does not bring <sys/eventfd.h>. */
static inline int courier_eventfd(void) { return eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK); }

/* The file system type (statfs(2)'s f_type) of an open file, or -1. Swift's
   Glibc module does not bring <sys/vfs.h>. */
static inline long courier_file_system_type(int fd) {
    struct statfs info;
    return fstatfs(fd, &info) == 0 ? (long)info.f_type : -1;
}

/* renameat2(2): with `noreplace`, RENAME_NOREPLACE (EEXIST when the new
   name exists; EINVAL where the file system cannot say, as on libfuse2). */
static inline int courier_rename(int from_dir, const char *from, int to_dir, const char *to, int noreplace) {
    return renameat2(from_dir, from, to_dir, to, noreplace ? RENAME_NOREPLACE : 0);
}

/* What courier reads of statx(2): stat's fields plus the birth time, which
   rename(2) keeps (ext4, XFS and btrfs record it; others leave has_birth 0). */
struct courier_status {
    uint32_t mode;
    uint64_t size;
    int64_t modified_seconds;
    uint32_t modified_nanoseconds;
    int64_t changed_seconds;
    uint32_t changed_nanoseconds;
    int64_t born_seconds;
    uint32_t born_nanoseconds;
    int has_birth;
    uint64_t device;
    uint64_t inode;
    uint32_t links;
    uint32_t owner;
};

/* statx of `name` in `dir` without following a symbolic link; an empty
   name describes `dir` itself (an open file: AT_EMPTY_PATH). */
static inline int courier_status_at(int dir, const char *name, struct courier_status *out) {
    struct statx info;
    int flags = AT_SYMLINK_NOFOLLOW | AT_STATX_SYNC_AS_STAT | (name[0] == 0 ? AT_EMPTY_PATH : 0);
    if (statx(dir, name, flags, STATX_BASIC_STATS | STATX_BTIME, &info) != 0) return -1;
    out->mode = info.stx_mode;
    out->size = info.stx_size;
    out->modified_seconds = info.stx_mtime.tv_sec;
    out->modified_nanoseconds = info.stx_mtime.tv_nsec;
    out->changed_seconds = info.stx_ctime.tv_sec;
    out->changed_nanoseconds = info.stx_ctime.tv_nsec;
    out->has_birth = (info.stx_mask & STATX_BTIME) != 0;
    out->born_seconds = info.stx_btime.tv_sec;
    out->born_nanoseconds = info.stx_btime.tv_nsec;
    out->device = makedev(info.stx_dev_major, info.stx_dev_minor);
    out->inode = info.stx_ino;
    out->links = info.stx_nlink;
    out->owner = info.stx_uid;
    return 0;
}

#endif
