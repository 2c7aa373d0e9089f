"""The rules a spool must keep across a power cut (issue 20; docs/design.md
§10), each a function from snapshots to violations.

Right after the cut, before courier runs:
  one-state     every (record, subscriber) is in at most one state folder;
  no-loss       a (record, subscriber) with no entry still has its dropped
                file (or the ledger says a person or prune deleted it);
  bytes         every entry, dropped and flagged file holds its record's bytes;
  ledger-lines  the ledger is whole lines (a torn tail only at the end);
  ledger-first  every item's state has its ledger line (sent/ has `sent`...);
  durable       what a command that returned 0 before the cut did is there;
  consistency   the workload's own (a catalog's items, a route, an etag).
After courier's own recovery:
  attention     nothing in needsAttention/ or invalid-* because of the cut;
  delivered     every record reached every subscriber it is for, bytes intact;
  ledger-lines  a torn tail is gone once the file is written again;
  recovery      every recovery command succeeded;
  second-round  a second round has nothing left to do.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from spoolstate import STAGED, Entry, Snapshot, parse_entry
from workloads import DELIVER_OR_DELETE, PRUNE_DELETES, PRUNED, Workload

# The ledger event that moves an entry into each state (ledger first: the
# line is on disk before the rename).
ENTERING = {
    "sent": {"sent"},
    "needsAttention": {"needsAttention", "routeTimeout"},
    "failed": {"acknowledged"},
    "awaitingRoute": {"awaitingRoute"},
    "queued": {"accepted", "awaitingRoute", "backfilled", "copied"},
    "sending": {"accepted", "awaitingRoute", "backfilled", "copied"},
}
ATTENTION_EVENTS = {"needsAttention", "invalid", "routeTimeout"}


@dataclass
class Violation:
    rule: str
    text: str

    def __str__(self) -> str:
        return f"{self.rule}: {self.text}"


def after_cut(workload: Workload, snap: Snapshot, completed: list[int], fates: dict[Entry, str]) -> list[Violation]:
    """`fates`: where each (record, subscriber) this state owes must end up."""
    found: list[Violation] = []
    entries = snap.entries()

    # One rename's two halves (a file system that made the new name
    # durable and not the old name's removal): one inode, two names.
    by_inode: dict[int, list] = {}
    for file in snap.state_files():
        by_inode.setdefault(file.inode, []).append(file)
    for files in sorted((fs for fs in by_inode.values() if len(fs) > 1), key=lambda fs: fs[0].path):
        found.append(Violation("one-state", "one file under two names in the state folders ("
                               + f"{files[0].links} links): " + ", ".join(f.path for f in files)))
    # Two copies (two inodes) of one (record, subscriber).
    for entry, files in sorted(entries.items(), key=lambda item: str(item[0])):
        if len({f.inode for f in files}) > 1:
            found.append(Violation("one-state", f"{entry} is in {len(files)} states: "
                                   + ", ".join(_named(snap, f) for f in files)))
    for entry, fate in sorted(fates.items(), key=lambda item: str(item[0])):
        if entry in entries:
            continue
        if fate in (DELIVER_OR_DELETE, PRUNE_DELETES) and "deleted" in snap.events(entry):
            continue
        if fate == PRUNED:
            continue
        record = workload.record_of(entry)
        if not any(drop.data == record.body for drop in snap.drops()):
            where = f"queued/{record.drop}" if record.drop else "its enqueued file"
            found.append(Violation("no-loss", f"{entry} has no entry in any folder, and {where} is gone"))
    for name, body in workload.broken.items():
        copies = [f for f in snap.drops() + snap.flagged() if f.data == body]
        if not copies:
            found.append(Violation("no-loss", f"the broken drop {name} is gone: neither in queued/ nor flagged"))
        elif len(copies) > 1:
            found.append(Violation("one-state", f"the broken drop {name} is in {len(copies)} places: "
                                   + ", ".join(_named(snap, f) for f in copies)))

    bodies = {r.body for r in workload.records} | set(workload.broken.values()) | _route_bodies(workload)
    for entry, files in entries.items():
        allowed = workload.expected_bytes(entry)
        for file in files:
            if file.data not in allowed:
                found.append(Violation("bytes", f"{file.path} holds {_bytes(file.data)}, not its record's"))
    for file in snap.drops() + snap.flagged():
        if file.data not in bodies:
            found.append(Violation("bytes", f"{file.path} holds {_bytes(file.data)}, no record's"))

    found += ledger_lines(snap)
    found += ledger_first(workload, snap)
    for step in completed:
        found += [Violation("durable", text) for text in workload.promise(step, snap)]
    found += [Violation("consistency", text) for text in workload.cut_checks(snap)]
    return found


def ledger_lines(snap: Snapshot) -> list[Violation]:
    found = []
    for name, ledger in sorted(snap.ledger.items()):
        for number, text in ledger.malformed:
            found.append(Violation("ledger-lines", f"ledger/{name} line {number} is not a whole line: {text[:80]!r}"))
    return found


def ledger_first(workload: Workload, snap: Snapshot) -> list[Violation]:
    found = []
    lines = snap.lines()
    for file in snap.state_files():
        entry = parse_entry(file.name)
        if entry is not None:
            events = snap.events(entry)
            needed = ENTERING[file.state]
            if not events & needed:
                found.append(Violation("ledger-first", f"{file.path} is there without a "
                                       + " or ".join(f"`{e}`" for e in sorted(needed)) + f" line for {entry}"))
            if file.deferrals and file.state in ("queued", "sending"):
                retry = f"retry {file.deferrals} of"
                if not any(l.event == "deferred" and retry in l.detail for l in snap.history(entry)):
                    found.append(Violation("ledger-first", f"{file.path} holds deferral stamp {file.deferrals} "
                                           f"without its `deferred` line"))
        elif file.name.startswith("invalid-"):
            if not any(l.event == "invalid" and l.key == file.name for l in lines):
                found.append(Violation("ledger-first", f"{file.path} is there without its `invalid` line"))
        elif file.name.endswith(".route.json") and file.state == "awaitingRoute":
            if not any(l.event == "awaitingRoute" and l.subscriber == "-" for l in lines):
                found.append(Violation("ledger-first", f"{file.path} is there without its `awaitingRoute` line"))
    return found


def attention(workload: Workload, snap: Snapshot, new_lines) -> list[Violation]:
    """After the recovery round: what needs attention is what the workload
    put there on purpose, and recovery wrote no attention of its own."""
    found = []
    broken = set(workload.broken.values())
    for file in snap.state_files():
        if file.state not in ("needsAttention", "failed"):
            continue
        entry = parse_entry(file.name)
        if entry is not None and workload.on_purpose(entry):
            continue
        if file.name.startswith("invalid-") and file.data in broken:
            continue
        found.append(Violation("attention", f"{file.path} after recovery" + _why(snap, file.name, entry)))
    for line in new_lines:
        if line.event not in ATTENTION_EVENTS:
            continue
        if line.event == "invalid" and any(f"(dropped as {name})" in line.detail for name in workload.broken):
            continue
        found.append(Violation("attention", f"recovery wrote `{line.event}` for {line.key}@{line.subscriber}: "
                               f"{line.detail}"))
    return found


def delivered(workload: Workload, snap: Snapshot, fates: dict[Entry, str], receivers,
              reference: dict[str, dict[str, bytes]]) -> list[Violation]:
    found = []
    entries = snap.entries()
    for entry, fate in sorted(fates.items(), key=lambda item: str(item[0])):
        record = workload.record_of(entry)
        # What the counting run delivered (a route merged), else the record.
        # A batch carries the entry as its item's payload, without the
        # whitespace around the object.
        want = reference.get(entry.subscriber, {}).get(entry.key, record.body)
        got = receivers[entry.subscriber].received().get(entry.key)
        files = entries.get(entry, [])
        deleted = not files and "deleted" in snap.events(entry)
        if fate == PRUNE_DELETES:
            if not deleted:
                found.append(Violation("delivered", f"{entry}: prune was to delete it from failed/ with a `deleted` "
                                       f"line; it is in {[f.folder for f in files] or 'no folder'}"
                                       f"{'' if 'deleted' in snap.events(entry) else ' with no such line'}"))
            continue
        if fate == DELIVER_OR_DELETE and deleted:
            continue
        if got is None:
            found.append(Violation("delivered", f"{entry} never reached {entry.subscriber}; it is in "
                                   + (", ".join(_named(snap, f) for f in files) or "no folder")
                                   + _why(snap, f"{entry}.json", entry)))
            continue
        if got.strip() != want.strip():
            found.append(Violation("delivered", f"{entry.subscriber} stored {_bytes(got)} for {entry.key}, "
                                   f"not {_bytes(want)}"))
        if fate == PRUNED:
            if files:
                found.append(Violation("delivered", f"{entry} is in {[f.folder for f in files]} after recovery's "
                                       f"prune (retention passed)"))
            continue
        if [f.folder for f in files] != ["sent"]:
            found.append(Violation("delivered", f"{entry} reached {entry.subscriber}, yet is in "
                                   f"{[f.folder for f in files] or 'no folder'} after recovery"))
        elif files[0].data.strip() != want.strip() or files[0].data not in workload.expected_bytes(entry):
            found.append(Violation("delivered", f"sent/{entry}.json holds {_bytes(files[0].data)}, not what was sent"))
    for name, body in workload.broken.items():
        flagged = [f for f in snap.flagged() if f.data == body and f.state == "needsAttention"]
        if len(flagged) != 1 or any(d.data == body for d in snap.drops()):
            found.append(Violation("delivered", f"the broken drop {name} should end flagged once in needsAttention/; "
                                   f"it is {[f.path for f in snap.drops() + snap.flagged() if f.data == body]}"))
    known = {r.id for r in workload.records}
    for name, receiver in receivers.by_name.items():
        for key, status in receiver.answers():
            if status >= 400:
                found.append(Violation("delivered", f"{name} answered {status} to {key}"
                                       + (" (the same key with other bytes)" if status == 422 else "")))
        for key in receiver.received():
            if key.split("#")[0] not in known:
                found.append(Violation("delivered", f"{name} received {key}, which no record of the workload is"))
    return found


def torn_tails_repaired(cut: Snapshot, final: Snapshot) -> list[Violation]:
    found = ledger_lines(final)
    for name, ledger in sorted(final.ledger.items()):
        before = cut.ledger.get(name)
        if ledger.torn_tail and (before is None or before.raw != ledger.raw):
            found.append(Violation("ledger-lines", f"ledger/{name} was written after the cut and still ends in a "
                                   f"torn line: {ledger.torn_tail[:80]!r}"))
    return found


def second_round(workload: Workload, summaries: list[tuple[str, dict]], before: Snapshot, after: Snapshot,
                 outputs: dict[str, str]) -> list[Violation]:
    found = []
    busy = ("recovered", "accepted", "invalid", "duplicates", "sent", "needsAttention", "routesAttached",
            "routeTimeouts", "retries", "deferred", "fromAttention")
    for who, summary in summaries:
        work = {key: summary.get(key) for key in busy if summary.get(key)}
        if work:
            found.append(Violation("second-round", f"the second round ({who}) still did "
                                   + ", ".join(f"{v} {k}" for k, v in work.items())))
    new = _new_lines(before, after)
    for line in new:
        if line.event == "catalogSynced":
            continue
        found.append(Violation("second-round", f"the second round wrote `{line.event}` for {line.key}@{line.subscriber}"))
    for file in after.files.values():
        if file.kind == "dir" or file.name.startswith("."):
            continue
        if file.state in ("queued", "sending", "awaitingRoute") or (file.folder == "tmp" and not _writer_alive(file.name)):
            waits = " (a route with no workout left to take it: route-wait moves it to needsAttention/)" \
                if file.name.endswith(".route.json") and file.state == "awaitingRoute" else ""
            found.append(Violation("second-round", f"{file.path} is left after the second round{waits}"))
    return found


def new_lines(before: Snapshot, after: Snapshot):
    return _new_lines(before, after)


def _new_lines(before: Snapshot, after: Snapshot):
    seen: dict[tuple, int] = {}
    for line in before.lines():
        key = (line.file, line.time, line.round, line.subscriber, line.key, line.event, line.detail)
        seen[key] = seen.get(key, 0) + 1
    fresh = []
    for line in after.lines():
        key = (line.file, line.time, line.round, line.subscriber, line.key, line.event, line.detail)
        if seen.get(key, 0) > 0:
            seen[key] -= 1
        else:
            fresh.append(line)
    return fresh


def _writer_alive(name: str) -> bool:
    """A tmp/ file whose writer's PID is in use now (by anyone: the PIDs of
    the workload's dead processes come round again) is not recovery's to remove."""
    staged = STAGED.match(name)
    return bool(staged) and os.path.exists(f"/proc/{staged.group(2)}")


def _named(snap: Snapshot, file) -> str:
    text = file.path
    if file.links > 1:
        twins = [t.path for t in snap.same_inode(file)]
        text += f" ({file.links} links" + (f", one inode with {', '.join(twins)}" if twins else "") + ")"
    return text


def _why(snap: Snapshot, name: str, entry: Entry | None) -> str:
    lines = snap.history(entry) if entry else [l for l in snap.lines() if l.key == name]
    last = next((l for l in reversed(lines) if l.event in ATTENTION_EVENTS), None)
    return f" (last {last.event}: {last.detail})" if last else ""


def _bytes(data: bytes) -> str:
    if not data:
        return "0 bytes"
    return f"{len(data)} bytes {data[:48]!r}" + ("…" if len(data) > 48 else "")


def _route_bodies(workload: Workload) -> set[bytes]:
    route = getattr(workload, "route", None)
    return {route.body} if route else set()
