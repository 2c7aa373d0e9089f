"""The power-loss sweep (scripts/powerloss-test.sh runs it; see its header).

For each file system and workload: a base image is prepared outside LazyFS;
a counting run (no fault, every LazyFS operation logged) finds how many
flushes the mount and the workload make, and what the receivers get when
nothing goes wrong; then for every K from the end of the mount to the last
flush the workload runs again from the base image and LazyFS cuts the power
just before flush K+1 (K = the last: just after the workload's end). What
survived is mounted by the real file system (which replays its journal or
log), checked, recovered by courier itself and checked again (rules.py,
recovery.py). A crash state seen before (the same names, links, bytes and
ledger events, the same keys at the receivers) is counted, not recovered again.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import rules
from courier import TIMEOUT, Courier
from crashdisk import BLOCK, CACHE_MIB, NEVER, WORK_PREFIX, LazyFS, Mount, MountFailed, Teardown, copy_sparse, make_image, wait_any
from receivers import Receivers
from recovery import Recovery
from spoolstate import Snapshot
from workloads import ALL, BY_NAME, Command, Workload


@dataclass
class Point:
    """One crash point that broke a rule: what the cut left, what broke."""
    k: int
    flushes: int
    step: str
    violations: list[rules.Violation] = field(default_factory=list)
    state: list[str] = field(default_factory=list)
    recovery: list[str] = field(default_factory=list)
    image: str = ""


@dataclass
class Result:
    fs: str
    workload: str
    flushes: int = 0  # the workload's, not the mount's
    points: int = 0
    distinct: int = 0
    touched_kib: int = 0  # of the image in the counting run: LazyFS's cache must hold it
    seconds: float = 0.0
    bad: list[Point] = field(default_factory=list)


@dataclass
class Case:
    """One file system and one workload, prepared."""
    fs: str
    workload: Workload
    base: Path  # the image every run starts from
    receivers_base: Path  # the receivers' stores when the workload starts
    configs: dict[str, Path]
    mnt: Path

    @property
    def spool(self) -> Path:
        return self.mnt / "spool"


class Prep:
    """What a workload's preparation may do to the base image's spool."""

    def __init__(self, courier: Courier, config: Path, spool: Path, catalogs: Path, workload: Workload) -> None:
        self.courier = courier
        self.config = config
        self.spool = spool
        self.catalogs = catalogs
        self.workload = workload

    def run(self, command: Command) -> None:
        done = self.courier.run(self.config, self.spool, command)
        if done.returncode != 0:
            raise SystemExit(f"powerloss: preparing {self.workload.name}: `{command}`: exit {done.returncode}: "
                             f"{done.stderr.strip()}")

    def kill_mid_round(self, command: Command, claims: int) -> None:
        """A round killed -9 once `claims` entries wait in sending/ (its
        worker's folder of it) for answers that never come."""
        folder = self.spool / "sending" / (command.worker or "")
        process = self.courier.start(self.config, self.spool, command, subprocess.DEVNULL)
        deadline = time.monotonic() + 20
        while not (folder.is_dir() and sum(1 for p in folder.iterdir() if p.is_file()) >= claims):
            if process.poll() is not None or time.monotonic() > deadline:
                process.kill()
                raise SystemExit(f"powerloss: preparing {self.workload.name}: `{command}` never had {claims} "
                                 f"claims in {folder}")
            time.sleep(0.01)
        process.kill()
        process.wait()


class Sweep:
    def __init__(self, work: Path, binary: str, lazyfs: str, kept: Path | None, teardown: Teardown) -> None:
        self.work = work
        self.teardown = teardown
        self.catalogs = work / "catalogs"
        self.catalogs.mkdir(parents=True, exist_ok=True)
        records = work / "records"
        records.mkdir(parents=True, exist_ok=True)
        self.courier = Courier(binary, records)
        self.receivers = Receivers(binary, work, teardown, self.catalogs)
        self.lazyfs = LazyFS(lazyfs, work, teardown)
        self.kept = kept

    def sweep(self, fs: str, workload: Workload) -> Result:
        started = time.monotonic()
        result = Result(fs, workload.name)
        case = self.prepare(fs, workload)
        mount_flushes, total, touched = self.count(case)
        result.touched_kib = touched * BLOCK // 1024
        if touched * BLOCK > CACHE_MIB * (1 << 20) * 0.9:
            raise SystemExit(f"powerloss: {fs} {workload.name} touches {touched * BLOCK >> 10} KiB of the image; "
                             f"LazyFS's {CACHE_MIB} MiB cache would fill and write through (raise CACHE_MIB)")
        reference = {name: self.receivers[name].received() for name in self.receivers.names}
        workload.learn(reference)
        seen: set[str] = set()
        result.flushes = total - mount_flushes
        for k in range(mount_flushes, total + 1):
            result.points += 1
            point = self.point(case, k, total, seen, reference)
            if point is not None and point.violations:
                result.bad.append(point)
                print(report(fs, workload, point), flush=True)
        result.distinct = len(seen)
        result.seconds = time.monotonic() - started
        if self.kept is None:
            shutil.rmtree(case.mnt.parent, ignore_errors=True)
        return result

    def prepare(self, fs: str, workload: Workload) -> Case:
        here = self.work / f"{fs}-{workload.name}"
        shutil.rmtree(here, ignore_errors=True)
        here.mkdir(parents=True)
        urls = {name: self.receivers[name].url for name in self.receivers.names}
        configs = {}
        for phase in ("prep", "workload", "recovery"):
            configs[phase] = here / f"{phase}.conf"
            configs[phase].write_text(workload.configuration(
                phase, urls, self.receivers.down_url, self.receivers.stall_url, self.receivers["alpha"].url))
        for record in workload.enqueued():
            (self.courier.records / f"{record.id}.json").write_bytes(record.body)
        case = Case(fs, workload, here / "base.img", here / "receivers-base", configs, here / "mnt")
        make_image(case.base, fs)
        mount = Mount(case.base, fs, case.mnt, self.teardown)
        try:
            prep = Prep(self.courier, configs["prep"], case.spool, self.catalogs, workload)
            self.receivers.clear()
            prep.run(Command(["init"]))
            workload.prepare(prep)
        finally:
            mount.close()
        self.receivers.save(case.receivers_base)
        return case

    def count(self, case: Case) -> tuple[int, int, int]:
        """The counting run: the image's fsyncs after the mount and in all,
        and the blocks the run touched. Its state is not examined: the last
        point of the sweep cuts at the same place."""
        self.receivers.restore(case.receivers_base)
        copy_sparse(case.base, self.lazyfs.image)
        self.lazyfs.start(NEVER, log_operations=True)
        try:
            mount = Mount(self.lazyfs.disk, case.fs, case.mnt, self.teardown)
            mount_flushes = self.lazyfs.fsyncs()
            where, _ = self.run_steps(case)
            if where != "after the last step":
                raise SystemExit(f"powerloss: {case.fs} {case.workload.name}: the counting run stopped in {where}")
            self.lazyfs.cut()
            mount.close()
            return mount_flushes, self.lazyfs.fsyncs(), self.lazyfs.blocks_touched()
        finally:
            self.lazyfs.stop()

    def point(self, case: Case, k: int, total: int, seen: set[str], reference) -> Point | None:
        """Runs the workload with the power cut at K and examines what
        survived. None for a crash state seen before."""
        self.receivers.restore(case.receivers_base)
        copy_sparse(case.base, self.lazyfs.image)
        where, completed = "step 1, before its first flush", []
        # K = 0: not one flush made it, so what survived is the base image
        # (and LazyFS takes no fault at occurrence 0).
        if k > 0:
            self.lazyfs.start(k)
            try:
                where = "the mount"
                mount = Mount(self.lazyfs.disk, case.fs, case.mnt, self.teardown)
                where, completed = self.run_steps(case)
                self.lazyfs.cut()  # the power goes, if the fault has not cut it already
                mount.close()
            except MountFailed:
                pass
            finally:
                self.lazyfs.stop()
        image = ""
        if self.kept is not None:
            image = str(self.kept / f"{case.fs}-{case.workload.name}-K{k}.img")
            copy_sparse(self.lazyfs.image, Path(image))
        point = Point(k, total, where, image=image)
        try:
            check = Mount(self.lazyfs.image, case.fs, case.mnt, self.teardown)
        except MountFailed as error:
            point.violations.append(rules.Violation("mount", f"the file system does not mount after the cut: {error}"))
            return point
        try:
            cut = Snapshot(case.spool)
            identity = cut.fingerprint() + repr(self.receivers.fingerprint())
            if identity in seen:
                point = None
            else:
                seen.add(identity)
                point.state = cut.describe()
                fates = case.workload.expected(cut, completed)
                point.violations += rules.after_cut(case.workload, cut, completed, fates)
                recovery = Recovery(self.courier, case.configs["recovery"], case.spool, case.workload)
                point.violations += recovery.check(cut, fates, self.receivers, reference)
                point.recovery = recovery.said
        finally:
            check.close()
        if image and (point is None or not point.violations):
            os.unlink(image)
        return point

    def run_steps(self, case: Case) -> tuple[str, list[int]]:
        """Runs the workload's steps until the cut: where it came, and the
        steps whose every command returned 0 before it."""
        completed: list[int] = []
        for index, step in enumerate(case.workload.steps):
            where = f"step {index + 1} ({' & '.join(str(c) for c in step)})"
            if not self.lazyfs.alive():
                return where, completed
            logs = [tempfile.TemporaryFile(dir=self.work) for _ in step]
            processes = [self.courier.start(case.configs["workload"], case.spool, c, log) for c, log in zip(step, logs)]
            pidfds = [os.pidfd_open(p.pid) for p in processes]
            try:
                if not self.wait(processes, pidfds, where):
                    # Exit 0 means every fsync it asked for came back, all
                    # before the cut (which fails the next one).
                    if all(p.returncode == 0 for p in processes):
                        completed.append(index)
                    return where, completed
                for command, process, log in zip(step, processes, logs):
                    if process.returncode != 0:
                        log.seek(0)
                        raise SystemExit(f"powerloss: {case.workload.name}: `{command}` failed with no cut: exit "
                                         f"{process.returncode}: {log.read().decode(errors='replace').strip()[-500:]}")
                completed.append(index)
            finally:
                for fd in pidfds:
                    os.close(fd)
                for log in logs:
                    log.close()
        return "after the last step", completed

    def wait(self, processes: list[subprocess.Popen], pidfds: list[int], where: str) -> bool:
        """Until the step's commands end (True) or the power is cut (False:
        what still runs is killed, as a cut would)."""
        deadline = time.monotonic() + TIMEOUT
        while any(p.poll() is None for p in processes) and self.lazyfs.alive():
            if time.monotonic() > deadline:
                raise SystemExit(f"powerloss: {where} did not finish in {TIMEOUT} s")
            wait_any([fd for fd, p in zip(pidfds, processes) if p.poll() is None] + [self.lazyfs.pidfd], 1.0)
        # A command that met the cut's failed fsync may exit before LazyFS,
        # which killed itself, is gone.
        if any(p.returncode not in (None, 0) for p in processes) and self.lazyfs.alive():
            wait_any([self.lazyfs.pidfd], 2.0)
        if self.lazyfs.alive():
            return True
        for process in processes:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)
        for process in processes:
            process.wait()
        return False


