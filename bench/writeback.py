"""What the first intake group's durable step can cost after a drop, three ways, on one disk.

Usage: bench/writeback.py [--dir DIR] [--n 10000] [--group 256] [--rounds 3] [--threads 8]

Each round writes N files of 2 KB into DIR (default: a fresh folder under bench/, on the
working disk; bench.py's drop also renames each in from tmp/, which this leaves out), and then
times, interleaved:
* syncfs: one `syncfs`, what the first group's commit does today: it writes back the whole drop;
* fdatasync each: the first group's files made durable one `fdatasync` at a time, and then the
  `syncfs` the second group would do (which still writes back the rest of the drop);
* fdatasync beside syncfs: the same fdatasyncs while another thread runs an early `syncfs`,
  as a commit thread started on the writeback at the start of the pass would;
* the same three with the fdatasyncs spread over `--threads` threads (default 8), so that
  their waits overlap (os.fdatasync lets go of the interpreter while it waits);
* every file on threads: every file of the drop made durable by an `fdatasync` of its own, a
  group at a time on the threads, no `syncfs` at all: what a durable step that never waits for
  the whole file system would cost.
Times are from the end of the drop, in ms; the process's CPU (all threads, the kernel's part
included) over the same span; medians over the rounds. Nothing is sent: this is the file
system's part of the wait before a round's first request, alone.
"""
import argparse
import concurrent.futures
import ctypes
import os
import resource
import shutil
import statistics
import threading
import time

libc = ctypes.CDLL("libc.so.6", use_errno=True)
BODY = b'{"id":"w","kind":"sleep","pad":"' + b"x" * 2000 + b'"}'


def syncfs(fd):
    if libc.syncfs(fd) != 0:
        raise OSError(ctypes.get_errno(), "syncfs")


def drop(folder, n):
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    handle = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    syncfs(handle)  # nothing of an earlier round left to write back
    for i in range(n):
        with open(os.path.join(folder, f"r-{i:06d}.json"), "wb") as f:
            f.write(BODY)
    return handle


def ms(since):
    return (time.monotonic() - since) * 1000


def fdatasync_file(folder, i):
    fd = os.open(os.path.join(folder, f"r-{i:06d}.json"), os.O_RDONLY)
    try:
        os.fdatasync(fd)
    finally:
        os.close(fd)


def fdatasync_files(folder, files, start, pool=None):
    if pool is None:
        for i in files:
            fdatasync_file(folder, i)
    else:
        list(pool.map(lambda i: fdatasync_file(folder, i), files))
    return ms(start)


def cpu_ms():
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return (usage.ru_utime + usage.ru_stime) * 1000


def trial(way, folder, n, group, threads):
    handle = drop(folder, n)
    pool = concurrent.futures.ThreadPoolExecutor(threads) if "threads" in way else None
    try:
        cpu = cpu_ms()
        start = time.monotonic()
        if way == "syncfs":
            syncfs(handle)
            first = whole = ms(start)
        elif way.startswith("every file"):
            first = fdatasync_files(folder, range(group), start, pool)
            for at in range(group, n, 1024):
                fdatasync_files(folder, range(at, min(n, at + 1024)), start, pool)
            whole = ms(start)
        elif "beside syncfs" in way:
            done = {}
            early = threading.Thread(target=lambda: (syncfs(handle), done.setdefault("at", ms(start))))
            early.start()
            first = fdatasync_files(folder, range(group), start, pool)
            early.join()
            whole = done["at"]
        else:
            first = fdatasync_files(folder, range(group), start, pool)
            syncfs(handle)
            whole = ms(start)
        return {"first group durable": first, "whole drop durable": whole, "CPU": cpu_ms() - cpu}
    finally:
        if pool:
            pool.shutdown()
        os.close(handle)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dir", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "writeback-work"))
    parser.add_argument("--n", type=int, default=10_000)
    parser.add_argument("--group", type=int, default=256)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads", type=int, default=8)
    args = parser.parse_args()
    ways = ("syncfs", "fdatasync each", "fdatasync beside syncfs", "fdatasync each, on threads",
            "fdatasync beside syncfs, on threads", "every file on threads")
    results = {way: [] for way in ways}
    try:
        for _ in range(args.rounds):
            for way in ways:
                results[way].append(trial(way, args.dir, args.n, args.group, args.threads))
    finally:
        shutil.rmtree(args.dir, ignore_errors=True)
    print(f"N = {args.n:,} files of {len(BODY):,} bytes in {args.dir}, first group {args.group}, "
          f"{args.rounds} rounds, {args.threads} threads, load {os.getloadavg()[0]:.2f}")
    print("| way | first group durable, ms | whole drop durable, ms | CPU, ms |")
    print("|---|---:|---:|---:|")
    for way in ways:
        first = statistics.median(r["first group durable"] for r in results[way])
        whole = statistics.median(r["whole drop durable"] for r in results[way])
        cpu = statistics.median(r["CPU"] for r in results[way])
        print(f"| {way} | {first:.1f} | {whole:.1f} | {cpu:.1f} |")


if __name__ == "__main__":
    main()
