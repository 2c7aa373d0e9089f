"""The checker checked: each rule of rules.py fires on a spool built to break
it, and none fires on a spool that keeps them all. Needs no root, no LazyFS;
scripts/powerloss-test.sh runs it before the sweep (a rule that cannot fail
would make a clean sweep mean nothing)."""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

import crashdisk
import rules
from spoolstate import STATES, Snapshot
from workloads import Intake

WORKLOAD = Intake()
RECORDS = {r.id: r for r in WORKLOAD.records}
FATES = {e: f for e, f in WORKLOAD.fates().items() if e.id != "n5"}


def line(subscriber: str, key: str, event: str, detail: str = "-") -> str:
    return f"2026-12-01T00:00:00.000Z\tR\t{subscriber}\t{key}\t{event}\t0\t0\t0\t{detail}\n"


class FakeReceiver:
    def __init__(self, received: dict[str, bytes], answers: list[tuple[str, int]]) -> None:
        self._received, self._answers = received, answers

    def received(self) -> dict[str, bytes]:
        return self._received

    def answers(self) -> list[tuple[str, int]]:
        return self._answers


class FakeReceivers:
    def __init__(self, by_name: dict[str, FakeReceiver]) -> None:
        self.by_name = by_name

    def __getitem__(self, name: str) -> FakeReceiver:
        return self.by_name[name]


def spool(root: Path, ledger: str, files: dict[str, bytes], links: dict[str, str] | None = None) -> Snapshot:
    """A spool with these files (path -> bytes), hard links (new -> existing)
    and one ledger file."""
    for folder in ("tmp", "ledger", ".courier", *STATES):
        (root / folder).mkdir(parents=True, exist_ok=True)
    for path, data in files.items():
        (root / path).write_bytes(data)
    for new, existing in (links or {}).items():
        os.link(root / existing, root / new)
    (root / "ledger" / "2026-12-01.tsv").write_text(ledger)
    return Snapshot(root)


def delivered_everywhere() -> tuple[dict[str, bytes], str]:
    files, ledger = {}, ""
    for entry in FATES:
        files[f"sent/{entry}.json"] = RECORDS[entry.id].body
        ledger += line(entry.subscriber, entry.key, "accepted") + line(entry.subscriber, entry.key, "sent")
    for entry in FATES:
        if entry.subscriber == "beta":
            files[f".courier/etags/beta/{entry.id}"] = b"{}"
    return files, ledger


def receivers(missing: str | None = None, refused: str | None = None) -> FakeReceivers:
    by_name = {}
    for name in ("alpha", "beta"):
        got = {e.key: RECORDS[e.id].body for e in FATES if e.subscriber == name and str(e) != missing}
        answers = [(refused.split("@")[0], 422)] if refused and refused.endswith("@" + name) else []
        by_name[name] = FakeReceiver(got, answers)
    return FakeReceivers(by_name)


def rules_broken(snap: Snapshot, cut: Snapshot | None = None, receivers_=None, completed=()) -> set[str]:
    found = rules.after_cut(WORKLOAD, snap, list(completed), FATES)
    found += rules.attention(WORKLOAD, snap, [])
    found += rules.delivered(WORKLOAD, snap, FATES, receivers_ or receivers(), {})
    found += rules.torn_tails_repaired(cut or snap, snap)
    found += rules.second_round(WORKLOAD, [], snap, snap, {})
    return {v.rule for v in found}


