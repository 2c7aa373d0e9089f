"""The workloads: small on purpose (a sweep re-runs one from the start for
every flush it makes), and together through every commit path of
docs/design.md: intake with copies to two subscribers (and `enqueue`), a
batch subscriber's etags, delivery with a subscriber down, a `retry-schedule`
deferral, flagging a broken drop, `ack`/`resend`/`delete`, a route attached
to a waiting workout, a catalog sync with tombstones, `prune`, and a shared
spool with two workers.

Each workload says how its spool is prepared (outside LazyFS, before the
image's copy the sweep cuts), what it runs, what courier's own recovery
runs after a cut, what it leaves in needsAttention/ on purpose, and where
each (record, subscriber) must end up (its fate)."""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field

from spoolstate import Entry, File, Snapshot, parse_entry

DAY_NS = 86_400 * 1_000_000_000

# Fates of a (record, subscriber):
DELIVER = "deliver"                      # in sent/ and at its receiver, bytes intact
DELIVER_OR_DELETE = "deliver-or-delete"  # that, or removed with a `deleted` line (a person's delete)
PRUNED = "pruned"                        # delivered before; prune takes it out of sent/
PRUNE_DELETES = "prune-deletes"          # in failed/ past failed-retention: removed with a `deleted` line


@dataclass
class Record:
    id: str
    kind: str
    subscribers: dict[str, str]  # subscriber -> fate
    drop: str | None  # its name in queued/; None: given to `courier enqueue`
    extra: dict = field(default_factory=dict)

    @property
    def body(self) -> bytes:
        record = {"id": self.id, "kind": self.kind, **self.extra}
        return json.dumps(record, separators=(",", ":")).encode() + b"\n"


@dataclass
class Command:
    args: list[str]
    worker: str | None = None

    def __str__(self) -> str:
        who = f"COURIER_WORKER_ID={self.worker} " if self.worker else ""
        return who + "courier " + " ".join(self.args)


# A step is commands started together (two workers' rounds); steps run in turn.
Step = list[Command]


