"""Courier's benchmark: every figure of issues 13 and 23 in one report. See bench/run and
docs/performance.md.

Measures, interleaved in each round on the same machine (medians over the rounds):
  * courier run: N records from a drop in queued/ to sent/, intake included, full durability,
    concurrency 16, against nginx;
  * curl -K config --parallel --parallel-max 16: the same files, same headers, config written
    before timing;
  * the naive durable peer (bench/naive-durable-peer.py): that curl, plus the renames into
    sending/ and sent/ and a ledger fsynced per batch of up to 256;
  * the floor (../shared/floor, built here with cc): a round's durable work in plain C, as
    floor_mt (three threads) and as floor (one thread and a commit thread), against nginx;
  * courier in batch mode (100 records per request) against `courier sink`, and the floor in
    batch mode (BATCH=100) against another fresh `courier sink`;
  * a shell loop of one curl per file (smaller N);
and, once each: the empty-spool round, prune, `why` over 183 days of ledger, and on big queues
`status`, the first row of `list queued | head` and a round's peak RSS.

The report (markdown) goes to standard output and bench/results/latest.md; progress goes to
standard error. Python 3 standard library only.
"""

import argparse
import json
import os
import resource
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

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
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PEER = os.path.join(REPO, "bench", "naive-durable-peer.py")
# The floor's sources: the repository's sibling shared/floor (a worktree of
# /work sits beside /work/shared), else the machine's copy.
FLOOR_DIRS = (os.path.join(os.path.dirname(REPO), "shared", "floor"), "/work/shared/floor")
MILLION = 1_000_000

# Tool names, in the order each round runs them.
COURIER, CURL, PEER_NAME, BATCH, LOOP = ("courier", "curl --parallel 16", "naive durable peer",
                                         "courier batch (100/request)", "curl loop")
FLOOR_MT, FLOOR_ONE, FLOOR_BATCH = ("floor_mt (3 threads)", "floor (1 thread + commit thread)",
                                    "floor batch (100/request)")
# The floor's environment: intake syncs the dropped data with one syncfs per
# group, as courier does; ASYNC=1 puts the fsyncs on a commit thread.
FLOOR_ENV = {"SYNCFS": "1", "ASYNC": "1"}


def floor_sources(given):
    """The folder holding floor.c and floor_mt.c: --floor, else the first of FLOOR_DIRS that has them."""
    for directory in ([given] if given else FLOOR_DIRS):
        if all(os.path.isfile(os.path.join(directory, name)) for name in ("floor.c", "floor_mt.c")):
            return os.path.abspath(directory)
    raise RuntimeError(f"no floor.c and floor_mt.c in {given or ' or '.join(FLOOR_DIRS)} (--floor DIR)")


def build_floor(sources, into):
    """Builds floor and floor_mt from `sources` into `into`, as the floor's README says; returns their paths."""
    os.makedirs(into, exist_ok=True)
    built = []
    for name in ("floor", "floor_mt"):
        binary = os.path.join(into, name)
        subprocess.run(["cc", "-O2", "-o", binary, os.path.join(sources, name + ".c"), "-lcurl", "-lpthread"],
                       check=True)
        built.append(binary)
    return built


def build_ordered_floor(into):
    """Builds bench/floor/floor_mt_ordered.c (floor_mt with courier's commit order; READS_ON_LOOP=1
    gives it courier's shape too) into `into`/floor-bin; returns its path."""
    binary = os.path.join(into, "floor-bin", "floor_mt_ordered")
    os.makedirs(os.path.dirname(binary), exist_ok=True)
    subprocess.run(["cc", "-O2", "-o", binary, os.path.join(REPO, "bench", "floor", "floor_mt_ordered.c"), "-lcurl",
                    "-lpthread"], check=True)
    return binary


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


def progress(line):
    """Progress goes to standard error, so standard output is the report alone."""
    print(line, file=sys.stderr, flush=True)


def timed(command, **kwargs):
    """Runs a command; returns (wall seconds, cpu seconds of it and its children, peak RSS KiB)."""
    # RUSAGE_CHILDREN counts only children already waited for: nginx and the
    # sink, still running, never fall inside a before/after pair.
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, **kwargs)
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, after.ru_maxrss


def peak_rss(command, **kwargs):
    """Wall seconds and peak RSS (KiB) of one command, from wait4."""
    start = time.monotonic()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, **kwargs)
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.monotonic() - start
    if status != 0:
        raise RuntimeError(f"{command} exited {status}")
    return wall, usage.ru_maxrss


def cell(text):
    """Text for a markdown table cell: a | would end the cell, even inside backticks."""
    return text.replace("|", "\\|")


