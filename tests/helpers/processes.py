"""Server processes of the tests: a Python script run on a free 127.0.0.1 port, its output
in a log file, ready when an HTTP URL answers, stopped cleanly or killed with ``kill -9``.

    server = ServerProcess(SCRIPT, "--url", url, log=tmp_path / "server.log")
    server.wait_ready()  # its agent card answers (or AssertionError, with what it logged)
    ...
    server.kill()        # SIGKILL: no shutdown, nothing
    server.stop()        # SIGTERM, then SIGKILL if it does not stop within 10 s

A program in another interpreter (``interpreter="node"``, another venv's python) runs the
same way. With ``announce=True`` it gets ``--port 0``, binds a port of its own choosing and
prints ``PORT <n>`` on stdout; ``wait_ready`` reads the port from the log first (no race
for a free port), and ``port``/``url`` are known from then on.
"""

from __future__ import annotations

import re
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx

__all__ = ["CARD_PATH", "ServerProcess", "free_port"]

CARD_PATH = "/.well-known/agent-card.json"
_ANNOUNCED = re.compile(rb"^PORT (\d+)$", re.MULTILINE)


def free_port() -> int:
    """A TCP port nobody listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class ServerProcess:
    """``python <script> --port <port> <args>...`` on a free port, its stdout and stderr
    appended to ``log``; ``name`` is what a failure to start calls it. ``interpreter``
    runs the script (default: this python); ``announce``: see the module docstring."""

    def __init__(
        self,
        script: str | Path,
        *args: str,
        log: Path,
        name: str = "the server",
        interpreter: str = sys.executable,
        announce: bool = False,
        cwd: str | Path | None = None,
    ) -> None:
        self.announce = announce
        self.port = 0 if announce else free_port()
        self.url = "" if announce else f"http://127.0.0.1:{self.port}"
        self.log = log
        self.name = name
        command = [interpreter, str(script), "--port", str(self.port), *args]
        with log.open("ab") as out:
            self._log_start = out.tell()
            self.process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, cwd=cwd)

    def wait_ready(self, timeout: float = 20.0, path: str = CARD_PATH) -> None:
        """Wait until ``GET path`` answers with a success, while the process runs (and,
        with ``announce``, until it printed its port)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and self.process.poll() is None:
            if not self.url:
                self._read_port()
            else:
                try:
                    if httpx.get(self.url + path, timeout=1).is_success:
                        return
                except httpx.TransportError:
                    pass
            time.sleep(0.05)
        raise AssertionError(f"{self.name} did not start:\n{self.output()}")

    def _read_port(self) -> None:
        with self.log.open("rb") as out:
            out.seek(self._log_start)
            found = _ANNOUNCED.search(out.read())
        if found:
            self.port = int(found.group(1))
            self.url = f"http://127.0.0.1:{self.port}"

    def kill(self) -> None:
        """``kill -9`` if it runs: no shutdown, no lease release, nothing."""
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(10)

    def stop(self) -> None:
        """Stop it cleanly (SIGTERM), or kill it if it does not stop within 10 s."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.kill()

    def output(self) -> str:
        """What it logged so far."""
        return self.log.read_text(errors="replace")
