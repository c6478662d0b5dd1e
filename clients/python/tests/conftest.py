"""Fixtures for the tests against real Swift hosts: start ``statebus host`` (and relay,
keygen) processes, wait for their ``ready`` line with a deadline, and always stop them by
pid, also when a test fails.

The executable is ``$STATEBUS_EXECUTABLE``, else ``statebus`` on ``PATH``, else the
repository's ``.build/debug/statebus``; without one, the host tests are skipped (and say so).
"""

from __future__ import annotations

import ctypes
import os
import queue
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Iterator

import pytest

sys.path.insert(0, str(Path(__file__).parent))  # fakehost

ROOT = Path(__file__).resolve().parents[3]
#: Every wait on a process: generous, for a busy 2-core machine (STATEBUS_TIMEOUT raises it).
DEADLINE = float(os.environ.get("STATEBUS_TIMEOUT", "30"))


def statebus_executable() -> str | None:
    """The statebus command-line tool the host tests run, if any."""
    for candidate in (os.environ.get("STATEBUS_EXECUTABLE"), shutil.which("statebus"), str(ROOT / ".build/debug/statebus")):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    return None


def _die_with_parent() -> None:  # pragma: no cover - runs in the child
    """The child gets SIGTERM when the test process dies, however it dies (Linux)."""
    try:
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except OSError:
        pass


class Node:
    """A ``statebus`` process: its output lines, its ``ready`` line, and its end."""

    def __init__(self, arguments: list[str], name: str, takes_input: bool = False) -> None:
        self.name, self.arguments = name, arguments
        self.lines: list[str] = []
        self._lines: queue.Queue[str | None] = queue.Queue()
        self.process = subprocess.Popen(
            arguments, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            stdin=subprocess.PIPE if takes_input else subprocess.DEVNULL, text=True, preexec_fn=_die_with_parent,
        )
        threading.Thread(target=self._read, daemon=True).start()
        self.ready: dict[str, str] = {}

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self._lines.put(line.rstrip("\n"))
        self._lines.put(None)

    def wait_for_line(self, prefix: str, deadline: float = DEADLINE) -> str:
        """The first new output line starting with ``prefix``, within ``deadline`` seconds."""
        end = time.monotonic() + deadline
        while True:
            try:
                line = self._lines.get(timeout=max(0.0, end - time.monotonic()))
            except queue.Empty:
                raise AssertionError(f"{self.name}: no line starting {prefix!r} within {deadline:g} s; output: {self.lines}") from None
            if line is None:
                raise AssertionError(f"{self.name} exited ({self.process.wait()}) before {prefix!r}; output: {self.lines}")
            self.lines.append(line)
            if line.startswith(prefix):
                return line

    def wait_ready(self) -> dict[str, str]:
        """Waits for ``ready key=value ...`` and returns its fields."""
        line = self.wait_for_line("ready ")
        self.ready = dict(field.split("=", 1) for field in line.split()[1:] if "=" in field)
        return self.ready

    def send(self, line: str) -> None:
        """Writes a line to its standard input (``takes_input=True``)."""
        assert self.process.stdin is not None
        self.process.stdin.write(line + "\n")
        self.process.stdin.flush()

    def close_input(self) -> None:
        """Ends its standard input."""
        assert self.process.stdin is not None
        self.process.stdin.close()

    @property
    def pid(self) -> int:
        return self.process.pid

    def kill(self) -> None:
        """SIGKILL, then reaps it."""
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(DEADLINE)

    def pause(self) -> None:
        """SIGSTOP: the node stops reading and answering, its sockets stay open."""
        os.kill(self.process.pid, signal.SIGSTOP)

    def resume(self) -> None:
        """SIGCONT."""
        os.kill(self.process.pid, signal.SIGCONT)

    def stop(self) -> None:
        """SIGTERM, SIGKILL after a deadline; reaps it."""
        if self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGCONT)  # a paused node could not act on SIGTERM
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(DEADLINE)


class System:
    """Starts statebus processes in one temporary folder, and stops every one of them."""

    def __init__(self, executable: str, folder: str) -> None:
        self.executable, self.folder = executable, folder
        self.nodes: list[Node] = []

    def endpoint(self, name: str) -> str:
        return f"ipc://{self.folder}/{name}.control"

    def start(self, *arguments: str, name: str, ready: bool = True) -> Node:
        node = Node([self.executable, *arguments], name)
        self.nodes.append(node)
        if ready:
            node.wait_ready()
        return node

    def host(self, *declarations: str, name: str = "host", control: str | None = None, extra: tuple[str, ...] = ()) -> Node:
        """``statebus host`` with the given ``--object``/``--property`` declarations, on an ipc
        endpoint of its own, with its database in the folder."""
        control = control or self.endpoint(name)
        # --busy-poll-us 0: the host sleeps between turns; the tests share 2 cores.
        return self.start("host", "--control", control, "--name", name, "--database", f"{self.folder}/{name}.sqlite",
                          "--busy-poll-us", "0", *extra, *declarations, name=name)

    def relay(self, upstream: str, name: str = "relay", extra: tuple[str, ...] = ()) -> Node:
        return self.start("relay", "--upstream", upstream, "--control", self.endpoint(name), *extra, name=name)

    def run(self, *arguments: str) -> list[str]:
        """Runs a short command to its end (exit 0 expected); returns its output lines."""
        done = subprocess.run([self.executable, *arguments], capture_output=True, text=True, timeout=DEADLINE,
                              preexec_fn=_die_with_parent)
        assert done.returncode == 0, f"statebus {' '.join(arguments)}: {done.stdout}{done.stderr}"
        return done.stdout.splitlines()

    def stop_all(self) -> None:
        for node in reversed(self.nodes):
            node.stop()


@pytest.fixture
def system() -> Iterator[System]:
    executable = statebus_executable()
    if executable is None:
        pytest.skip("no statebus executable: set STATEBUS_EXECUTABLE, put statebus on PATH, or `swift build` the repository")
    with tempfile.TemporaryDirectory(prefix="sbpy-") as folder:
        os.chmod(folder, 0o700)
        system = System(executable, folder)
        try:
            yield system
        finally:
            system.stop_all()