class Workload:
    name = ""
    summary = ""
    # Subscriber name -> extra configuration lines.
    subscribers: dict[str, list[str]] = {}
    # Subscribers that do not answer while the workload (and its preparation) runs.
    down: tuple[str, ...] = ()
    # Subscribers that take requests and never answer while it is prepared.
    stalled: tuple[str, ...] = ()
    courier_extra: list[str] = []
    workers: tuple[str | None, ...] = (None,)
    records: list[Record] = []
    # Dropped files that are not records: they end flagged, bytes unchanged.
    broken: dict[str, bytes] = {}
    steps: list[Step] = []
    # Courier's own recovery after its rounds, and the second round's extras.
    recovery_extra: list[Command] = []
    second_extra: list[Command] = []

    # -- configuration -----------------------------------------------------
    def configuration(self, phase: str, urls: dict[str, str], down_url: str, stall_url: str, catalog_url: str) -> str:
        """`phase`: "prep" (the base image), "workload" (the down subscribers
        do not answer), "recovery" (every subscriber is back)."""
        lines = ["[courier]", "device-id = powerloss", "settle = 0s", "notify = off", "breaker = off",
                 "background-timeout = 5s", "foreground-timeout = 5s", "backoff = 100ms",
                 *self.courier_extra]
        for name, extra in self.subscribers.items():
            url = urls[name]
            if phase in ("prep", "workload") and name in self.down:
                url = down_url
            if phase == "prep" and name in self.stalled:
                url = stall_url
            path = "/transactions/batch" if "mode = batch" in extra else "/records"
            lines += ["", f"[subscriber {name}]", f"url = {url}{path}", *extra]
        lines += self.catalog_lines(catalog_url)
        return "\n".join(lines) + "\n"

    def catalog_lines(self, catalog_url: str) -> list[str]:
        return []

    # -- preparation, outside LazyFS ----------------------------------------
    def prepare(self, prep) -> None:
        """Drops the records (the base image is written and unmounted
        cleanly: they are durable before the sweep begins). `prep` has the
        `spool` and the receivers' `catalogs` folder, `run(command)` (a
        courier command with the preparation's configuration, which must
        succeed) and `kill_mid_round(command, claims)` (a round killed -9
        once it has that many claims in sending/, its requests unanswered)."""
        spool = prep.spool
        for record in self.records:
            if record.drop:
                (spool / "queued" / record.drop).write_bytes(record.body)
        for name, body in self.broken.items():
            (spool / "queued" / name).write_bytes(body)

    def enqueued(self) -> list[Record]:
        return [record for record in self.records if record.drop is None]

    # -- what must hold -------------------------------------------------------
    def fates(self) -> dict[Entry, str]:
        return {Entry(record.id, sub): fate for record in self.records for sub, fate in record.subscribers.items()}

    def expected(self, cut: Snapshot, completed: list[int]) -> dict[Entry, str]:
        """The fates this crash state owes: a record given to `courier
        enqueue` is owed once it is in the spool, or once enqueue returned 0."""
        fates = self.fates()
        for record in self.enqueued():
            present = any(d.data == record.body for d in cut.drops()) or any(e.id == record.id for e in cut.entries())
            step = next(i for i, step in enumerate(self.steps)
                        if any(c.args[0] == "enqueue" and c.args[-1].endswith(f"/{record.id}.json") for c in step))
            if not present and step not in completed:
                for subscriber in record.subscribers:
                    fates.pop(Entry(record.id, subscriber))
        return fates

    def record_of(self, entry: Entry) -> Record | None:
        return next((r for r in self.records if r.id == entry.id), None)

    def on_purpose(self, entry: Entry) -> bool:
        """Whether the workload itself puts this entry in needsAttention/
        or failed/ (a recovery's attention is then no fault of the cut)."""
        return False

    def to_resend(self, snapshot: Snapshot) -> list[str]:
        """What a person resends after the recovery round: what the workload
        left in needsAttention/ (or failed/) on purpose."""
        return sorted({f.name for f in snapshot.state_files()
                       if f.state in ("needsAttention", "failed") and (entry := parse_entry(f.name)) is not None
                       and self.on_purpose(entry)})

    def promise(self, step: int, snapshot: Snapshot) -> list[str]:
        """What a step that finished (exit 0) before the cut made durable; a
        problem per broken promise."""
        return []

    def cut_checks(self, snapshot: Snapshot) -> list[str]:
        return []

    def final_checks(self, snapshot: Snapshot) -> list[str]:
        """The workload's own checks after recovery."""
        return []

    def second_checks(self, outputs: dict[str, str]) -> list[str]:
        """What the second round's extra commands said (`outputs["second"]`)."""
        return []

    def learn(self, reference: dict[str, dict[str, bytes]]) -> None:
        """What the counting run's receivers got (subscriber -> key -> bytes)."""

    def expected_bytes(self, entry: Entry) -> set[bytes]:
        """What an entry of this (record, subscriber) may hold."""
        record = self.record_of(entry)
        return {record.body} if record else set()


def in_state(snapshot: Snapshot, entry: Entry) -> list[str]:
    return [f.folder for f in snapshot.entries().get(entry, [])]


# ---------------------------------------------------------------------------
class Intake(Workload):
    name = "intake"
    summary = "4 drops + 1 enqueue, copies to a single and a batch subscriber (etags), one round"
    subscribers = {"alpha": ["kinds = note"], "beta": ["kinds = note", "mode = batch", "batch-size = 2"]}
    records = [Record(f"n{i}", "note", {"alpha": DELIVER, "beta": DELIVER},
                      f"drop-n{i}.json" if i < 5 else None, {"data": {"n": i}}) for i in range(1, 6)]
    steps = [[Command(["enqueue", "{records}/n5.json"])], [Command(["run"])]]

    def promise(self, step: int, snapshot: Snapshot) -> list[str]:
        problems = []
        if step == 0:
            record = self.enqueued()[0]
            kept = [f for f in snapshot.drops() if f.data == record.body] + \
                [f for e, fs in snapshot.entries().items() if e.id == record.id for f in fs]
            if not kept:
                problems.append(f"`courier enqueue` of {record.id} returned 0, yet neither its file nor an entry is in the spool")
        if step == 1:
            problems += _all_in(snapshot, self.fates(), "sent")
        return problems

    def cut_checks(self, snapshot: Snapshot) -> list[str]:
        return _etags_kept(snapshot, "beta")


