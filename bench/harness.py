"""What the benchmark scripts share to run their servers (``redis_bench.py``,
``sql_bench.py``, ``sql_replicas.py``; imported from beside them).

- :func:`free_port`, :func:`pinned` (``taskset`` on a core, when there are two);
- :class:`ServerProcess`: a server command on a port, its output in a temporary log file,
  ready once its agent card answers, stopped (log removed) or killed with ``kill -9``;
- :func:`admin`: one statement outside a transaction (``CREATE DATABASE``...).
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def pinned(core: int) -> list[str]:
    """The ``taskset`` prefix that pins a command to ``core`` (none on one core)."""
    if (os.cpu_count() or 1) >= 2 and shutil.which("taskset"):
        return ["taskset", "-c", str(core)]
    return []


class ServerProcess:
    """``command`` serving on ``port`` of 127.0.0.1, ready when started (see the module
    docstring); ``stop`` sends ``stop_signal`` and kills it after ``stop_timeout`` s."""

    stop_signal = signal.SIGTERM
    stop_timeout = 10.0

    def __init__(self, command: list[str], port: int, *, log_prefix: str, name: str) -> None:
        self.port = port
        self.url = f"http://127.0.0.1:{port}"
        self.name = name
        handle, self.log = tempfile.mkstemp(prefix=log_prefix, suffix=".log")
        with os.fdopen(handle, "wb") as log:
            self.process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
        self._wait_ready()

    def _wait_ready(self, timeout: float = 30.0) -> None:
        import httpx

        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and self.process.poll() is None:
            try:
                if httpx.get(self.url + "/.well-known/agent-card.json").status_code == 200:
                    return
            except httpx.TransportError:
                time.sleep(0.05)
        self.kill()
        raise SystemExit(f"{self.name} did not start:\n{self.output()}")

    def output(self) -> str:
        return Path(self.log).read_text(errors="replace")

    def kill(self) -> None:
        if self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGKILL)
            self.process.wait()

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(self.stop_signal)
            try:
                self.process.wait(self.stop_timeout)
            except subprocess.TimeoutExpired:
                self.kill()
        if os.path.exists(self.log):
            os.unlink(self.log)


async def admin(url: str, statement: str) -> Any:
    """Run one statement with AUTOCOMMIT; its scalar result, if it returns rows."""
    from sqlalchemy import text
    from sqlalchemy.ext.asyncio import create_async_engine

    engine = create_async_engine(url, isolation_level="AUTOCOMMIT")
    try:
        async with engine.connect() as conn:
            result = await conn.execute(text(statement))
            return result.scalar() if result.returns_rows else None
    finally:
        await engine.dispose()


#: The messageId of a request template that load generators replace in each request
#: (`loadgen.fresh_ids`, `FRESH_IDS_LUA`), so that each request is new work for a server
#: that deduplicates a message sent again (ours does by default).
MESSAGE_ID = "m-0000000000"

#: A wrk script's tail that sends ``wrk.body`` with a new messageId of the same length in
#: each request, in place of `MESSAGE_ID`.
FRESH_IDS_LUA = """
local marker = "m-0000000000"
local cut = string.find(wrk.body, marker, 1, true)
if cut then
  local head, tail = string.sub(wrk.body, 1, cut + 1), string.sub(wrk.body, cut + 12)
  local run, n = math.random(0, 65535), 0
  request = function()
    n = (n + 1) % 1000000
    return wrk.format(nil, nil, nil, head .. string.format("%04x%06d", run, n) .. tail)
  end
end
"""
