"""Server processes of the tests: a Python script run on a free 127.0.0.1 port, its output
in a log file, ready when an HTTP URL answers, stopped cleanly or killed with ``kill -9``.

    server = ServerProcess(SCRIPT, "--url", url, log=tmp_path / "server.log")
    server.wait_ready()  # its agent card answers (or AssertionError, with what it logged)
    ...
    server.kill()        # SIGKILL: no shutdown, nothing
    server.stop()        # SIGTERM, then SIGKILL if it does not stop within 10 s
"""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx

__all__ = ["CARD_PATH", "ServerProcess", "free_port"]

CARD_PATH = "/.well-known/agent-card.json"


def free_port() -> int:
    """A TCP port nobody listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class ServerProcess:
    """``python <script> --port <port> <args>...`` on a free port, its stdout and stderr
    appended to ``log``; ``name`` is what a failure to start calls it."""

    def __init__(self, script: str | Path, *args: str, log: Path, name: str = "the server") -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = log
        self.name = name
        command = [sys.executable, str(script), "--port", str(self.port), *args]
        with log.open("ab") as out:
            self.process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT)

    def wait_ready(self, timeout: float = 20.0, path: str = CARD_PATH) -> None:
        """Wait until ``GET path`` answers with a success, while the process runs."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and self.process.poll() is None:
            try:
                if httpx.get(self.url + path, timeout=1).is_success:
                    return
            except httpx.TransportError:
                pass
            time.sleep(0.05)
        raise AssertionError(f"{self.name} did not start:\n{self.output()}")

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