def report(fs: str, workload: Workload, point: Point) -> str:
    out = [f"VIOLATION {fs} {workload.name} K={point.k}: the first {point.k} of {point.flushes} flushes survived "
           f"(cut in {point.step})"]
    out += [f"    {v}" for v in point.violations]
    out += ["    after the cut:"] + [f"      {line}" for line in point.state]
    out += ["    recovery:"] + [f"      {line}" for line in point.recovery]
    if point.image:
        out.append(f"    kept image (as the cut left it): {point.image}")
    return "\n".join(out)


def table(results: list[Result], total_seconds: float) -> str:
    rows = ["| file system | workload | flushes | crash points | distinct states | with violations | time |",
            "|---|---|---|---|---|---|---|"]
    for r in results:
        broken = sorted({v.rule for p in r.bad for v in p.violations})
        rows.append(f"| {r.fs} | {r.workload} | {r.flushes} | {r.points} | {r.distinct} | {len(r.bad)}"
                    + (f" ({', '.join(broken)})" if broken else "") + f" | {r.seconds:.0f} s |")
    per_fs: dict[str, float] = {}
    for r in results:
        per_fs[r.fs] = per_fs.get(r.fs, 0) + r.seconds
    rows += ["", "time per file system: " + ", ".join(f"{fs} {s:.0f} s" for fs, s in per_fs.items())
             + f"; total {total_seconds:.0f} s"]
    return "\n".join(rows)