class Failing(Workload):
    name = "failing"
    summary = "3 records to alpha (up), beta (down: needsAttention), gamma (down, retry-schedule: deferred), 1 broken drop"
    subscribers = {"alpha": ["kinds = note"], "beta": ["kinds = note"],
                   "gamma": ["kinds = note", "retry-schedule = 1s 1s"]}
    down = ("beta", "gamma")
    records = [Record(f"f{i}", "note", {"alpha": DELIVER, "beta": DELIVER, "gamma": DELIVER},
                      f"drop-f{i}.json", {"data": {"n": i}}) for i in range(1, 4)]
    broken = {"broken.json": b'{"id":"x1","kind":"note",'}
    steps = [[Command(["run"])]]

    def on_purpose(self, entry: Entry) -> bool:
        return entry.subscriber == "beta"

    def promise(self, step: int, snapshot: Snapshot) -> list[str]:
        fates = self.fates()
        problems = _all_in(snapshot, {e: f for e, f in fates.items() if e.subscriber == "alpha"}, "sent")
        problems += _all_in(snapshot, {e: f for e, f in fates.items() if e.subscriber == "beta"}, "needsAttention")
        problems += _all_in(snapshot, {e: f for e, f in fates.items() if e.subscriber == "gamma"}, "queued")
        for entry in (e for e in fates if e.subscriber == "gamma"):
            for file in snapshot.entries().get(entry, []):
                if file.folder == "queued" and file.deferrals != 1:
                    problems.append(f"queued/{entry}.json was deferred, yet its time holds no deferral stamp")
        if not any(f.name.startswith("invalid-") for f in snapshot.in_folder("needsAttention")):
            problems.append("the round returned 0, yet broken.json is not flagged in needsAttention/")
        return problems


class Manual(Workload):
    name = "manual"
    summary = "a person's ack, resend (from needsAttention/ and failed/) and delete of 4 entries"
    subscribers = {"beta": ["kinds = task"]}
    down = ("beta",)
    records = [Record(f"t{i}", "task", {"beta": DELIVER_OR_DELETE if i == 3 else DELIVER},
                      f"drop-t{i}.json", {"data": {"n": i}}) for i in range(1, 5)]
    steps = [[Command(["ack", "t1@beta"])], [Command(["resend", "t2@beta"])], [Command(["delete", "t3@beta"])],
             [Command(["resend", "t4@beta"])]]

    def prepare(self, prep) -> None:
        super().prepare(prep)
        prep.run(Command(["run"]))  # beta is down: every entry needs attention
        prep.run(Command(["ack", "t4@beta"]))

    def on_purpose(self, entry: Entry) -> bool:
        return True

    def promise(self, step: int, snapshot: Snapshot) -> list[str]:
        where = {0: ("t1", "failed"), 1: ("t2", "queued"), 2: ("t3", None), 3: ("t4", "queued")}[step]
        entry = Entry(where[0], "beta")
        folders = in_state(snapshot, entry)
        if where[1] is None:
            if folders or "deleted" not in snapshot.events(entry):
                return [f"`courier delete {entry}` returned 0, yet it is in {folders or 'no folder'} "
                        f"with {'a' if 'deleted' in snapshot.events(entry) else 'no'} `deleted` line"]
            return []
        return [] if folders == [where[1]] else [f"`{self.steps[step][0]}` returned 0, yet {entry} is in {folders}"]


