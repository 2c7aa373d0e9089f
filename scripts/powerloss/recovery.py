"""After a cut: courier's own recovery, as the system and a person would run
it, with the checks of rules.py between its phases.

  1. the rounds the timers start after boot (`courier run`, each worker's on
     a shared spool) and the workload's own repeatable command (a catalog
     sync, a prune): then nothing may need attention because of the cut;
  2. a person resends what the workload left in needsAttention/ on purpose
     and runs `courier send-now` (which also sends what is deferred): then
     every record is delivered, and the ledger is whole;
  3. a second round (and sync, or prune --dry-run): it has nothing to do.
"""

from __future__ import annotations

import json
from pathlib import Path

import rules
from courier import Courier
from spoolstate import Snapshot
from workloads import Command, Workload


class Recovery:
    def __init__(self, courier: Courier, config: Path, spool: Path, workload: Workload) -> None:
        self.courier = courier
        self.config = config
        self.spool = spool
        self.workload = workload
        # What each command did, in one line, for a violation's report.
        self.said: list[str] = []
        self.violations: list[rules.Violation] = []

    def run(self, command: Command) -> str:
        done = self.courier.run(self.config, self.spool, command)
        last = (done.stdout.strip().splitlines() or [""])[-1]
        failure = (done.stderr.strip().splitlines() or [""])[-1] if done.returncode else ""
        self.said.append(f"`{command}` exit {done.returncode}: {last}" + (f" / {failure}" if failure else ""))
        if done.returncode != 0:
            self.violations.append(rules.Violation("recovery", f"`{command}` exited {done.returncode}: "
                                                   + (done.stderr.strip() or done.stdout.strip())[-300:]))
        return done.stdout

    def check(self, cut: Snapshot, fates, receivers, reference) -> list[rules.Violation]:
        workload = self.workload
        first = workload.workers[0]
        found = self.violations

        for worker in workload.workers:
            self.run(Command(["run"], worker))
        for command in workload.recovery_extra:
            self.run(Command(command.args, first))
        after_rounds = Snapshot(self.spool)
        found += rules.attention(workload, after_rounds, rules.new_lines(cut, after_rounds))

        names = workload.to_resend(after_rounds)
        if names:
            self.run(Command(["resend", *names], first))
        self.run(Command(["send-now"], first))
        recovered = Snapshot(self.spool)
        found += [v for v in rules.attention(workload, recovered, rules.new_lines(after_rounds, recovered))
                  if v.text.startswith("recovery wrote")]
        found += rules.delivered(workload, recovered, fates, receivers, reference)
        found += rules.torn_tails_repaired(cut, recovered)
        found += [rules.Violation("delivered", text) for text in workload.final_checks(recovered)]

        summaries = []
        for worker in workload.workers:
            self.run(Command(["run", "--foreground"], worker))
            summary = self.spool / ".courier" / "last-round.json"
            summaries.append((worker or "run", json.loads(summary.read_text()) if summary.exists() else {}))
        outputs = {"second": "".join(self.run(Command(c.args, first)) for c in workload.second_extra)}
        final = Snapshot(self.spool)
        found += rules.second_round(workload, summaries, recovered, final, outputs)
        found += [rules.Violation("second-round", text) for text in workload.second_checks(outputs)]
        return found
