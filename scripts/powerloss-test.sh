#!/usr/bin/env bash
# Power loss at every flush boundary, on ext4, XFS and btrfs (issue 20;
# docs/reliability.md, "Power loss"). Each file system lives in an image on
# LazyFS behind a loop device, so LazyFS's cache is the disk's volatile write
# cache: for every K from the end of the mount to a workload's last flush,
# the workload runs again from its base image and the power is cut just
# before flush K+1. What survived is mounted by the real file system and
# checked, then recovered by courier itself (`courier run`, each worker's on
# a shared spool, the workload's own repeatable command, and a person's
# `courier resend` of what the workload left in needsAttention/ on purpose,
# then `courier send-now`), and checked again:
#   * right after the cut: every (record, subscriber) in at most one state;
#     one with no entry still has its dropped file; every entry, dropped and
#     flagged file holds its record's bytes; the ledger is whole lines (a
#     torn tail only at the end); every item's state has its ledger line
#     (ledger first: an entry in sent/ has its `sent` line, a deferral stamp
#     its `deferred` line, a batch subscriber's sent/ entry its etag); what a
#     command that returned 0 before the cut did is there;
#   * after recovery: nothing in needsAttention/ or invalid-* because of the
#     cut; every record at every subscriber it is for (receivers outside the
#     image), bytes intact, and in sent/; no receiver refused a request; a
#     torn ledger tail gone once its file is written again; every recovery
#     command exited 0; a second round (and a second sync or prune) has
#     nothing left to do.
# Workloads (scripts/powerloss/workloads.py), each a few records: intake
# (copies to a single and a batch subscriber, an enqueue), failing (a
# subscriber down, a retry-schedule deferral, a broken drop), manual (ack,
# resend, delete), routes (a route for a waiting workout), catalog (a delta
# sync with tombstones), prune, recovery (a round killed -9 with claims in
# sending/), shared (shared = yes: two workers at once, and a dead third's
# claims). Each first runs once with no fault, to count its flushes.
# Crash states seen before (the same names, links, bytes and ledger events,
# and the same keys at the receivers) are counted once. The checker is
# python3 (stdlib only), in scripts/powerloss/; its self-test (every rule
# fires on a spool made to break it) runs first, wherever this runs.
#
# Needs: root, /dev/fuse, loop devices (losetup), mkfs.ext4, mkfs.xfs
# (xfsprogs), mkfs.btrfs (btrfs-progs), fusermount3 (fuse3), python3, and
# LazyFS, built by ../shared/vendor/lazyfs/build.sh next to the repository
# (else /work/shared/vendor/lazyfs/build.sh; its build packages: g++ cmake
# libfuse3-dev libspdlog-dev libtoml11-dev). Where one is missing it says
# `SKIP: <reason>` and exits 0; with CI=true that is a failure (exit 1).
# Exit 1 on any violation; each is printed with its K, the state after the
# cut and what recovery did (with --keep, the cut image's path).
# Usage: scripts/powerloss-test.sh [--fs ext4,xfs,btrfs] [--binary PATH] [--keep]
#        [--workloads intake,failing,...] [--json FILE]
set -euo pipefail
cd "$(dirname "$0")/.."
# No __pycache__/ left in the checkout.
export PYTHONDONTWRITEBYTECODE=1

FS=ext4,xfs,btrfs
BINARY=""
EXTRA=()
while [ $# -gt 0 ]; do
    case $1 in
        --fs) FS=$2; shift 2 ;;
        --binary) BINARY=$2; shift 2 ;;
        --keep) EXTRA+=(--keep); shift ;;
        --workloads) EXTRA+=(--workloads "$2"); shift 2 ;;
        --json) EXTRA+=(--json "$2"); shift 2 ;;
        *) echo "usage: $0 [--fs ext4,xfs,btrfs] [--binary PATH] [--keep] [--workloads LIST] [--json FILE]" >&2
           exit 64 ;;
    esac
done

skip() {
    if [ "${CI:-}" = true ]; then
        echo "FAIL: $* (CI=true: the power-loss sweep may not be skipped)"
        exit 1
    fi
    echo "SKIP: $*"
    exit 0
}
command -v python3 >/dev/null || skip "python3 not installed"
# The checker's own test first: it needs none of what follows.
python3 scripts/powerloss/selftest.py
[ "$(id -u)" -eq 0 ] || skip "not root (loop devices and a FUSE mount with allow_other need root)"
[ -c /dev/fuse ] || skip "no /dev/fuse (FUSE is not available here)"
[ -e /dev/loop-control ] || skip "no /dev/loop-control (loop devices are not available here)"
command -v losetup >/dev/null || skip "losetup not installed (Debian: mount)"
command -v fusermount3 >/dev/null || skip "fusermount3 not installed (Debian: fuse3)"
for fs in ${FS//,/ }; do
    case $fs in
        ext4) command -v mkfs.ext4 >/dev/null || skip "mkfs.ext4 not installed (Debian: e2fsprogs)" ;;
        xfs) command -v mkfs.xfs >/dev/null || skip "mkfs.xfs not installed (Debian: xfsprogs)" ;;
        btrfs) command -v mkfs.btrfs >/dev/null || skip "mkfs.btrfs not installed (Debian: btrfs-progs)" ;;
        *) echo "$0: unknown file system $fs (ext4, xfs, btrfs)" >&2; exit 64 ;;
    esac
    grep -qw "$fs" /proc/filesystems || modprobe -q "$fs" 2>/dev/null || grep -qw "$fs" /proc/filesystems ||
        skip "the kernel has no $fs"
done
# A loop device must attach here (some containers have the node and no devices).
probe=$(mktemp /tmp/courier-powerloss-probe-XXXXXX)
truncate -s 1M "$probe"
if loop=$(losetup --find --show "$probe" 2>/dev/null); then
    losetup -d "$loop"
    rm -f "$probe"
else
    rm -f "$probe"
    skip "no loop device can be attached here"
fi

build=../shared/vendor/lazyfs/build.sh
[ -x "$build" ] || build=/work/shared/vendor/lazyfs/build.sh
[ -x "$build" ] || skip "LazyFS's build.sh is not at ../shared/vendor/lazyfs/ or /work/shared/vendor/lazyfs/"
lazyfs=$("$build" | tail -1)
[ -x "$lazyfs" ] || skip "LazyFS did not build ($build)"

if [ -z "$BINARY" ]; then
    swift build -c release >/dev/null
    BINARY=.build/release/courier
fi
BINARY=$(readlink -f "$BINARY")

exec python3 scripts/powerloss/sweep.py --fs "$FS" --binary "$BINARY" --lazyfs "$lazyfs" "${EXTRA[@]}"