def main() -> int:
    failures = []
    files, ledger = delivered_everywhere()
    base_files = {k: v for k, v in files.items() if not k.startswith(".courier/")}
    etags = {k: v for k, v in files.items() if k.startswith(".courier/")}

    def case(name: str, expect: set[str], files=None, ledger=None, links=None, cut_ledger=None, receivers_=None,
             kept_etags=None, completed=()):
        with tempfile.TemporaryDirectory(prefix="courier-powerloss-selftest-") as work:
            root = Path(work) / "spool"
            for path, data in (etags if kept_etags is None else kept_etags).items():
                (root / path).parent.mkdir(parents=True, exist_ok=True)
                (root / path).write_bytes(data)
            snap = spool(root, base_ledger if ledger is None else ledger,
                         base_files if files is None else files, links)
            cut = None
            if cut_ledger is not None:
                cut_root = Path(work) / "cut"
                (cut_root / "ledger").mkdir(parents=True)
                (cut_root / "ledger" / "2026-12-01.tsv").write_text(cut_ledger)
                cut = Snapshot(cut_root)
            got = rules_broken(snap, cut, receivers_, completed)
            if got != expect:
                failures.append(f"{name}: expected {sorted(expect) or 'no violation'}, got {sorted(got) or 'none'}")

    base_ledger = ledger
    n1 = RECORDS["n1"].body
    case("every record delivered, every line there", set())
    case("an entry in sent/ without its sent line", {"ledger-first"},
         ledger=base_ledger.replace(line("alpha", "n1", "sent"), ""))
    case("one rename's two halves: sending/ and sent/ one inode", {"one-state", "delivered", "second-round"},
         links={"sending/n1@alpha.json": "sent/n1@alpha.json"})
    case("two copies in two states", {"one-state", "delivered", "second-round"},
         files={**base_files, "queued/n1@alpha.json": n1})
    case("a dropped file and its entry one inode", {"one-state", "second-round"},
         links={"queued/drop-n1.json": "sent/n1@alpha.json"})
    case("an entry gone with no dropped file", {"no-loss", "delivered"},
         files={k: v for k, v in base_files.items() if k != "sent/n2@beta.json"})
    case("an empty entry", {"bytes", "delivered"}, files={**base_files, "sent/n3@alpha.json": b""})
    case("a dropped file with no record's bytes", {"bytes", "second-round"},
         files={**base_files, "queued/drop-n9.json": b'{"id":'})
    case("a broken line inside the ledger", {"ledger-lines"},
         ledger=base_ledger.replace(line("beta", "n4", "accepted"), "2026-12-01T00:00:00.000Z\tR\tbeta\n"))
    case("a torn tail at the end, not written since", set(), ledger=base_ledger + "2026-12-01T00:0",
         cut_ledger=base_ledger + "2026-12-01T00:0")
    case("a torn tail the next write left", {"ledger-lines"}, ledger=base_ledger + "2026-12-01T00:0",
         cut_ledger=base_ledger)
    attention_files = {k: v for k, v in base_files.items() if k != "sent/n1@beta.json"}
    attention_files["needsAttention/n1@beta.json"] = n1
    case("an entry in needsAttention/ nobody put there", {"attention", "delivered"}, files=attention_files,
         ledger=base_ledger + line("beta", "n1", "needsAttention", "has 2 hard links"),
         receivers_=receivers(missing="n1@beta"))
    case("a record that never reached its subscriber", {"delivered"}, receivers_=receivers(missing="n2@alpha"))
    case("a subscriber that refused a repeat", {"delivered"}, receivers_=receivers(refused="n3@beta"))
    case("a batch subscriber's sent/ entry without its etag", {"consistency"},
         kept_etags={k: v for k, v in etags.items() if not k.endswith("/n1")})
    waiting = {k.replace("sent/", "queued/"): v for k, v in base_files.items()}
    case("a round that returned 0 with its entries not in sent/", {"durable", "delivered", "second-round"},
         files=waiting, completed=[1])
    case("a leftover in tmp/", {"second-round"}, files={**base_files, "tmp/20261201T000000Z.999999_1.x": b"x"})
    # LazyFS itself: a work folder the sweep makes, whatever its random part
    # begins with, must hold no "-o", or LazyFS reads its own default config
    # instead of the sweep's (two CI runs failed so, 2026-12-03).
    for parent in ("/dev/shm", tempfile.gettempdir()):
        for first in "abcdefghijklmnopqrstuvwxyz0123456789_":
            config = Path(parent) / f"{crashdisk.WORK_PREFIX}{first}xaw1qs" / "lazyfs.toml"
            if not crashdisk.lazyfs_reads(config):
                failures.append(f"LazyFS would not read its config at {config}")
    if failures:
        print("powerloss self-test FAILED:\n  " + "\n  ".join(failures))
        return 1
    print("powerloss self-test: each rule fires on a spool made to break it, none on one that keeps them all")
    return 0


if __name__ == "__main__":
    sys.exit(main())
