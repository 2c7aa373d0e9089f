"""Where each tool's CPU goes in a round, thread by thread, user space by library and the kernel:
courier, the floor with courier's shape, and curl, interleaved, under `perf record -e cpu-clock`.

Usage: bench/cpu-budget.py [--rounds 5] [--n 10000] [--frequency 4000] [--courier BIN]
The tools (bench/profile.py's): courier; `shape`, bench/floor/floor_mt_ordered.c with
READS_ON_LOOP=1, which does a round's durable work in courier's order with the reads on its
HTTP thread, as courier's loop has them (two more threads commit, intake groups and settled
ones, one at a time under one mutex, where courier has one commit thread); and
`curl --parallel 16`. For each, the HTTP thread (the main thread: courier's loop) and the
other threads are split into:
* the tool's own code (for courier, its binary: the Swift runtime is linked in);
* libcurl;
* libc, with the loader, the vDSO and any other library (libcrypto, zlib: a few ms at most);
* the kernel: system calls and what they do, page faults, the switches in and out, and the
  softirq work that lands on the thread (loopback TCP delivers to nginx on the sender's CPU);
  on these VMs samples also pile up where interrupts are turned back on (finish_task_switch).
Figures are ms of CPU in the round, from the samples (one per 1/FREQUENCY s of CPU), and the
wall from the tool's first sample to its last. Each round is printed, then the medians of each
column over the rounds ("all" and "both" too are medians of the rounds' sums). nginx's own
process is not counted: bench/placement.py shows where it runs. perf adds its own cost, the
threaded tools' more, so compare the tools with each other in one run, not with bench.py's
records/s.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
TOOLS = ("courier", "shape", "curl")
PARTS = ("own", "libcurl", "libc", "kernel")
# `perf script -F comm,pid,tid,time,ip,dso`: comm pid/tid time: ip (dso)
SAMPLE = re.compile(r"\s*(.+?)\s+(\d+)/(\d+)\s+([\d.]+):\s+[0-9a-f]+\s+\((.*)\)\s*$")


def part(dso, binary):
    """The column a sample's object goes in."""
    if dso.startswith("[kernel"):
        return "kernel"
    name = os.path.basename(dso)
    if name == binary:
        return "own"
    return "libcurl" if name.startswith("libcurl") else "libc"


def budget(perf_data, binary, frequency):
    """The round's CPU as {thread: {part: ms}} for "http" and "others", and its wall in ms."""
    text = subprocess.run(["perf", "script", "-i", perf_data, "-F", "comm,pid,tid,time,ip,dso"], check=True,
                          capture_output=True, text=True).stdout
    figures = {thread: dict.fromkeys(PARTS, 0.0) for thread in ("http", "others")}
    first = last = None
    for line in text.splitlines():
        match = SAMPLE.match(line)
        if not match:
            continue
        _, pid, tid, time, dso = match.groups()
        thread = "http" if pid == tid else "others"
        figures[thread][part(dso, binary)] += 1000 / frequency
        first = float(time) if first is None else first
        last = float(time)
    if first is None:
        raise SystemExit(f"cpu-budget: no samples in {perf_data}")
    return figures, (last - first) * 1000


def cells(figures, wall):
    """A round's row: each part of each thread, each thread's sum, both threads', the wall."""
    http, others = figures["http"], figures["others"]
    return ([http[p] for p in PARTS] + [sum(http.values())] + [others[p] for p in PARTS]
            + [sum(others.values()), sum(http.values()) + sum(others.values()), wall])


def row(label, values):
    return f"| {label} | " + " | ".join(f"{v:.0f}" for v in values) + " |"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--n", type=int, default=10_000)
    parser.add_argument("--frequency", type=int, default=4000)
    parser.add_argument("--courier", default=os.path.join(HERE, "..", ".build", "release", "courier"))
    args = parser.parse_args()
    folder = tempfile.mkdtemp(prefix="courier-cpu-budget-")
    # perf names the file a link points to.
    binaries = {"courier": os.path.basename(os.path.realpath(args.courier)), "shape": "floor_mt_ordered",
                "curl": "curl"}
    results = {tool: [] for tool in TOOLS}
    header = ("| {first} | HTTP thread: own | libcurl | libc | kernel | all | other threads: own | libcurl | libc "
              "| kernel | all | both | wall |")
    print(header.format(first="round, tool"))
    print("|---|" + "---:|" * 12)
    try:
        for index in range(1, args.rounds + 1):
            for tool in TOOLS:
                path = os.path.join(folder, f"{tool}-{index}.data")
                load = os.getloadavg()[0]
                done = subprocess.run([sys.executable, os.path.join(HERE, "profile.py"), "--n", str(args.n),
                                       "--tool", tool, "--courier", args.courier, "--", "perf", "record", "-q", "-e",
                                       "cpu-clock", "-F", str(args.frequency), "-o", path],
                                      stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
                if done.returncode != 0:
                    raise SystemExit(f"cpu-budget: round {index} of {tool} failed:\n{done.stderr}")
                figures, wall = budget(path, binaries[tool], args.frequency)
                os.remove(path)
                results[tool].append(cells(figures, wall))
                print(row(f"{index}, {tool} (load {load:.2f})", results[tool][-1]), flush=True)
    finally:
        for name in os.listdir(folder):
            os.remove(os.path.join(folder, name))
        os.rmdir(folder)
    print()
    print(header.format(first="tool (medians)"))
    print("|---|" + "---:|" * 12)
    for tool in TOOLS:
        print(row(tool, [statistics.median(column) for column in zip(*results[tool])]))


if __name__ == "__main__":
    main()
