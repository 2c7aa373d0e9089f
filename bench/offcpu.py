"""Where one thread of a round waited: its off-CPU time, summed by what it was doing when it
switched out (the kernel frames under the switch, and the first Swift frame of the stack).

Usage: bench/offcpu.py PERF_DATA [--tid TID] [--top 15]
PERF_DATA is a `perf sched record -g` of a round, e.g.
  bench/profile.py --n 10000 -- perf sched record -q -g -o round.sched
Without --tid, the thread is the round's loop: the first thread whose name begins with courier
(a copied binary such as /tmp/courier-old is one). With `profile.py --batch` the sink is
started first and is such a thread too: name the round's with --tid (`perf sched timehist -s`).
Each row: milliseconds off CPU, how many times, the kernel frames, the Swift frame. A wait is
counted from the thread's switch out to the switch that runs it again, whatever woke it.
"""
import argparse
import collections
import re
import subprocess
import sys

# A record's first line: comm (it may hold spaces), tid, time, event, trace.
HEADER = re.compile(r"\s*(.*?)\s+(\d+)\s+([\d.]+):\s+(\S+):\s*(.*)")


def events(perf_data):
    text = subprocess.run(["perf", "script", "-i", perf_data, "-F", "comm,tid,time,event,trace,ip,sym"],
                          check=True, capture_output=True, text=True).stdout
    for block in text.split("\n\n"):
        lines = block.strip("\n").split("\n")
        if not lines or not lines[0].strip():
            continue
        match = HEADER.match(lines[0])
        if not match:
            continue
        comm, tid, time, event, trace = match.groups()
        frames = [line.split(None, 1)[1] for line in lines[1:] if len(line.split(None, 1)) > 1]
        yield comm, tid, float(time), event, trace, frames


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("perf_data")
    parser.add_argument("--tid")
    parser.add_argument("--top", type=int, default=15)
    args = parser.parse_args()

    recorded = list(events(args.perf_data))
    tid = args.tid
    if tid is None:
        courier = [int(t) for comm, t, _, _, _, _ in recorded if comm.startswith("courier")]
        if not courier:
            sys.exit(f"{args.perf_data}: no thread whose name begins with courier; name one with --tid")
        tid = str(min(courier))

    waited = collections.Counter()
    times = collections.Counter()
    switched_out_at = None
    reason = None
    for _, event_tid, time, event, trace, frames in recorded:
        if event != "sched:sched_switch":
            continue
        if event_tid == tid and f"prev_pid={tid} " in trace:
            kernel = [f.split("+")[0] for f in frames[:6] if "sched" not in f]
            swift = [f for f in frames if f.startswith("$s")]
            reason = ("|".join(kernel)[:60], swift[0][:70] if swift else "?")
            switched_out_at = time
        elif f"next_pid={tid} " in trace + " " and switched_out_at is not None:
            waited[reason] += time - switched_out_at
            times[reason] += 1
            switched_out_at = None

    print(f"thread {tid}: {sum(waited.values()) * 1000:.1f} ms off CPU in {sum(times.values())} waits")
    for (kernel, swift), seconds in waited.most_common(args.top):
        print(f"{seconds * 1000:8.1f} ms {times[(kernel, swift)]:6d}  {kernel}  {swift}")


if __name__ == "__main__":
    main()
