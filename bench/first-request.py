"""How long a round's first request waits after its first commit is done: bench.py's drop of
N records, one round of each build under `strace -f --seccomp-bpf -ttt -T -e
trace=syncfs,fsync,renameat2,sendto`, and the time from the end of the commit thread's last
system call in the first intake group's commit (its `syncfs`, which writes back the whole drop,
its ledger `fsync`, its renames into `sending/`, its folders' fsyncs; the next `syncfs` is the
next group's) to the first `sendto`. What the loop does in between is on the round's critical
path: before e235c4c it loaded libcurl there.

Needs strace 5.3 or later (`--seccomp-bpf`: only the traced calls stop the process).

Usage: bench/first-request.py [--n 10000] [--runs 3] [--batch] BUILD...
Builds take turns, run by run. Prints one line per run and the median per build.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
# An strace -f -ttt -T line: tid, start, the call (or its resumption), and its duration.
LINE = re.compile(r"(\d+)\s+([\d.]+)\s+(.*?)(?:<([\d.]+)>)?$")


def gap(trace_path):
    """(the first syncfs's duration, the gap before the first sendto), in ms."""
    calls = []  # (tid, name, start, end)
    pending = {}
    for line in open(trace_path, errors="replace"):
        match = LINE.match(line.rstrip("\n"))
        if not match:
            continue
        tid, start, text, duration = match.group(1), float(match.group(2)), match.group(3), match.group(4)
        if text.endswith("<unfinished ...>"):
            pending[tid] = (text.split("(")[0], start)
            continue
        if text.startswith("<... "):
            name, start = pending.pop(tid, (text[5:].split()[0], start))
        else:
            name = text.split("(")[0]
        calls.append((tid, name, start, start + float(duration or 0)))
    sends = [call for call in calls if call[1] == "sendto"]
    syncs = [call for call in calls if call[1] == "syncfs"]
    if not sends or not syncs:
        raise SystemExit(f"{trace_path}: no sendto or no syncfs")
    committer = syncs[0][0]
    first = min(call[2] for call in sends)
    # The first commit ends with its last call before the commit thread's
    # second syncfs, the next group's commit, which may overlap the request.
    second = min((call[2] for call in syncs[1:] if call[0] == committer), default=float("inf"))
    done = max(call[3] for call in calls if call[0] == committer and call[2] < second)
    return (syncs[0][3] - syncs[0][2]) * 1000, (first - done) * 1000


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--batch", action="store_true")
    parser.add_argument("builds", nargs="+")
    args = parser.parse_args()
    gaps = {build: [] for build in args.builds}
    with tempfile.TemporaryDirectory(prefix="first-request-") as work:
        trace = os.path.join(work, "trace.txt")
        for run in range(1, args.runs + 1):
            for build in args.builds:
                command = [sys.executable, os.path.join(HERE, "profile.py"), "--n", str(args.n), "--courier", build]
                if args.batch:
                    command.append("--batch")
                command += ["--", "strace", "-f", "--seccomp-bpf", "-ttt", "-T",
                            "-e", "trace=syncfs,fsync,renameat2,sendto", "-o", trace]
                subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                writeback, after = gap(trace)
                gaps[build].append(after)
                print(f"run {run} {build}: first syncfs {writeback:.1f} ms; first request {after:.1f} ms after "
                      "the first commit", flush=True)
    for build, values in gaps.items():
        print(f"{build}: median {statistics.median(values):.1f} ms after the first commit "
              f"({', '.join(f'{v:.1f}' for v in values)})")


if __name__ == "__main__":
    main()
