"""What a spool holds at one moment, read without courier: every name in every
folder with its inode, link count, bytes and modification time, and the
ledger's lines (docs/design.md §1 and §4)."""

from __future__ import annotations

import hashlib
import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path

STATES = ("queued", "awaitingRoute", "sending", "sent", "failed", "needsAttention")
# `TIME.PID_N.NAME` (`TIME.PID_N.WORKER:NAME` on a shared spool): courier's
# staging names in tmp/, and `enqueue`'s names in queued/.
STAGED = re.compile(r"^(\d{8}T\d{6}Z)\.(\d+)_(\d+)\.(.*)$")
FLAGGED = re.compile(r"^invalid-\d{8}T\d{6}Z-(.*?)(-\d+)?$")
ENTRY = re.compile(r"^([A-Za-z0-9._:-]{1,128}(?:#[1-9][0-9]{0,5})?)@([A-Za-z0-9_-]{1,64})\.json$")
DEFERRAL_LIMIT = 20


@dataclass(frozen=True)
class Entry:
    key: str
    subscriber: str

    @property
    def id(self) -> str:
        return self.key.split("#", 1)[0]

    def __str__(self) -> str:
        return f"{self.key}@{self.subscriber}"


def parse_entry(name: str) -> Entry | None:
    match = ENTRY.match(name)
    if not match or name.startswith("."):
        return None
    return Entry(match.group(1), match.group(2))


@dataclass
class File:
    folder: str  # relative to the spool: "queued", "sending/w1", "catalogs/items", ".courier/etags/beta"
    name: str
    inode: int
    links: int
    data: bytes
    mtime_ns: int
    kind: str = "file"  # "file", "dir", "other"

    @property
    def path(self) -> str:
        return f"{self.folder}/{self.name}"

    @property
    def state(self) -> str:
        return self.folder.split("/", 1)[0]

    @property
    def deferrals(self) -> int:
        """The deferral count a stamp keeps in the nanoseconds (0: none)."""
        count = self.mtime_ns % 1_000_000_000
        return count if 1 <= count <= DEFERRAL_LIMIT else 0


@dataclass(frozen=True)
class Line:
    file: str
    number: int
    time: str
    round: str
    subscriber: str
    key: str
    event: str
    status: str
    attempt: str
    duration: str
    detail: str

    def short(self) -> str:
        return f"{self.key}@{self.subscriber} {self.event}"


@dataclass
class LedgerFile:
    name: str
    raw: bytes
    lines: list[Line] = field(default_factory=list)
    # Whole lines that are not nine columns (line number, text).
    malformed: list[tuple[int, bytes]] = field(default_factory=list)
    torn_tail: bytes = b""


def parse_ledger(name: str, raw: bytes) -> LedgerFile:
    ledger = LedgerFile(name, raw)
    parts = raw.split(b"\n")
    ledger.torn_tail = parts[-1]
    for number, text in enumerate(parts[:-1], start=1):
        columns = text.split(b"\t")
        if len(columns) != 9 or b"\0" in text:
            ledger.malformed.append((number, text))
            continue
        fields = [column.decode("utf-8", "replace") for column in columns]
        ledger.lines.append(Line(name, number, *fields))
    return ledger