class Routes(Workload):
    name = "routes"
    summary = "a route dropped for a workout waiting in awaitingRoute/ for two subscribers, one round"
    subscribers = {"alpha": ["kinds = workout"], "beta": ["kinds = workout"]}
    workout = Record("w1", "workout", {"alpha": DELIVER, "beta": DELIVER}, "drop-w1.json",
                     {"awaitRoute": True, "data": {"km": 5}})
    route = Record("rt1", "route", {}, "drop-rt1.json", {"for": "w1", "data": {"points": [[1, 2], [3, 4]]}})
    records = [workout]
    steps = [[Command(["run"])]]
    merged: bytes = b""  # the workout with its route, as the reference run delivered it

    def prepare(self, prep) -> None:
        super().prepare(prep)
        prep.run(Command(["run"]))  # the workout waits in awaitingRoute/
        (prep.spool / "queued" / self.route.drop).write_bytes(self.route.body)

    def learn(self, reference: dict[str, dict[str, bytes]]) -> None:
        self.merged = reference["alpha"].get(self.workout.id, b"")
        if not self.merged or self.merged == self.workout.body:
            raise SystemExit("powerloss: routes: the counting run did not deliver the workout with its route")

    def expected_bytes(self, entry: Entry) -> set[bytes]:
        return {self.workout.body} | ({self.merged} if self.merged else set())

    def cut_checks(self, snapshot: Snapshot) -> list[str]:
        # The route may go only once every workout entry holds it.
        kept = [f for f in snapshot.drops() if f.data == self.route.body] + \
            [f for f in snapshot.in_folder("awaitingRoute") + snapshot.in_folder("needsAttention")
             if f.name == "w1.route.json"]
        unmerged = [str(e) for e, files in snapshot.entries().items() if e.id == "w1"
                    for f in files if f.data == self.workout.body]
        if not kept and unmerged:
            return [f"the route is gone (no drop, no awaitingRoute/w1.route.json) while {', '.join(unmerged)} "
                    f"still lack it"]
        return []

    def promise(self, step: int, snapshot: Snapshot) -> list[str]:
        return _all_in(snapshot, self.fates(), "sent")


class CatalogSync(Workload):
    name = "catalog"
    summary = "a delta sync of 4 changes (2 tombstones, 1 update, 1 new item) in pages of 2"
    subscribers = {"alpha": ["kinds = note"]}
    steps = [[Command(["catalog", "sync"])]]
    recovery_extra = [Command(["catalog", "sync"])]
    second_extra = [Command(["catalog", "sync"])]
    # The server's items before and after the changes.
    before = {f"i{i}": {"id": f"i{i}", "name": f"item {i}", "rev": 1} for i in range(1, 5)}
    after = {"i1": {"id": "i1", "name": "item 1", "rev": 2}, "i4": before["i4"],
             "i5": {"id": "i5", "name": "item 5", "rev": 1}}
    tombstones = ("i2", "i3")

    def catalog_lines(self, catalog_url: str) -> list[str]:
        return ["", "[catalog items]", f"url = {catalog_url}/catalogs/items", "page-size = 2"]

    def prepare(self, prep) -> None:
        server = prep.catalogs / "items"
        server.mkdir(parents=True, exist_ok=True)
        for path in server.iterdir():
            path.unlink()
        # Versions are the files' mtimes in ms: a day ago, one second apart.
        start = time.time_ns() - DAY_NS
        version = iter(range(1, 100))

        def put(item: dict) -> None:
            path = server / f"{item['id']}.json"
            path.write_text(json.dumps(item, sort_keys=True))
            stamp = start + next(version) * 1_000_000_000
            os.utime(path, ns=(stamp, stamp))

        for item in self.before.values():
            put(item)
        prep.run(Command(["catalog", "sync"]))  # the first sync: full
        # The changes come after that sync by the server's clock, as a real
        # server's would: with `since = server-time` (the default) a change
        # stamped before the server time the first sync reached is no
        # change. Versions (ms) stay apart.
        def changed(item: dict | None = None, tombstone: str | None = None) -> str | None:
            time.sleep(0.003)
            if item is not None:
                (server / f"{item['id']}.json").write_text(json.dumps(item, sort_keys=True))
                return None
            (server / f"{tombstone}.json").unlink()
            return f"{tombstone}\t{time.time_ns() // 1_000_000}\n"

        lines = [changed(tombstone=item_id) for item_id in self.tombstones]
        (server / "tombstones.tsv").write_text("".join(line for line in lines if line))
        changed(self.after["i1"])
        changed(self.after["i5"])

    def _local(self, snapshot: Snapshot) -> dict[str, File]:
        return {f.name[:-5]: f for f in snapshot.in_folder("catalogs/items") if f.name.endswith(".json")}

    def cut_checks(self, snapshot: Snapshot) -> list[str]:
        problems = []
        for item_id, file in self._local(snapshot).items():
            try:
                item = json.loads(file.data)
            except ValueError:
                problems.append(f"catalogs/items/{file.name} is not whole JSON ({len(file.data)} bytes)")
                continue
            if item not in (self.before.get(item_id), self.after.get(item_id)):
                problems.append(f"catalogs/items/{file.name} holds {item}, which the server never sent")
        for item_id in ("i1", "i4"):
            if item_id not in self._local(snapshot):
                problems.append(f"catalogs/items/{item_id}.json is gone, and the server never deleted it")
        for name in ("catalog-items.json", "catalog-items.page"):
            file = snapshot.files.get(f".courier/{name}")
            if file is not None:
                try:
                    json.loads(file.data)
                except ValueError:
                    problems.append(f".courier/{name} is not whole JSON ({len(file.data)} bytes)")
        return problems

    def promise(self, step: int, snapshot: Snapshot) -> list[str]:
        return self._matches_server(snapshot, "`courier catalog sync` returned 0, yet ")

    def _matches_server(self, snapshot: Snapshot, prefix: str) -> list[str]:
        local = {item_id: json.loads(f.data) if f.data.strip() else None
                 for item_id, f in self._local(snapshot).items()}
        if local != self.after:
            return [prefix + f"catalogs/items/ holds {sorted(local)} (the server: {sorted(self.after)})"
                    + ("" if set(local) != set(self.after) else ", some with other bytes")]
        return []

    def final_checks(self, snapshot: Snapshot) -> list[str]:
        problems = self._matches_server(snapshot, "after recovery, ")
        deleted = {line.key for line in snapshot.lines() if line.event == "catalogDeleted"}
        for item_id in self.tombstones:
            if item_id not in deleted:
                problems.append(f"after recovery, tombstone {item_id} has no catalogDeleted line")
        if ".courier/catalog-items.page" in snapshot.files:
            problems.append("after recovery, the page journal .courier/catalog-items.page is still there")
        return problems

    def second_checks(self, outputs: dict[str, str]) -> list[str]:
        second = outputs.get("second", "")
        if "0 upserts, 0 tombstones" not in second:
            return [f"the second sync after recovery was not empty: {second.strip()!r}"]
        return []


