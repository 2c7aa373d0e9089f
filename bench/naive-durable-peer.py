#!/usr/bin/env python3
"""A naive durable peer: what a careful script would do instead of courier.

Usage: naive-durable-peer.py SPOOL URL [--device ID]

Delivers every file dropped into SPOOL/queued/ to URL, the way issue 13
describes the script courier is measured against:

 1. every file is renamed into SPOOL/sending/, so a crash leaves it there to
    be sent again;
 2. one `curl -K CONFIG --parallel --parallel-max 16` posts them all, with
    the headers bench.py gives curl (Expect: disabled), and a write-out per
    transfer that says which file finished, with its status and time;
 3. this process (the second of the two; curl is the first) reads that
    stream and, as each answer arrives, renames a 2xx file into SPOOL/sent/
    and appends a nine-column ledger line to SPOOL/ledger/YYYY-MM-DD.tsv; the
    ledger is fsynced once per batch of up to 256 lines: whatever arrived
    while the last fsync ran. No directory is ever fsynced, and the dropped
    files' data is not synced either: that is what makes it naive.

A file that got no 2xx stays in sending/ with a `retry` line. Exit status 0
when every file went to sent/, 75 otherwise. Python 3 standard library only.
"""

import argparse
import os
import subprocess
import sys
import time

# Flush the ledger at least this often (lines); fewer when the stream pauses.
BATCH = 256

# The headers bench.py's curl run sends, so both put the same bytes on the
# wire. Keep the two lists in step.
HEADERS = ["Content-Type: application/json", "User-Agent: courier/0.1.0", "Courier-Device: {device}",
           "Courier-Session: {device}", "Expect:"]


def claim(spool):
    """Renames every dropped file from queued/ into sending/; returns their names."""
    queued, sending = os.path.join(spool, "queued"), os.path.join(spool, "sending")
    names = []
    for entry in os.scandir(queued):
        if entry.name.endswith(".json"):
            os.rename(entry.path, os.path.join(sending, entry.name))
            names.append(entry.name)
    return names


def curl_config(spool, names, url, device):
    """Writes curl's config: one transfer per file, each with a write-out naming it."""
    path = os.path.join(spool, "curl.cfg")
    sending = os.path.join(spool, "sending")
    headers = "".join(f'header = "{h.format(device=device)}"\n' for h in HEADERS)
    with open(path, "w") as f:
        for index, name in enumerate(names):
            if index > 0:
                f.write("next\n")
            # The key is the file's name: the only id a script has without
            # parsing the record.
            f.write(f'url = "{url}"\noutput = "/dev/null"\ndata-binary = "@{os.path.join(sending, name)}"\n'
                    f'{headers}header = "Idempotency-Key: {name[:-5]}"\n'
                    f'write-out = "{name}\\t%{{response_code}}\\t%{{time_total}}\\n"\n')
    return path


class Ledger:
    """Today's ledger file, appended one write(2) per line, fsynced per batch."""

    def __init__(self, spool, run_id, subscriber):
        path = os.path.join(spool, "ledger", time.strftime("%Y-%m-%d", time.gmtime()) + ".tsv")
        self.fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o640)
        self.run_id, self.subscriber, self.unsynced = run_id, subscriber, 0

    def append(self, key, event, status, seconds):
        now = time.time()
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now)) + f".{int(now * 1000) % 1000:03d}Z"
        line = f"{stamp}\t{self.run_id}\t{self.subscriber}\t{key}\t{event}\t{status}\t1\t{int(seconds * 1000)}\t\n"
        os.write(self.fd, line.encode())
        self.unsynced += 1
        if self.unsynced >= BATCH:
            self.sync()

    def sync(self):
        if self.unsynced:
            os.fsync(self.fd)
            self.unsynced = 0


def settle(spool, stream, ledger):
    """Reads curl's write-out lines as they arrive; returns how many went to sent/."""
    sending, sent = os.path.join(spool, "sending"), os.path.join(spool, "sent")
    delivered, rest = 0, b""
    while True:
        # One read takes whatever answers have arrived: that is the batch.
        chunk = os.read(stream, 65536)
        if not chunk:
            break
        lines = (rest + chunk).split(b"\n")
        rest = lines.pop()
        for line in lines:
            name, status, seconds = line.decode().split("\t")
            if status.startswith("2"):
                os.rename(os.path.join(sending, name), os.path.join(sent, name))
                ledger.append(name[:-5], "sent", int(status), float(seconds))
                delivered += 1
            else:
                ledger.append(name[:-5], "retry", int(status), float(seconds))
        ledger.sync()
    return delivered


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("spool")
    parser.add_argument("url")
    parser.add_argument("--device", default="bench")
    args = parser.parse_args()
    for folder in ("sending", "sent", "ledger"):
        os.makedirs(os.path.join(args.spool, folder), exist_ok=True)
    names = claim(args.spool)
    if not names:
        return 0
    config = curl_config(args.spool, names, args.url, args.device)
    curl = subprocess.Popen(["curl", "-s", "--parallel", "--parallel-max", "16", "-K", config],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    ledger = Ledger(args.spool, time.strftime("%Y%m%dT%H%M%SZ", time.gmtime()) + "-peer", "bench")
    delivered = settle(args.spool, curl.stdout.fileno(), ledger)
    curl.wait()
    return 0 if delivered == len(names) else 75


if __name__ == "__main__":
    sys.exit(main())