def first_line(command, lines=10):
    """Seconds from starting a command until its first line arrives on a pipe, as `| head` sees it.

    Reads `lines` lines, then closes the pipe as head does; the command
    ends on EPIPE or SIGPIPE, which is not a failure here."""
    start = time.monotonic()
    process = subprocess.Popen(command, stdout=subprocess.PIPE)
    first = process.stdout.readline()
    seconds = time.monotonic() - start
    for _ in range(lines - 1):
        process.stdout.readline()
    process.stdout.close()
    try:
        process.wait(timeout=60)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
    if not first:
        raise RuntimeError(f"{command} printed nothing")
    return seconds, first.decode(errors="replace")


def process_cpu(pid):
    """CPU seconds a running process has used so far, from /proc/PID/stat (utime + stime)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def output(command, stderr=False):
    """A command's output (its first line: versions say more after), or ? when it cannot run."""
    try:
        done = subprocess.run(command, capture_output=True, text=True, cwd=REPO)
    except OSError:
        return "?"
    text = (done.stderr if stderr else done.stdout).strip()
    return text.splitlines()[0] if text else ""


def verdict(value, limit, at_least):
    met = value >= limit if at_least else value <= limit
    return "**met**" if met else "**not met**"


def iso_stamp(seconds):
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)) + f".{int(seconds * 1000) % 1000:03d}Z"


def ledger_day(date, records, subscriber="bench"):
    """One day of a realistic ledger: each record accepted, then sent (204) by the same round.

    Nine columns as LedgerLine writes them: time, round, subscriber, key,
    event, status, attempt, duration ms, detail. Rounds every 15 minutes."""
    compact = date.replace("-", "")
    step = 86_000 / records  # seconds between records, so the day's last one stays on the day
    out = []
    for i in range(records):
        t = int(i * step)
        h, m, s = t // 3600, t // 60 % 60, t % 60
        quarter = m - m % 15
        key = f"w-{date}-{i:05d}"
        round_id = f"{compact}T{h:02d}{quarter:02d}00Z-{h * 4 + quarter // 15:04x}"
        out.append(f"{date}T{h:02d}:{m:02d}:{s:02d}.{i % 1000:03d}Z\t{round_id}\t{subscriber}\t{key}\taccepted"
                   f"\t0\t0\t0\tkind=sleep from {key}.json\n")
        out.append(f"{date}T{h:02d}:{m:02d}:{s:02d}.{(i + 37) % 1000:03d}Z\t{round_id}\t{subscriber}\t{key}\tsent"
                   f"\t204\t1\t{3 + i % 11}\t\n")
    return "".join(out)


class Report:
    """The figures of one run, rendered as markdown at the end (the header needs the end's load)."""

    def __init__(self):
        self.throughput = []   # (tool, n, rows of (records/s, cpu ms, wall), command, method)
        self.targets = []      # (measure, result, target, verdict, each round)
        self.figures = []      # (measure, result, target, verdict, command or method)
        self.appendix = []     # (title, text)

    def figure(self, measure, result, target="—", met="—", how=""):
        self.figures.append((measure, result, target, met, how))