def as_json(results: list[Result]) -> str:
    return json.dumps([{
        "fs": r.fs, "workload": r.workload, "flushes": r.flushes, "points": r.points, "distinct": r.distinct,
        "touchedKiB": r.touched_kib, "seconds": round(r.seconds, 1),
        "violations": [{"k": p.k, "step": p.step, "rules": [str(v) for v in p.violations], "state": p.state,
                        "recovery": p.recovery, "image": p.image} for p in r.bad]} for r in results], indent=1)


def scratch() -> str | None:
    """tmpfs when it has room (LazyFS's fsyncs of the image then cost no disk
    I/O): an XFS image holds 65 MiB, twice over; a container's /dev/shm is
    often 64 MiB in all. Else the default, /tmp."""
    try:
        shm = os.statvfs("/dev/shm")
    except OSError:
        return None
    roomy = shm.f_bavail * shm.f_frsize >= 1 << 30
    return "/dev/shm" if roomy and os.access("/dev/shm", os.W_OK) else None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--fs", default="ext4,xfs,btrfs")
    parser.add_argument("--workloads", default=",".join(w.name for w in ALL))
    parser.add_argument("--binary", required=True)
    parser.add_argument("--lazyfs", required=True)
    parser.add_argument("--keep", action="store_true", help="keep the work folder and each violating cut's image")
    parser.add_argument("--json", help="also write the results to this file")
    args = parser.parse_args()
    unknown = [name for name in args.workloads.split(",") if name not in BY_NAME]
    if unknown:
        parser.error(f"unknown workload {', '.join(unknown)} (there are {', '.join(BY_NAME)})")
    work = Path(tempfile.mkdtemp(prefix=WORK_PREFIX, dir=scratch()))
    kept = Path(tempfile.mkdtemp(prefix="courier-powerloss-kept-", dir="/tmp")) if args.keep else None
    teardown = Teardown()

    def stop(signum, frame):
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    started = time.monotonic()
    results: list[Result] = []
    try:
        sweep = Sweep(work, args.binary, args.lazyfs, kept, teardown)
        for fs in args.fs.split(","):
            for name in args.workloads.split(","):
                result = sweep.sweep(fs, BY_NAME[name])
                results.append(result)
                print(f"{fs:6} {name:9} {result.flushes:3} flushes, {result.points:3} crash points, "
                      f"{result.distinct:3} distinct states, {len(result.bad)} with violations "
                      f"({result.seconds:.1f} s)", flush=True)
    finally:
        teardown.run_all()
        if kept is not None:
            print(f"kept: {work} (work), {kept} (images of the cuts that broke a rule)")
        else:
            shutil.rmtree(work, ignore_errors=True)
    print()
    print(table(results, time.monotonic() - started))
    if args.json:
        Path(args.json).write_text(as_json(results))
    return 1 if any(r.bad for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
