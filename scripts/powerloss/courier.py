"""Running courier: one command against a spool with one of a workload's
configurations, as a person or systemd would."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from workloads import Command

TIMEOUT = 120


class Courier:
    def __init__(self, binary: str, records: Path) -> None:
        self.binary = binary
        # Where the records given to `courier enqueue` are, outside the image.
        self.records = records

    def argv(self, config: Path, spool: Path, command: Command) -> list[str]:
        args = [a.replace("{records}", str(self.records)) for a in command.args]
        return [self.binary, "--config", str(config), "--spool", str(spool), *args]

    @staticmethod
    def env(command: Command) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if k not in ("COURIER_WORKER_ID", "COURIER_CONFIG")}
        if command.worker:
            env["COURIER_WORKER_ID"] = command.worker
        return env

    def run(self, config: Path, spool: Path, command: Command) -> subprocess.CompletedProcess:
        return subprocess.run(self.argv(config, spool, command), env=self.env(command), capture_output=True,
                              text=True, timeout=TIMEOUT)

    def start(self, config: Path, spool: Path, command: Command, stderr) -> subprocess.Popen:
        """In a session of its own, so that a cut can kill it and its children at once."""
        return subprocess.Popen(self.argv(config, spool, command), env=self.env(command), stdout=subprocess.DEVNULL,
                                stderr=stderr, start_new_session=True)