class Snapshot:
    """Every file under the spool (ledger/ parsed), read once."""

    def __init__(self, spool: Path) -> None:
        self.spool = spool
        self.files: dict[str, File] = {}
        self.folders: set[str] = set()
        self.ledger: dict[str, LedgerFile] = {}
        self._walk(spool, "")
        for file in self.files.values():
            if file.folder == "ledger" and file.kind == "file":
                self.ledger[file.name] = parse_ledger(file.name, file.data)

    def _walk(self, directory: Path, relative: str) -> None:
        for item in sorted(os.scandir(directory), key=lambda e: e.name):
            path = f"{relative}/{item.name}" if relative else item.name
            status = item.stat(follow_symlinks=False)
            if stat.S_ISDIR(status.st_mode):
                self.folders.add(path)
                if relative:  # the spool's own folders are not items
                    self.files[path] = File(relative, item.name, status.st_ino, status.st_nlink, b"",
                                            status.st_mtime_ns, "dir")
                self._walk(Path(item.path), path)
                continue
            kind = "file" if stat.S_ISREG(status.st_mode) else "other"
            data = Path(item.path).read_bytes() if kind == "file" else b""
            self.files[path] = File(relative or ".", item.name, status.st_ino, status.st_nlink, data,
                                    status.st_mtime_ns, kind)

    # -- items -----------------------------------------------------------
    def in_folder(self, folder: str) -> list[File]:
        return [f for f in self.files.values() if f.folder == folder and f.kind != "dir"]

    def state_files(self) -> list[File]:
        """Visible files of the state folders, and of each sending/WORKER/."""
        return [f for f in self.files.values()
                if f.state in STATES and f.kind != "dir" and not f.name.startswith(".")
                and (f.folder.count("/") == 0 or f.state == "sending")]

    def entries(self) -> dict[Entry, list[File]]:
        found: dict[Entry, list[File]] = {}
        for file in self.state_files():
            entry = parse_entry(file.name)
            if entry is not None:
                found.setdefault(entry, []).append(file)
        return found

    def drops(self) -> list[File]:
        """Visible files in queued/ that are not entries: intake files."""
        return [f for f in self.in_folder("queued") if parse_entry(f.name) is None and not f.name.startswith(".")]

    def flagged(self) -> list[File]:
        return [f for f in self.state_files() if f.name.startswith("invalid-")]

    def same_inode(self, file: File) -> list[File]:
        return [f for f in self.files.values() if f.inode == file.inode and f.path != file.path and f.kind == "file"]

    # -- ledger ----------------------------------------------------------
    def lines(self) -> list[Line]:
        return [line for name in sorted(self.ledger) for line in self.ledger[name].lines]

    def history(self, entry: Entry) -> list[Line]:
        return [line for line in self.lines() if line.key == entry.key and line.subscriber == entry.subscriber]

    def events(self, entry: Entry) -> set[str]:
        return {line.event for line in self.history(entry)}

    # -- a crash state's identity ----------------------------------------
    def fingerprint(self) -> str:
        """The same for two spools a round cannot tell apart: names (with the
        times and PIDs in courier's staging and flagged names left out), link
        counts and which names share an inode, bytes, deferral counts; the
        ledger's events in order and whether its tail is torn; of
        `.courier/` only what recovery reads (catalog state and journal)."""
        digest = hashlib.sha256()
        inodes: dict[int, list[str]] = {}
        for path in sorted(self.files):
            file = self.files[path]
            if file.folder == "ledger" or path.startswith(".courier/") and not _recovery_reads(file):
                continue
            name = _timeless(file.name)
            inodes.setdefault(file.inode, []).append(f"{file.folder}/{name}")
            content = _catalog_state(file.data) if file.name.startswith("catalog-") and file.name.endswith(".json") \
                else file.data
            digest.update(f"{file.folder}/{name} {file.kind} {file.links} {file.deferrals} ".encode())
            digest.update(hashlib.sha256(content).digest())
        for names in sorted(inodes.values()):
            if len(names) > 1:
                digest.update(("=".join(sorted(names))).encode())
        for name in sorted(self.ledger):
            ledger = self.ledger[name]
            digest.update(f"{_dayless(name)} {len(ledger.malformed)} {bool(ledger.torn_tail)}".encode())
            for line in ledger.lines:
                digest.update(f"{line.subscriber} {line.key} {line.event} {line.status}\n".encode())
        return digest.hexdigest()[:16]

    # -- for people ------------------------------------------------------
    def describe(self, ledger_tail: int = 8) -> list[str]:
        """Names per folder (with link counts and shared inodes) and the
        ledger's tail, for a violation's report."""
        out = []
        by_folder: dict[str, list[File]] = {}
        for file in self.files.values():
            if file.kind == "dir" or file.folder == "ledger" or file.folder.startswith(".courier"):
                continue
            by_folder.setdefault(file.folder, []).append(file)
        for folder in sorted(set(STATES) | set(by_folder) | {"tmp"}):
            if folder.startswith("sending/") and folder not in by_folder:
                continue
            files = sorted(by_folder.get(folder, []), key=lambda f: f.name)
            if folder not in self.folders and not files:
                continue
            shown = []
            for file in files:
                notes = []
                if file.links != 1:
                    twins = [t.path for t in self.same_inode(file)]
                    notes.append(f"{file.links} links" + (f", same inode as {', '.join(twins)}" if twins else ""))
                if file.kind == "file" and not file.data:
                    notes.append("empty")
                if file.deferrals:
                    notes.append(f"deferral stamp {file.deferrals}")
                shown.append(file.name + (f" [{'; '.join(notes)}]" if notes else ""))
            out.append(f"{folder}/: " + (", ".join(shown) if shown else "(empty)"))
        for name in sorted(self.ledger):
            ledger = self.ledger[name]
            tail = [line.short() for line in ledger.lines[-ledger_tail:]]
            extra = []
            if ledger.malformed:
                extra.append(f"{len(ledger.malformed)} malformed line(s): " +
                             "; ".join(f"line {n}: {text[:60]!r}" for n, text in ledger.malformed[:3]))
            if ledger.torn_tail:
                extra.append(f"torn tail of {len(ledger.torn_tail)} bytes: {ledger.torn_tail[:60]!r}")
            out.append(f"ledger/{name}: {len(ledger.lines)} lines, last: " + " | ".join(tail)
                       + (f" ({'; '.join(extra)})" if extra else ""))
        return out


def _timeless(name: str) -> str:
    staged = STAGED.match(name)
    if staged:
        return "T.P_N." + staged.group(4)
    flagged = FLAGGED.match(name)
    if flagged:
        return "invalid-T-" + flagged.group(1)
    return name


def _dayless(name: str) -> str:
    return re.sub(r"^\d{4}-\d{2}-\d{2}", "DAY", name)


def _recovery_reads(file: File) -> bool:
    return file.name.startswith("catalog-") and file.folder == ".courier"


def _catalog_state(data: bytes) -> bytes:
    """A catalog's state file without its times and durations."""
    import json
    try:
        state = json.loads(data)
    except ValueError:
        return data
    if not isinstance(state, dict):
        return data
    kept = {k: v for k, v in state.items() if k not in ("lastSuccess", "lastDurationMilliseconds", "serverTime",
                                                          "fullStartedAt", "lastError")}
    return json.dumps(kept, sort_keys=True).encode()