class Bench:
    def __init__(self, args):
        self.args = args
        self.work = tempfile.mkdtemp(prefix="courier-bench-")
        # The sink's store goes to a tmpfs when there is one: nginx keeps
        # nothing, and the sink's two fsyncs per item would measure the disk,
        # not courier's batch mode.
        self.sink_parent = args.sink_parent or ("/dev/shm" if os.access("/dev/shm", os.W_OK) else self.work)
        self.sink_dirs = []
        self.sink_cpu_ms = {}  # tool -> the sink's CPU ms per record, one per round
        self.round_loads = []  # the 1-minute load average as each round began
        self.floor_sources = floor_sources(getattr(args, "floor", None))
        self.floor, self.floor_mt = build_floor(self.floor_sources, os.path.join(self.work, "floor-bin"))
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/hook"
        self.courier = os.path.abspath(args.courier)
        self.nginx = None
        self.commands = {}
        self.report = Report()

    def shown(self, command):
        """A command as the report prints it: $C for courier, $W for the work folder."""
        return (shlex.join(command).replace(self.courier, "$C").replace(self.work + "/floor-bin/", "")
                .replace(self.work, "$W")
                .replace(REPO + "/", "").replace(sys.executable, "python3"))

    # Servers

    def start_nginx(self):
        conf = os.path.join(self.work, "nginx.conf")
        with open(conf, "w") as f:
            f.write(NGINX_CONF.format(dir=self.work, port=self.port))
        self.nginx = subprocess.Popen(["nginx", "-c", conf, "-p", self.work], stderr=subprocess.DEVNULL)
        for _ in range(100):
            try:
                subprocess.run(["curl", "-s", "-o", "/dev/null", "-X", "POST", "-d", "{}", self.url], check=True, timeout=2)
                break
            except subprocess.CalledProcessError:
                time.sleep(0.05)
        else:
            raise RuntimeError("nginx did not start")
        if os.environ.get("PIN_NGINX"):
            # An experiment on where the kernel runs the server (performance.md, "Where nginx
            # runs"), for every tool alike; never set for the report's verdicts.
            workers = subprocess.run(["pgrep", "-P", str(self.nginx.pid)], capture_output=True, text=True).stdout
            for pid in [str(self.nginx.pid)] + workers.split():
                subprocess.run(["taskset", "-a", "-p", "-c", os.environ["PIN_NGINX"], pid], check=True,
                               stdout=subprocess.DEVNULL)

    def start_sink(self):
        """A fresh `courier sink` (empty store, so every key is new to it); returns (process, port)."""
        directory = tempfile.mkdtemp(prefix="courier-bench-sink-", dir=self.sink_parent)
        self.sink_dirs.append(directory)
        port = free_port()
        sink = subprocess.Popen([self.courier, "sink", "--listen", f"127.0.0.1:{port}", "--dir", directory],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        # No proxy, whatever the environment says: only loopback traffic.
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        for _ in range(100):
            try:
                opener.open(f"http://127.0.0.1:{port}/health", timeout=2).read()
                return sink, port
            except OSError:
                time.sleep(0.05)
        sink.kill()
        raise RuntimeError("courier sink did not start")

    def stop_sink(self, sink):
        """Stops the sink; returns the CPU seconds it used."""
        cpu = process_cpu(sink.pid)
        sink.terminate()
        sink.wait()
        shutil.rmtree(self.sink_dirs.pop(), ignore_errors=True)
        return cpu

    def stop(self):
        if self.nginx:
            self.nginx.send_signal(signal.SIGQUIT)
            self.nginx.wait()
        for directory in self.sink_dirs:
            shutil.rmtree(directory, ignore_errors=True)
        shutil.rmtree(self.work, ignore_errors=True)

    # Spools and configurations

    def make_records(self, n, where):
        os.makedirs(where, exist_ok=True)
        for i in range(n):
            with open(os.path.join(where, f"rec-{i:07d}.json"), "w") as f:
                f.write(record(i))

    def config_text(self, spool, url=None, batch=False, concurrency=16):
        text = (f"[courier]\nspool = {spool}\ndevice-id = bench\nsettle = 0s\nnotify = off\n\n"
                f"[subscriber bench]\nurl = {url or self.url}\nconcurrency = {concurrency}\n")
        if batch:
            # Batch mode wants a server that answers results[]: nginx's 204
            # has none, so courier would retry every item.
            text += "mode = batch\nbatch-size = 100\n"
        return text

    def config(self, spool, **kwargs):
        path = os.path.join(self.work, f"courier-{os.path.basename(spool)}.conf")
        with open(path, "w") as f:
            f.write(self.config_text(spool, **kwargs))
        return path

    def drop(self, spool, source):
        """Drops every file of source into spool/queued/ as a script does: write into tmp/, rename.

        (Not hard links: courier refuses files with a second name, as
        Postfix's pickup does.) Done before timing starts."""
        queued, tmp = os.path.join(spool, "queued"), os.path.join(spool, "tmp")
        os.makedirs(queued, exist_ok=True)
        os.makedirs(tmp, exist_ok=True)
        for entry in os.scandir(source):
            shutil.copyfile(entry.path, os.path.join(tmp, entry.name))
            os.rename(os.path.join(tmp, entry.name), os.path.join(queued, entry.name))

    def fresh_spool(self, name, source=None, init=True):
        spool = os.path.join(self.work, name)
        shutil.rmtree(spool, ignore_errors=True)
        if init:
            subprocess.run([self.courier, "--spool", spool, "init"], check=True, stdout=subprocess.DEVNULL)
        else:
            os.makedirs(spool)
        if source:
            self.drop(spool, source)
        return spool

    def count_sent(self, spool, n, who):
        sent = len(os.listdir(os.path.join(spool, "sent")))
        if sent != n:
            raise RuntimeError(f"{who} sent {sent} of {n}")

    # The interleaved tools: each returns (wall seconds, CPU seconds).

    def courier_trial(self, source, n):
        spool = self.fresh_spool("spool-run", source)
        command = [self.courier, "--config", self.config(spool), "--quiet", "run"]
        self.commands[COURIER] = command
        wall, cpu, _ = timed(command)
        self.count_sent(spool, n, "courier")
        return wall, cpu

    def batch_trial(self, source, n):
        spool = self.fresh_spool("spool-batch", source)
        sink, port = self.start_sink()
        try:
            conf = self.config(spool, url=f"http://127.0.0.1:{port}/transactions/batch", batch=True)
            command = [self.courier, "--config", conf, "--quiet", "run"]
            self.commands[BATCH] = command
            wall, cpu, _ = timed(command)
        finally:
            sink_cpu = self.stop_sink(sink)
        self.sink_cpu_ms.setdefault(BATCH, []).append(sink_cpu * 1000 / n)
        self.count_sent(spool, n, "courier in batch mode")
        return wall, cpu

    def floor_trial(self, name, binary, source, n, url=None, env=None):
        """The floor on a fresh drop (its own folders, as the peer's); its CPU from rusage, threads included."""
        spool = self.fresh_spool("spool-floor", source, init=False)
        command = [binary, spool, url or self.url]
        self.commands[name] = [f"{k}={v}" for k, v in (env or {}).items()] + command
        # It prints its own figures on standard error: the report has ours.
        wall, cpu, _ = timed(command, env={**os.environ, **(env or {})}, stderr=subprocess.DEVNULL)
        self.count_sent(spool, n, name)
        return wall, cpu

    def floor_batch_trial(self, source, n):
        """The floor's batch mode (100 items per POST, courier's wire format) against a fresh `courier sink`."""
        sink, port = self.start_sink()
        try:
            wall, cpu = self.floor_trial(FLOOR_BATCH, self.floor, source, n,
                                         url=f"http://127.0.0.1:{port}/transactions/batch",
                                         env={**FLOOR_ENV, "BATCH": "100"})
        finally:
            sink_cpu = self.stop_sink(sink)
        self.sink_cpu_ms.setdefault(FLOOR_BATCH, []).append(sink_cpu * 1000 / n)
        return wall, cpu

    def curl_config(self, source, files):
        path = os.path.join(self.work, f"curl-{len(files)}.cfg")
        with open(path, "w") as f:
            for index, name in enumerate(files):
                key = "bench-" + name[4:11]
                if index > 0:
                    f.write("next\n")
                # The same headers as naive-durable-peer.py's HEADERS.
                f.write(f'url = "{self.url}"\noutput = "/dev/null"\ndata-binary = "@{os.path.join(source, name)}"\n'
                        f'header = "Content-Type: application/json"\nheader = "Idempotency-Key: {key}"\n'
                        f'header = "User-Agent: courier/0.1.0"\nheader = "Courier-Device: bench"\n'
                        f'header = "Courier-Session: bench"\nheader = "Expect:"\n')
        return path

    def curl_trial(self, config):
        command = ["curl", "-s", "--parallel", "--parallel-max", "16", "-K", config]
        self.commands[CURL] = command
        wall, cpu, _ = timed(command, stderr=subprocess.DEVNULL)
        return wall, cpu

    def naive_trial(self, source, n):
        # Its own folders, not a courier spool: the peer makes sending/, sent/ and ledger/.
        spool = self.fresh_spool("spool-naive", source, init=False)
        command = [sys.executable, PEER, spool, self.url]
        self.commands[PEER_NAME] = command
        wall, cpu, _ = timed(command)
        self.count_sent(spool, n, "the naive durable peer")
        return wall, cpu

    def loop_trial(self, source, files):
        script = os.path.join(self.work, "loop.sh")
        with open(script, "w") as f:
            f.write("set -e\n")
            for name in files:
                f.write(f'curl -s -o /dev/null -H "Content-Type: application/json" -H "Idempotency-Key: {name}" '
                        f'--data-binary @{os.path.join(source, name)} {self.url}\n')
        command = ["sh", script]
        self.commands[LOOP] = command
        wall, cpu, _ = timed(command)
        return wall, cpu

    # Sections of the report

    def throughput(self):
        args = self.args
        source = os.path.join(self.work, "records")
        self.make_records(args.n, source)
        files = sorted(os.listdir(source))
        curl_cfg = self.curl_config(source, files)
        loop_files = files[: args.loop_n]
        tools = [
            (COURIER, args.n, lambda: self.courier_trial(source, args.n)),
            (CURL, args.n, lambda: self.curl_trial(curl_cfg)),
            (PEER_NAME, args.n, lambda: self.naive_trial(source, args.n)),
            (FLOOR_MT, args.n, lambda: self.floor_trial(FLOOR_MT, self.floor_mt, source, args.n)),
            (FLOOR_ONE, args.n, lambda: self.floor_trial(FLOOR_ONE, self.floor, source, args.n, env=FLOOR_ENV)),
            (BATCH, args.n, lambda: self.batch_trial(source, args.n)),
            (FLOOR_BATCH, args.n, lambda: self.floor_batch_trial(source, args.n)),
            (LOOP, len(loop_files), lambda: self.loop_trial(source, loop_files)),
        ]
        runs = {name: [] for name, _, _ in tools}
        for r in range(args.rounds):
            self.round_loads.append(os.getloadavg()[0])
            progress(f"  round {r + 1}: load {self.round_loads[-1]:.2f}")
            for name, n, trial in tools:
                wall, cpu = trial()
                runs[name].append((n / wall, cpu * 1000 / n, wall))
                progress(f"  round {r + 1}: {name:34s} {n / wall:9.0f} records/s  "
                         f"{cpu * 1000 / n:6.3f} CPU ms/record")
        methods = self.methods(args.n, len(loop_files))
        for name, n, _ in tools:
            self.report.throughput.append((name, n, runs[name], self.shown(self.commands[name]), methods[name]))
        median = {name: statistics.median(row[0] for row in rows) for name, rows in runs.items()}
        cpu = {name: statistics.median(row[1] for row in rows) for name, rows in runs.items()}
        self.ratio_targets(median, cpu, runs)
        self.report.appendix.append(("courier's configuration, per record (nginx)",
                                     self.config_text(os.path.join(self.work, "spool-run"))))
        self.report.appendix.append(("courier's configuration, batch mode (PORT: the round's fresh sink)",
                                     self.config_text(os.path.join(self.work, "spool-batch"), batch=True,
                                                      url="http://127.0.0.1:PORT/transactions/batch")))
        with open(curl_cfg) as f:
            self.report.appendix.append(("the first of curl's config stanzas (one per file, `next` between)",
                                         f.read().split("next\n")[0]))

    def methods(self, n, loop_n):
        """How each tool's figure was made, beside its command."""
        return {
            COURIER: f"fresh spool; {n:,} files written to tmp/ and renamed into queued/ before timing; "
                     "timed: the whole round (intake, delivery, ledger fsynced before items leave sending/)",
            CURL: "config (one stanza per file, `Expect:` disabled, courier's headers) written before timing; "
                  "timed: curl alone",
            PEER_NAME: "files dropped into queued/ as for courier, before timing; timed: the script "
                       "(Python start, renames into sending/, writing curl's config, curl, the settling "
                       "process's renames into sent/ and ledger, fsynced per batch of up to 256)",
            FLOOR_MT: f"`{self.floor_sources}/floor_mt.c` built with `cc -O2 … -lcurl -lpthread`; files dropped "
                      "into queued/ as for courier, before timing; timed: the program (intake, syncfs and ledger "
                      "fsync per group of 256, renames into sending/ and sent/, 16 keep-alive transfers through "
                      "libcurl multi, ledger and folder fsyncs per 256), its three threads' CPU",
            FLOOR_ONE: f"`{self.floor_sources}/floor.c`, the same durable work on one thread, its fsyncs on a "
                       "commit thread (`SYNCFS=1 ASYNC=1`)",
            BATCH: "as courier per record, `mode = batch`, `batch-size = 100`, against a fresh `courier sink` "
                   f"(store in {self.sink_parent}) started before timing; CPU: courier's alone "
                   f"(the sink's, median: {statistics.median(self.sink_cpu_ms[BATCH]):.3f} ms per record)",
            FLOOR_BATCH: "floor.c with `BATCH=100 SYNCFS=1 ASYNC=1`: the same durable work, 100 items per POST in "
                         "courier's batch body, against a fresh `courier sink` as courier's batch mode; CPU: the "
                         "floor's alone (the sink's, median: "
                         f"{statistics.median(self.sink_cpu_ms[FLOOR_BATCH]):.3f} ms per record)",
            LOOP: f"one `curl` per file, {loop_n:,} files, headers Content-Type and Idempotency-Key",
        }

    def ratio_targets(self, median, cpu, runs):
        """Issue 23's throughput targets (ratios within this run), then issue 13's that still stand.

        Beside each target's ratio of the medians (the verdict, as the issue defines it), the same
        ratio within each round: the tools of one round ran minutes apart at most, so a round's
        ratio is paired, and their spread shows how far one report's verdict can be trusted."""
        targets = self.report.targets

        def each_round(top, bottom, field, limit, at_least):
            ratios = [a[field] / b[field] for a, b in zip(runs[top], runs[bottom])]
            met = sum(1 for v in ratios if (v >= limit if at_least else v <= limit))
            return ", ".join(f"{v:.2f}" for v in ratios) + f" (met in {met} of {len(ratios)})"

        def cpu_target(top, bottom, label, limit):
            ratio = cpu[top] / cpu[bottom]
            targets.append((label, f"{ratio:.2f}× ({cpu[top] * 1000:.0f} against {cpu[bottom] * 1000:.0f} µs)",
                            f"≤ {limit}×", verdict(ratio, limit, False), each_round(top, bottom, 1, limit, False)))

        def rate_target(top, bottom, label, limit):
            ratio = median[top] / median[bottom]
            targets.append((label, f"{ratio:.2f}×", f"≥ {limit}×", verdict(ratio, limit, True),
                            each_round(top, bottom, 0, limit, True)))

        for floor in (FLOOR_MT, FLOOR_ONE):
            cpu_target(COURIER, floor, f"courier CPU per record / {floor}'s", 1.25)
        rate_target(COURIER, CURL, "courier records/s / curl --parallel 16", 1.0)
        rate_target(COURIER, PEER_NAME, "courier records/s / naive durable peer", 1.5)
        rate_target(BATCH, CURL, "courier batch records/s / curl --parallel 16", 1.0)
        cpu_target(BATCH, FLOOR_BATCH, "courier batch CPU per record / floor batch's", 1.5)
        for floor in (FLOOR_MT, FLOOR_ONE):
            targets.append((f"{floor} records/s / curl --parallel 16 (for scale)",
                            f"{median[floor] / median[CURL]:.2f}×", "—", "—", "—"))
        targets.append(("courier CPU per record, intake + delivery (issue 13)", f"{cpu[COURIER]:.3f} ms",
                        "≤ 0.10 ms", verdict(cpu[COURIER], 0.10, False), "—"))
        ratio = median[BATCH] / median[CURL]
        targets.append(("courier batch records/s / curl --parallel 16 (issue 13's moonshot)", f"{ratio:.2f}×", "≥ 5×",
                        verdict(ratio, 5.0, True), "—"))
        targets.append(("courier / curl loop (for scale)", f"{median[COURIER] / median[LOOP]:.1f}×", "—", "—", "—"))

    def empty_round(self):
        """The cost of a wake-up with nothing to do; returns the empty spool and its configuration."""
        empty = self.fresh_spool("spool-empty")
        conf = self.config(empty)
        command = [self.courier, "--config", conf, "--quiet", "run"]
        walls = [peak_rss(command)[0] * 1000 for _ in range(30)]
        ms = statistics.median(walls)
        self.report.figure("a round on an empty spool, median of 30", f"{ms:.1f} ms", "≤ 15 ms",
                           verdict(ms, 15, False), f"`{self.shown(command)}`, wall from spawn to exit")
        return empty, conf

    def prune(self, spool, conf):
        """Prune over 200 days of ledger files, 17 of them older than the 183 days kept."""
        ledger = os.path.join(spool, "ledger")
        now = time.time()
        line = "2026-01-01T00:00:00.000Z\tr\tbench\tk\tsent\t204\t1\t3\t\n" * 2000
        for day in range(200):
            date = time.strftime("%Y-%m-%d", time.gmtime(now - day * 86400))
            with open(os.path.join(ledger, date + ".tsv"), "w") as f:
                f.write(line)
        command = [self.courier, "--config", conf, "prune"]
        wall, _ = peak_rss(command)
        self.report.figure("`courier prune` over 200 days of ledger files (2,000 lines each; 17 older than 183 d)",
                           f"{wall * 1000:.0f} ms", how=f"`{self.shown(command)}`, wall")

    def why(self, days=183, lines_per_day=10_000):
        """`courier why KEY` over a ledger of `days` day files written directly, each of lines_per_day lines."""
        spool = self.fresh_spool("spool-why")
        records = lines_per_day // 2
        today = time.time()
        dates = [time.strftime("%Y-%m-%d", time.gmtime(today - d * 86400)) for d in range(days)]
        for date in dates:
            with open(os.path.join(spool, "ledger", date + ".tsv"), "w") as f:
                f.write(ledger_day(date, records))
        # A key from the middle of the history, its entry in sent/ where the
        # ledger says it went (why refuses a key no folder holds).
        key = f"w-{dates[days // 2]}-{records // 2:05d}"
        with open(os.path.join(spool, "sent", f"{key}@bench.json"), "w") as f:
            f.write(f'{{"id":"{key}","kind":"sleep","time":"2026-11-30T07:00:00Z"}}')
        command = [self.courier, "--config", self.config(spool), "why", key]
        # Time the real answer, not an error path: the history must be there.
        answer = subprocess.run(command, check=True, capture_output=True, text=True).stdout
        if f"{key}\tsent\t204" not in answer:
            raise RuntimeError(f"courier why {key} did not show its history:\n{answer}")
        walls = [peak_rss(command)[0] for _ in range(3)]
        seconds = statistics.median(walls)
        size = sum(os.path.getsize(os.path.join(spool, "ledger", d + ".tsv")) for d in dates)
        self.report.figure(f"`courier why KEY` over {days} days × {2 * records:,} ledger lines "
                           f"({size / 1e6:.0f} MB), median of 3", f"{seconds:.2f} s", "≤ 1 s",
                           verdict(seconds, 1, False),
                           f"`{self.shown(command)}`, wall; day files written directly (accepted + sent line per "
                           "record, nine columns), page cache warm")
        self.report.appendix.append(("two lines of the generated ledger for `why`", ledger_day(dates[0], 1)))
        shutil.rmtree(spool, ignore_errors=True)

    def big_spool(self, n):
        """n entries already in queued/ (KEY@SUB.json), each with its `accepted` line in today's ledger."""
        spool = self.fresh_spool(f"spool-{n}")
        queued = os.path.join(spool, "queued")
        small = '{"id":"b-%07d","kind":"sleep"}'
        for i in range(n):
            with open(os.path.join(queued, f"b-{i:07d}@bench.json"), "w") as f:
                f.write(small % i)
        # What intake would have written: list's last-event column reads it.
        round_id = time.strftime("%Y%m%dT%H%M%SZ-b000", time.gmtime())
        stamp = iso_stamp(time.time())
        line = "%s\t%s\tbench\tb-%07d\taccepted\t0\t0\t0\tkind=sleep from b-%07d.json\n"
        with open(os.path.join(spool, "ledger", time.strftime("%Y-%m-%d", time.gmtime()) + ".tsv"), "w") as f:
            for start in range(0, n, 10_000):
                f.write("".join(line % (stamp, round_id, i, i) for i in range(start, min(n, start + 10_000))))
        return spool

    def big_queue(self, n):
        """status, the first row of list queued, and a round's peak RSS with n entries queued."""
        progress(f"  building a spool of {n:,} queued entries")
        spool = self.big_spool(n)
        conf = self.config(spool)
        at = "" if n == MILLION else f" (stated at 1,000,000; measured at {n:,})"
        command = [self.courier, "--config", conf, "status"]
        wall, _ = peak_rss(command)
        self.report.figure(f"`courier status` with {n:,} queued", f"{wall:.2f} s", "≤ 1 s at 1,000,000",
                           verdict(wall, 1, False) + at, f"`{self.shown(command)}`, wall")
        command = [self.courier, "--config", conf, "list", "queued"]
        seconds, row = first_line(command)
        if not row.startswith("queued\t"):
            raise RuntimeError(f"courier list queued began with {row!r}")
        self.report.figure(f"`courier list queued | head` with {n:,} queued: first row", f"{seconds:.2f} s",
                           "≤ 1 s at 1,000,000", verdict(seconds, 1, False) + at,
                           f"`{self.shown(command)}` on a pipe: time from spawn until its first line is read; "
                           "the pipe is closed after 10 lines")
        command = [self.courier, "--config", conf, "--quiet", "run"]
        wall, rss = peak_rss(command)
        self.count_sent(spool, n, f"the round over {n:,} entries")
        self.report.figure(f"peak RSS of a round delivering {n:,} queued entries (to nginx)",
                           f"{rss / 1024:.1f} MiB ({wall:.1f} s)", "≤ 64 MiB", verdict(rss / 1024, 64, False),
                           f"`{self.shown(command)}`, ru_maxrss from wait4")
        shutil.rmtree(spool, ignore_errors=True)

    # The whole run

    def run(self):
        args = self.args
        started, load_start = time.gmtime(), os.getloadavg()
        # The tree the binary was built from: read now, not after a long run
        # during which someone may commit.
        self.tree = self.git_tree()
        self.start_nginx()
        if not args.queues_only:
            progress(f"throughput: N = {args.n:,}, {args.rounds} round" + ("s" if args.rounds != 1 else ""))
            self.throughput()
            progress("once-each figures")
            empty, conf = self.empty_round()
            self.prune(empty, conf)
            self.why()
        for n in sorted({args.queue_n} | ({args.big_n} if args.big else set())):
            self.big_queue(n)
        text = self.render(started, load_start, os.getloadavg())
        print(text, end="", flush=True)
        results = os.path.join(REPO, "bench", "results")
        os.makedirs(results, exist_ok=True)
        with open(os.path.join(results, "latest.md"), "w") as f:
            f.write(text)

    # Rendering

    @staticmethod
    def git_tree():
        return (output(["git", "rev-parse", "--short=12", "HEAD"]), output(["git", "rev-parse", "--abbrev-ref", "HEAD"]),
                output(["git", "status", "--porcelain", "--untracked-files=no"]))

    def header(self, started, load_start, load_end):
        def load(values):
            return " ".join(f"{v:.2f}" for v in values)
        commit, branch, dirty = self.tree
        uname = os.uname()
        # nginx -v says its version on standard error.
        nginx = output(["nginx", "-v"], stderr=True).split("/")[-1]
        curl = output(["curl", "--version"]).split(" (")[0]
        return [
            f"# courier benchmark, {time.strftime('%Y-%m-%d %H:%M UTC', started)}",
            "",
            "| | |",
            "|---|---|",
            f"| machine | nproc {output(['nproc'])} ({os.cpu_count()} CPUs), "
            f"{uname.sysname} {uname.release} {uname.machine} |",
            f"| load average (1, 5, 15 min) | at start {load(load_start)}; at end {load(load_end)} |",
            f"| git commit | {commit} (branch {branch}{', with uncommitted changes' if dirty else ''}) |",
            f"| courier | `$C` = {self.courier}: {output([self.courier, 'version'])} |",
            f"| peers | {curl}; nginx-light {nginx} (one worker, loopback, `204` after reading the body); "
            f"`courier sink` for batch mode; the floor from {self.floor_sources} ({output(['cc', '--version'])}) |",
            f"| this run | `{self.shown([sys.executable] + sys.argv)}` |",
            f"| work folder | `$W` = {self.work} (removed at the end) |",
            "",
        ]

    def render(self, started, load_start, load_end):
        args, report = self.args, self.report
        lines = self.header(started, load_start, load_end)
        rounds = f"{args.rounds} round" + ("s" if args.rounds != 1 else "")
        # --queues-only: no throughput rounds to show.
        if report.throughput:
            lines += [f"## Throughput: N = {args.n:,} records of {len(record(0)):,} bytes, {rounds}, "
                      f"tools interleaved {' '.join('ABCDEFGHIJ'[:len(report.throughput)])} in each round, medians", "",
                      "1-minute load average as each round began: " + ", ".join(f"{v:.2f}" for v in self.round_loads)
                      + ".", "",
                      "| tool | N | records/s (median) | CPU ms per record (median) | runs, records/s | command (timed) |",
                      "|---|---:|---:|---:|---|---|"]
            for name, n, rows, command, _ in report.throughput:
                rate = statistics.median(r[0] for r in rows)
                cpu = statistics.median(r[1] for r in rows)
                lines.append(f"| {name} | {n:,} | {rate:,.0f} | {cpu:.3f} | {', '.join(f'{r[0]:,.0f}' for r in rows)} "
                             f"| `{cell(command)}` |")
            lines += ["", "How each was made:", ""]
            lines += [f"* **{name}**: {method}." for name, _, _, _, method in report.throughput]
            lines += ["", "## Throughput targets (ratios of the medians above)", "",
                      "The verdict is the ratio of the medians; beside it, the same ratio within each round "
                      "(the tools of a round ran side by side), and in how many rounds it met the target.", "",
                      "| measure | result | target | verdict | each round |", "|---|---:|---|---|---|"]
            lines += ["| " + " | ".join(map(cell, row)) + " |" for row in report.targets]
        lines += ["", "## Once-each figures", "",
                  "| measure | result | target | verdict | command, method |", "|---|---:|---|---|---|"]
        lines += ["| " + " | ".join(map(cell, row)) + " |" for row in report.figures]
        lines += ["", "## Inputs", ""]
        for title, text in report.appendix:
            lines += [f"{title}:", "", "```", text.rstrip("\n").replace(self.work, "$W"), "```", ""]
        return "\n".join(lines)


def main():
    if os.environ.get("PIN_NGINX"):
        sys.exit("bench.py: PIN_NGINX is for experiments (compare-builds.py, profile.py, placement.py); "
                 "the report is measured with nginx where the kernel puts it")
    parser = argparse.ArgumentParser(description="Every figure of issues 13 and 23 in one report.")
    parser.add_argument("--courier", required=True)
    parser.add_argument("--n", type=int, default=10_000, help="records per throughput trial (10,000)")
    parser.add_argument("--loop-n", type=int, default=500, help="records for the one-curl-per-file loop (500)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--queue-n", type=int, default=100_000,
                        help="queued entries for status, list and round RSS in every run (100,000)")
    parser.add_argument("--big", action="store_true",
                        help="also the 1,000,000-entry figures (several minutes, 1 GB of disk)")
    parser.add_argument("--big-n", type=int, default=MILLION, help="entries for --big (1,000,000; smaller to test)")
    parser.add_argument("--queues-only", action="store_true",
                        help="only the queued-spool figures (status, list | head, a round's peak RSS): "
                        "no throughput rounds, empty round, prune or why")
    parser.add_argument("--sink-parent", help="where the batch sink stores (default /dev/shm, a tmpfs)")
    parser.add_argument("--floor", help="the folder with floor.c and floor_mt.c (default ../shared/floor beside "
                        "the repository, else /work/shared/floor)")
    args = parser.parse_args()
    # Only loopback traffic: no proxy from the environment for curl,
    # courier's libcurl or urllib.
    for name in list(os.environ):
        if name.lower() in ("http_proxy", "https_proxy", "all_proxy"):
            del os.environ[name]
    bench = Bench(args)
    try:
        bench.run()
    finally:
        bench.stop()


if __name__ == "__main__":
    main()