class Prune(Workload):
    name = "prune"
    summary = "prune: 2 old sent/ entries, 1 failed/ entry past failed-retention, an old ledger day, a tmp/ leftover"
    subscribers = {"alpha": ["kinds = note"], "beta": ["kinds = note"]}
    down = ("beta",)
    courier_extra = ["retention = 30d", "failed-retention = 1s"]
    records = [Record("p1", "note", {"alpha": PRUNED}, "drop-p1.json", {"subscribers": ["alpha"]}),
               Record("p2", "note", {"alpha": PRUNED}, "drop-p2.json", {"subscribers": ["alpha"]}),
               Record("p3", "note", {"beta": PRUNE_DELETES}, "drop-p3.json", {"subscribers": ["beta"]}),
               Record("p4", "note", {"alpha": DELIVER}, "drop-p4.json", {"subscribers": ["alpha"]})]
    steps = [[Command(["prune"])]]
    recovery_extra = [Command(["prune"])]
    second_extra = [Command(["prune", "--dry-run"])]
    old_day = "2020-01-01.tsv"
    leftover = "20200101T000000Z.1_1.leftover"

    def prepare(self, prep) -> None:
        super().prepare(prep)
        spool = prep.spool
        prep.run(Command(["run"]))  # p1, p2, p4 sent; p3 needs attention (beta is down)
        prep.run(Command(["ack", "p3@beta"]))
        old = time.time_ns() - 60 * DAY_NS
        for name in ("p1@alpha.json", "p2@alpha.json"):
            os.utime(spool / "sent" / name, ns=(old, old))
        (spool / "ledger" / self.old_day).write_text(
            "2020-01-01T00:00:00.000Z\tmanual\t-\t-\theld\t0\t0\t0\tan old day\n")
        leftover = spool / "tmp" / self.leftover
        leftover.write_text("left by a writer that died\n")
        stale = time.time_ns() - 40 * 3600 * 1_000_000_000
        os.utime(leftover, ns=(stale, stale))
        time.sleep(1.1)  # failed/p3 is older than failed-retention

    def on_purpose(self, entry: Entry) -> bool:
        return entry == Entry("p3", "beta")

    def to_resend(self, snapshot: Snapshot) -> list[str]:
        return []  # p3 is acknowledged; prune is to remove it

    def promise(self, step: int, snapshot: Snapshot) -> list[str]:
        problems = []
        for name in ("sent/p1@alpha.json", "sent/p2@alpha.json", "failed/p3@beta.json", f"ledger/{self.old_day}",
                     f"tmp/{self.leftover}"):
            if name in snapshot.files:
                problems.append(f"`courier prune` returned 0, yet {name} is still there")
        return problems

    def final_checks(self, snapshot: Snapshot) -> list[str]:
        return [f"after recovery's prune, {name} is still there"
                for name in (f"ledger/{self.old_day}", f"tmp/{self.leftover}") if name in snapshot.files]

    def second_checks(self, outputs: dict[str, str]) -> list[str]:
        second = outputs.get("second", "")
        if any(line.startswith("would remove ") and "/" in line.split()[2] for line in second.splitlines()):
            return [f"a second prune after recovery still finds work: {second.strip()!r}"]
        return []


