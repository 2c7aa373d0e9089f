"""Courier's benchmark. See bench/run and docs/performance.md.

Measures, interleaved A B A B in one run on the same machine:
  * courier run: N records from queued/ to sent/, full durability, concurrency 16;
  * curl -K config --parallel --parallel-max 16: the same files, same headers;
  * a shell loop of one curl per file (smaller N), the floor;
and, once each: the empty-spool round, status and round RSS on big spools,
and prune over 183 days of ledger.
"""

import argparse
import json
import os
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

NGINX_CONF = """
worker_processes 1;
daemon off;
pid {dir}/nginx.pid;
error_log {dir}/error.log;
events {{ worker_connections 1024; }}
http {{
    access_log off;
    client_body_temp_path {dir}/body;
    proxy_temp_path {dir}/proxy;
    fastcgi_temp_path {dir}/fastcgi;
    uwsgi_temp_path {dir}/uwsgi;
    scgi_temp_path {dir}/scgi;
    keepalive_requests 1000000;
    server {{
        listen 127.0.0.1:{port};
        location /hook {{
            client_max_body_size 1m;
            client_body_buffer_size 64k;
            # nginx reads (and discards) the request body, then answers.
            return 204;
        }}
    }}
}}
"""

PAYLOAD = "x" * 1900  # with the fields around it, a record of about 2 KB


def record(index):
    return json.dumps({"id": f"bench-{index:07d}", "kind": "sleep", "time": "2026-11-30T07:00:00Z",
                       "data": {"padding": PAYLOAD, "n": index}}, separators=(",", ":"))


