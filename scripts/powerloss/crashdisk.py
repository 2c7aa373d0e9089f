"""A disk that loses its volatile write cache at a chosen flush.

A real ext4, XFS or btrfs lives in an image file; the image file lives on
LazyFS, which keeps every write in its own cache until the file is fsynced;
the image is attached to a loop device, which turns every block-layer flush
(REQ_PREFLUSH, and FUA, which the loop driver emulates with a flush) into an
fsync of the image. LazyFS's `clear-cache ... crash=true` fault at fsync
occurrence K drops its cache and dies just before the image's (K+1)-th
fsync, so the image keeps exactly what the first K flushes made durable: a
power cut on a disk with a volatile write cache. What the file system makes
of those blocks when it mounts them again is the real kernel's business.
"""

from __future__ import annotations

import os
import re
import select
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

# LazyFS allocates its whole cache before it mounts (about 7 ms per MiB
# here); a cache that fills up writes through to the image, which would keep
# data a real cut loses, so `Counting.check_cache` refuses a workload that
# touches more blocks than this holds.
CACHE_MIB = 8
BLOCK = 4096
# An occurrence no workload reaches: the counting run's fault never fires.
NEVER = 1_000_000_000
# The sweep's work folder, before tempfile's random part (letters, digits
# and "_"). No hyphen: "-" and a random part that began with "o" made a
# config path LazyFS does not read (`lazyfs_reads`).
WORK_PREFIX = "courier_powerloss_"


def lazyfs_reads(config: Path) -> bool:
    """Whether LazyFS takes `config` as its `--config-path`. This revision
    looks for "-o", in any case, in the argument after `--config-path`
    (`strcasestr(argv[i + 1], "-o")` in main.cpp), takes it for an option
    when it finds one, and loads `config/default.toml` instead."""
    return "-o" not in str(config).lower()


class Teardown:
    """What this run set up, undone in reverse order however it ends."""

    def __init__(self) -> None:
        self._undo: list[tuple[str, Callable[[], None]]] = []

    def push(self, label: str, undo: Callable[[], None]) -> str:
        self._undo.append((label, undo))
        return label

    def pop(self, label: str) -> None:
        for index in range(len(self._undo) - 1, -1, -1):
            if self._undo[index][0] == label:
                _, undo = self._undo.pop(index)
                undo()
                return

    def run_all(self) -> None:
        while self._undo:
            _, undo = self._undo.pop()
            try:
                undo()
            except Exception as error:  # a leftover must not hide the next one's undo
                print(f"powerloss: cleanup: {error}", flush=True)


def run(argv: list[str], timeout: float = 60, check: bool = True) -> subprocess.CompletedProcess:
    result = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    if check and result.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)}: exit {result.returncode}: {result.stderr.strip() or result.stdout.strip()}")
    return result


def is_mounted(path: Path) -> bool:
    """From the mount table: a dead FUSE mount fails stat(2), so
    os.path.ismount says no."""
    target = os.path.realpath(path)
    with open("/proc/self/mountinfo") as table:
        return any(line.split()[4].encode().decode("unicode_escape") == target for line in table)


def unmount(path: Path) -> None:
    """Unmounts, lazily if the file system will not let go (a dead disk)."""
    if not is_mounted(path):
        return
    try:
        if run(["umount", str(path)], timeout=30, check=False).returncode == 0:
            return
    except subprocess.TimeoutExpired:
        pass
    run(["umount", "-l", str(path)], check=False)


class LoopDevice:
    """An image attached to a loop device (buffered I/O, so flushes reach
    the image as fsyncs) for as long as the object is attached."""

    def __init__(self, image: Path, teardown: Teardown) -> None:
        self.teardown = teardown
        for attempt in range(20):
            result = run(["losetup", "--find", "--show", "--direct-io=off", str(image)], check=False)
            if result.returncode == 0:
                break
            # Another user took the free device between find and attach.
            time.sleep(0.05 * (attempt + 1))
        else:
            raise RuntimeError(f"losetup {image}: {result.stderr.strip()}")
        self.device = result.stdout.strip()
        self.label = teardown.push(f"loop {self.device}", self._detach)

    def _detach(self) -> None:
        for _ in range(50):
            if run(["losetup", "-d", self.device], check=False).returncode == 0:
                return
            time.sleep(0.1)
        raise RuntimeError(f"losetup -d {self.device} keeps failing")

    def detach(self) -> None:
        self.teardown.pop(self.label)



class Mount:
    """A file system of an image mounted at a folder."""

    def __init__(self, image: Path, fs: str, at: Path, teardown: Teardown) -> None:
        self.at = at
        self.teardown = teardown
        self.loop = LoopDevice(image, teardown)
        at.mkdir(parents=True, exist_ok=True)
        result = run(["mount", "-t", fs, self.loop.device, str(at)], timeout=60, check=False)
        if result.returncode != 0:
            self.loop.detach()
            raise MountFailed(result.stderr.strip() or f"mount exit {result.returncode}")
        self.label = teardown.push(f"mount {at}", lambda: unmount(at))

    def close(self) -> None:
        self.teardown.pop(self.label)
        self.loop.detach()