class Recovery(Workload):
    name = "recovery"
    summary = "a round killed -9 with 6 claims in sending/; the next round recovers and delivers them"
    subscribers = {"alpha": ["kinds = note"], "beta": ["kinds = note"]}
    stalled = ("alpha", "beta")
    records = [Record(f"r{i}", "note", {"alpha": DELIVER, "beta": DELIVER}, f"drop-r{i}.json", {"data": {"n": i}})
               for i in range(1, 4)]
    steps = [[Command(["run"])]]

    def prepare(self, prep) -> None:
        super().prepare(prep)
        prep.kill_mid_round(Command(["run"]), claims=6)

    def promise(self, step: int, snapshot: Snapshot) -> list[str]:
        return _all_in(snapshot, self.fates(), "sent")


class Shared(Workload):
    name = "shared"
    summary = ("a shared spool (shared = yes): workers w1 and w2 run at once over 2 new records and the 2 "
               "claims of w3, killed -9 mid-round")
    subscribers = {"alpha": ["kinds = note"], "beta": ["kinds = note"]}
    stalled = ("alpha", "beta")
    courier_extra = ["shared = yes"]
    workers = ("w1", "w2")
    records = [Record(f"s{i}", "note", {"alpha": DELIVER, "beta": DELIVER}, f"drop-s{i}.json", {"data": {"n": i}})
               for i in range(1, 5)]
    steps = [[Command(["run"], "w1"), Command(["run"], "w2")]]

    def prepare(self, prep) -> None:
        for record in self.records[:2]:
            (prep.spool / "queued" / record.drop).write_bytes(record.body)
        prep.kill_mid_round(Command(["run"], "w3"), claims=4)
        for record in self.records[2:]:
            (prep.spool / "queued" / record.drop).write_bytes(record.body)

    def promise(self, step: int, snapshot: Snapshot) -> list[str]:
        return _all_in(snapshot, self.fates(), "sent")


def _all_in(snapshot: Snapshot, fates: dict[Entry, str], state: str) -> list[str]:
    entries = snapshot.entries()
    wrong = [f"{entry} in {[f.folder for f in entries.get(entry, [])] or 'no folder'}"
             for entry in sorted(fates, key=str) if [f.folder for f in entries.get(entry, [])] != [state]]
    return [f"the workload's rounds returned 0, yet not every entry is in {state}/: " + "; ".join(wrong)] if wrong else []


def _etags_kept(snapshot: Snapshot, subscriber: str) -> list[str]:
    """A batch subscriber's etag is kept before its item leaves sending/ (§8)."""
    problems = []
    # A line of the subscriber's journal (its first column the entity), or
    # an older courier's file per entity.
    journal = snapshot.files.get(f".courier/etags/{subscriber}/.journal")
    journaled = {line.split(b"\t", 1)[0].decode(errors="replace")
                 for line in (journal.data if journal else b"").split(b"\n") if line.count(b"\t") == 4}
    for entry, files in snapshot.entries().items():
        if entry.subscriber == subscriber and any(f.folder == "sent" for f in files):
            if entry.id not in journaled and f".courier/etags/{subscriber}/{entry.id}" not in snapshot.files:
                problems.append(f"sent/{entry}.json is there, and its etag is neither a line of "
                                f".courier/etags/{subscriber}/.journal nor .courier/etags/{subscriber}/{entry.id}")
    return problems


ALL = [Intake(), Failing(), Manual(), Routes(), CatalogSync(), Prune(), Recovery(), Shared()]
BY_NAME = {w.name: w for w in ALL}
