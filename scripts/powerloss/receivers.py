"""The subscribers: one `courier sink` per subscriber name, outside the image,
so that what they received survives the cut. They run for the whole sweep;
before each crash point their stores are put back to what they held when the
workload began (the sink keeps nothing in memory: a key is a file)."""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

from crashdisk import Teardown


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Receiver:
    def __init__(self, name: str, binary: str, work: Path, teardown: Teardown, catalogs: Path | None) -> None:
        self.name = name
        self.port = free_port()
        self.store = work / f"sink-{name}"
        self.log = work / f"sink-{name}.log"
        argv = [binary, "sink", "--listen", f"127.0.0.1:{self.port}", "--dir", str(self.store), "--log", str(self.log)]
        if catalogs is not None:
            argv += ["--catalogs", str(catalogs)]
        self.process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=open(work / f"sink-{name}.err", "wb"))
        teardown.push(f"sink {name}", self._stop)
        deadline = time.monotonic() + 20
        while True:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{self.port}/health", timeout=1).read()
                break
            except OSError:
                if self.process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"courier sink for {name} did not start (see {work}/sink-{name}.err)")
                time.sleep(0.02)

    def _stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    # What the store holds: new/KEY.json per key, the entities' ETags as
    # lines of etags.tsv, and the request log. (A folder etags/ only in an
    # older sink's store.)
    _parts = ("new", "tmp")
    _files = ("etags.tsv",)

    def clear(self) -> None:
        for part in self._parts:
            folder = self.store / part
            if folder.is_dir():
                for path in folder.iterdir():
                    path.unlink()
        for name in self._files:
            path = self.store / name
            if path.exists():
                # In place: the sink keeps reading the file it opened.
                with open(path, "r+b") as file:
                    file.truncate(0)
        self.log.write_bytes(b"")

    def save(self, into: Path) -> None:
        shutil.rmtree(into, ignore_errors=True)
        into.mkdir(parents=True)
        for part in self._parts:
            if (self.store / part).is_dir():
                shutil.copytree(self.store / part, into / part)
        for name in self._files:
            if (self.store / name).exists():
                shutil.copy2(self.store / name, into / name)
        shutil.copy(self.log, into / "log")

    def restore(self, saved: Path) -> None:
        self.clear()
        for part in self._parts:
            if (saved / part).is_dir():
                for path in (saved / part).iterdir():
                    shutil.copy2(path, self.store / part / path.name)
        for name in self._files:
            if (saved / name).exists():
                with open(self.store / name, "r+b" if (self.store / name).exists() else "wb") as file:
                    file.truncate(0)
                    file.write((saved / name).read_bytes())
        # Truncated in place: the sink appends to the descriptor it opened.
        with open(self.log, "r+b") as log:
            log.truncate(0)
            log.write((saved / "log").read_bytes())

    def received(self) -> dict[str, bytes]:
        """Each key stored, with the bytes stored for it."""
        return {path.name[: -len(".json")]: path.read_bytes() for path in (self.store / "new").iterdir()
                if path.name.endswith(".json")}

    def answers(self) -> list[tuple[str, int]]:
        """(key, status) of every request since the store was put back."""
        lines = self.log.read_text(errors="replace").splitlines()
        pairs = []
        for line in lines:
            key, _, status = line.rpartition("\t")
            if status.isdigit():
                pairs.append((key, int(status)))
        return pairs


class Receivers:
    """alpha, beta, gamma; a port where nobody listens (a subscriber that is
    down); and one that takes connections and never answers (stalled: the
    kernel completes the handshake for the listen backlog, nobody reads)."""

    names = ("alpha", "beta", "gamma")

    def __init__(self, binary: str, work: Path, teardown: Teardown, catalogs: Path) -> None:
        self.by_name = {name: Receiver(name, binary, work, teardown, catalogs if name == "alpha" else None)
                        for name in self.names}
        self.down_url = f"http://127.0.0.1:{free_port()}"
        self._stall = socket.socket()
        self._stall.bind(("127.0.0.1", 0))
        self._stall.listen(128)
        teardown.push("stalled receiver", self._stall.close)
        self.stall_url = f"http://127.0.0.1:{self._stall.getsockname()[1]}"

    def __getitem__(self, name: str) -> Receiver:
        return self.by_name[name]

    def clear(self) -> None:
        for receiver in self.by_name.values():
            receiver.clear()

    def save(self, into: Path) -> None:
        for name, receiver in self.by_name.items():
            receiver.save(into / name)

    def restore(self, saved: Path) -> None:
        for name, receiver in self.by_name.items():
            receiver.restore(saved / name)

    def fingerprint(self) -> tuple:
        return tuple((name, tuple(sorted(receiver.received()))) for name, receiver in self.by_name.items())