def free_port():
    import socket
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def timed(command, **kwargs):
    """Runs a command; returns (wall seconds, cpu seconds of the children, peak RSS KiB)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, **kwargs)
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, after.ru_maxrss


def peak_rss(command, **kwargs):
    """Wall seconds and peak RSS (KiB) of one command, via /usr/bin/time if present, else wait4."""
    start = time.monotonic()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, **kwargs)
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.monotonic() - start
    if status != 0:
        raise RuntimeError(f"{command} exited {status}")
    return wall, usage.ru_maxrss


class Bench:
    def __init__(self, args):
        self.args = args
        self.work = tempfile.mkdtemp(prefix="courier-bench-")
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/hook"
        self.courier = os.path.abspath(args.courier)
        self.nginx = None

    def start_nginx(self):
        conf = os.path.join(self.work, "nginx.conf")
        with open(conf, "w") as f:
            f.write(NGINX_CONF.format(dir=self.work, port=self.port))
        self.nginx = subprocess.Popen(["nginx", "-c", conf, "-p", self.work], stderr=subprocess.DEVNULL)
        for _ in range(100):
            try:
                subprocess.run(["curl", "-s", "-o", "/dev/null", "-X", "POST", "-d", "{}", self.url], check=True, timeout=2)
                return
            except subprocess.CalledProcessError:
                time.sleep(0.05)
        raise RuntimeError("nginx did not start")

    def stop(self):
        if self.nginx:
            self.nginx.send_signal(signal.SIGQUIT)
            self.nginx.wait()
        shutil.rmtree(self.work, ignore_errors=True)

    def make_records(self, n, where):
        os.makedirs(where, exist_ok=True)
        for i in range(n):
            with open(os.path.join(where, f"rec-{i:07d}.json"), "w") as f:
                f.write(record(i))

    def config(self, spool, concurrency=16):
        path = os.path.join(self.work, f"courier-{os.path.basename(spool)}.conf")
        with open(path, "w") as f:
            f.write(f"[courier]\nspool = {spool}\ndevice-id = bench\nsettle = 0s\nnotify = off\n\n"
                    f"[subscriber bench]\nurl = {self.url}\nconcurrency = {concurrency}\n")
        return path

    def fresh_spool(self, name, source):
        spool = os.path.join(self.work, name)
        shutil.rmtree(spool, ignore_errors=True)
        subprocess.run([self.courier, "--spool", spool, "init"], check=True, stdout=subprocess.DEVNULL)
        # As a script drops records: write into tmp/, rename into queued/.
        # (Not hard links: courier refuses files with a second name, as
        # Postfix's pickup does.) Done before timing starts.
        queued = os.path.join(spool, "queued")
        tmp = os.path.join(spool, "tmp")
        for entry in os.scandir(source):
            shutil.copyfile(entry.path, os.path.join(tmp, entry.name))
            os.rename(os.path.join(tmp, entry.name), os.path.join(queued, entry.name))
        return spool

    def courier_trial(self, source, n):
        spool = self.fresh_spool("spool-run", source)
        conf = self.config(spool)
        wall, cpu, _ = timed([self.courier, "--config", conf, "--quiet", "run"])
        sent = len(os.listdir(os.path.join(spool, "sent")))
        if sent != n:
            raise RuntimeError(f"courier sent {sent} of {n}")
        return wall, cpu

    def curl_config(self, source, files):
        path = os.path.join(self.work, f"curl-{len(files)}.cfg")
        with open(path, "w") as f:
            for index, name in enumerate(files):
                key = "bench-" + name[4:11]
                if index > 0:
                    f.write("next\n")
                f.write(f'url = "{self.url}"\noutput = "/dev/null"\ndata-binary = "@{os.path.join(source, name)}"\n'
                        f'header = "Content-Type: application/json"\nheader = "Idempotency-Key: {key}"\n'
                        f'header = "User-Agent: courier/0.1.0"\nheader = "Courier-Device: bench"\n'
                        f'header = "Courier-Session: bench"\nheader = "Expect:"\n')
        return path

    def curl_trial(self, config):
        wall, cpu, _ = timed(["curl", "-s", "--parallel", "--parallel-max", "16", "-K", config], stderr=subprocess.DEVNULL)
        return wall, cpu

    def loop_trial(self, source, files):
        script = os.path.join(self.work, "loop.sh")
        with open(script, "w") as f:
            f.write("set -e\n")
            for name in files:
                f.write(f'curl -s -o /dev/null -H "Content-Type: application/json" -H "Idempotency-Key: {name}" '
                        f'--data-binary @{os.path.join(source, name)} {self.url}\n')
        wall, cpu, _ = timed(["sh", script])
        return wall, cpu

    def run(self):
        args = self.args
        report = []
        def say(line=""):
            print(line, flush=True)
            report.append(line)

        self.start_nginx()
        source = os.path.join(self.work, "records")
        self.make_records(args.n, source)
        files = sorted(os.listdir(source))
        curl_cfg = self.curl_config(source, files)
        loop_files = files[: args.loop_n]

        say(f"# courier benchmark, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
        say(f"machine: {os.cpu_count()} cores; N = {args.n} records of {len(record(0))} bytes; "
            f"{args.rounds} rounds interleaved; nginx-light on loopback answering 204")
        say()
        results = {"courier": [], "curl --parallel 16": [], "curl loop": []}
        for r in range(args.rounds):
            for name in ("courier", "curl --parallel 16", "curl loop"):
                if name == "courier":
                    wall, cpu = self.courier_trial(source, args.n)
                    n = args.n
                elif name == "curl --parallel 16":
                    wall, cpu = self.curl_trial(curl_cfg)
                    n = args.n
                else:
                    wall, cpu = self.loop_trial(source, loop_files)
                    n = len(loop_files)
                results[name].append((n / wall, cpu * 1000 / n, wall))
                print(f"  round {r + 1}: {name:20s} {n / wall:9.0f} records/s  {cpu * 1000 / n:6.3f} CPU ms/record", flush=True)

        say("| tool | records/s (median) | CPU ms per record (median) | runs |")
        say("|---|---:|---:|---|")
        medians = {}
        for name, rows in results.items():
            rate = statistics.median(r[0] for r in rows)
            cpu = statistics.median(r[1] for r in rows)
            medians[name] = rate
            say(f"| {name} | {rate:.0f} | {cpu:.3f} | {', '.join(f'{r[0]:.0f}' for r in rows)} |")
        say()
        say(f"courier / curl --parallel 16 = {medians['courier'] / medians['curl --parallel 16']:.2f}x "
            f"(target >= 1.5x); courier / curl loop = {medians['courier'] / medians['curl loop']:.1f}x")
        say()

        # The cost of a wake-up with nothing to do.
        nothing = os.path.join(self.work, "nothing")
        os.makedirs(nothing, exist_ok=True)
        empty = self.fresh_spool("spool-empty", nothing)
        conf = self.config(empty)
        walls = []
        for _ in range(30):
            wall, _ = peak_rss([self.courier, "--config", conf, "--quiet", "run"])
            walls.append(wall * 1000)
        say(f"empty-spool round: median {statistics.median(walls):.1f} ms wall over 30 runs (target <= 15 ms)")

        # Prune over 183 days of ledger.
        ledger = os.path.join(empty, "ledger")
        now = time.time()
        line = "2026-01-01T00:00:00.000Z\tr\tbench\tk\tsent\t204\t1\t3\t\n" * 2000
        for day in range(200):
            t = now - day * 86400
            with open(os.path.join(ledger, time.strftime("%Y-%m-%d", time.gmtime(t)) + ".tsv"), "w") as f:
                f.write(line)
        wall, _ = peak_rss([self.courier, "--config", conf, "prune"])
        say(f"prune over 200 days of ledger files (2,000 lines each; 17 older than 183 d): {wall * 1000:.0f} ms")

        for big in ([100_000, 1_000_000] if args.big else [100_000]):
            spool = os.path.join(self.work, f"spool-{big}")
            subprocess.run([self.courier, "--spool", spool, "init"], check=True, stdout=subprocess.DEVNULL)
            queued = os.path.join(spool, "queued")
            small = '{"id":"b-%07d","kind":"sleep"}'
            for i in range(big):
                with open(os.path.join(queued, f"b-{i:07d}@bench.json"), "w") as f:
                    f.write(small % i)
            conf = self.config(spool)
            wall, _ = peak_rss([self.courier, "--config", conf, "status"])
            say(f"status with {big:,} items queued: {wall:.2f} s wall" + (" (target <= 2 s at 1,000,000)" if big == 1_000_000 else ""))
            wall, rss = peak_rss([self.courier, "--config", conf, "--quiet", "run"])
            sent = len(os.listdir(os.path.join(spool, "sent")))
            say(f"round delivering {big:,} queued entries: {wall:.1f} s wall, peak RSS {rss / 1024:.1f} MiB "
                f"({sent:,} sent; target <= 64 MiB)")
            shutil.rmtree(spool, ignore_errors=True)

        os.makedirs("bench/results", exist_ok=True)
        with open("bench/results/latest.md", "w") as f:
            f.write("\n".join(report) + "\n")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--courier", required=True)
    parser.add_argument("--n", type=int, default=10_000)
    parser.add_argument("--loop-n", type=int, default=500)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--big", action="store_true", help="also 1,000,000 records (several minutes, 1 GB of disk)")
    args = parser.parse_args()
    bench = Bench(args)
    try:
        bench.run()
    finally:
        bench.stop()


if __name__ == "__main__":
    main()