class MountFailed(Exception):
    pass


def make_image(path: Path, fs: str) -> None:
    """A fresh, sparse image: XFS wants 300 MiB at least, btrfs about 110."""
    size = {"xfs": 320, "btrfs": 160}.get(fs, 64) << 20
    path.unlink(missing_ok=True)
    with open(path, "wb") as image:
        image.truncate(size)
    force = "-F" if fs == "ext4" else "-f"
    run([f"mkfs.{fs}", "-q", force, str(path)])


def copy_sparse(source: Path, target: Path) -> None:
    run(["cp", "--sparse=always", str(source), str(target)])


class LazyFS:
    """One LazyFS mount over `root/`, with a fault at fsync occurrence K of
    `root/disk.img` (or never, logging every operation, for the counting run)."""

    def __init__(self, binary: str, work: Path, teardown: Teardown) -> None:
        self.binary = binary
        self.work = work
        self.root = work / "lazyfs-root"
        self.mountpoint = work / "lazyfs"
        # The image as the fault names it (LazyFS's backing file) and as the
        # loop device opens it (through LazyFS).
        self.image = self.root / "disk.img"
        self.disk = self.mountpoint / "disk.img"
        self.log = work / "lazyfs.log"
        self.teardown = teardown
        self.process: subprocess.Popen | None = None
        self.pidfd: int | None = None
        self.root.mkdir(parents=True, exist_ok=True)
        self.mountpoint.mkdir(parents=True, exist_ok=True)

    def _config(self, occurrence: int, log_operations: bool) -> Path:
        config = self.work / "lazyfs.toml"
        # No fifo_path_completed: with it, faults wait for a reader.
        config.write_text(
            f"""[faults]
fifo_path="{self.work}/faults.fifo"
[cache]
apply_eviction=false
[cache.simple]
custom_size="{CACHE_MIB}mb"
blocks_per_page=1
[filesystem]
log_all_operations={"true" if log_operations else "false"}
logfile="{self.log}"
[[injection]]
type="clear-cache"
from="{self.image}"
timing="before"
op="fsync"
occurrence={occurrence}
crash=true
"""
        )
        return config

    def start(self, occurrence: int, log_operations: bool = False) -> None:
        self.log.unlink(missing_ok=True)
        config = self._config(occurrence, log_operations)
        if not lazyfs_reads(config):
            raise RuntimeError(
                f"LazyFS would load config/default.toml, not {config}: it takes a --config-path holding '-o' "
                "for an option; run from a folder whose path has no '-o'")
        output = open(self.work / "lazyfs.out", "wb")
        self.process = subprocess.Popen(
            [self.binary, str(self.mountpoint), "--config-path", str(config), "-o", "allow_other",
             "-o", "modules=subdir", "-o", f"subdir={self.root}", "-f"],
            stdout=output, stderr=subprocess.STDOUT, start_new_session=True)
        output.close()
        self.pidfd = os.pidfd_open(self.process.pid)
        self.label = self.teardown.push(f"lazyfs {self.mountpoint}", self._stop)
        deadline = time.monotonic() + 30
        while not os.path.ismount(self.mountpoint):
            if self.process.poll() is not None or time.monotonic() > deadline:
                text = (self.work / "lazyfs.out").read_text(errors="replace")[-800:]
                raise RuntimeError(f"LazyFS did not mount {self.mountpoint}: {text}")
            time.sleep(0.005)

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def cut(self) -> None:
        """The power goes: whatever LazyFS holds unsynced is gone."""
        if self.alive():
            self.process.send_signal(signal.SIGKILL)
        if self.process is not None:
            self.process.wait()

    def _stop(self) -> None:
        self.cut()
        if self.pidfd is not None:
            os.close(self.pidfd)
            self.pidfd = None
        if is_mounted(self.mountpoint):
            if run(["fusermount3", "-u", str(self.mountpoint)], check=False).returncode != 0:
                run(["umount", "-l", str(self.mountpoint)], check=False)

    def stop(self) -> None:
        self.teardown.pop(self.label)

    def fsyncs(self) -> int:
        """The image's fsyncs so far, from the operation log (counting run)."""
        needle = f"lfs_fsync(path={self.image},"
        return sum(1 for line in self._log_lines() if needle in line)

    def blocks_touched(self) -> int:
        """Distinct blocks of the image read or written (counting run)."""
        pattern = re.compile(r"lfs_(?:read|write)\(path=(.*?),size=(\d+),off=(\d+)\)")
        blocks: set[int] = set()
        for line in self._log_lines():
            match = pattern.search(line)
            if match and match.group(1) == str(self.image):
                size, offset = int(match.group(2)), int(match.group(3))
                blocks.update(range(offset // BLOCK, (offset + max(size, 1) - 1) // BLOCK + 1))
        return len(blocks)

    def _log_lines(self):
        if not self.log.exists():
            return []
        return self.log.read_text(errors="replace").splitlines()


def wait_any(pidfds: list[int], timeout: float) -> None:
    """Sleeps until one of the processes ends (or the time passes)."""
    if pidfds:
        select.select(pidfds, [], [], timeout)
    else:
        time.sleep(timeout)
