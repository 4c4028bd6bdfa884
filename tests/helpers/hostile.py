"""One client hogging a server's connections, and a fresh client trying to be served meanwhile.

The hostile client connects from one loopback address (``127.0.0.2`` by default: Linux
routes all of 127.0.0.0/8 to the loopback interface, so a test can give two clients two
addresses on one machine) and keeps ``count`` connections open in one of three ways:

- ``idle``: connected, sending nothing;
- ``slowloris``: a request head sent one byte every ``drip`` seconds, never finished;
- ``streams``: a ``SubscribeToTask`` stream opened on a task that stays open, never read.

A connection the server closes (a deadline, a refusal) is opened again, as an attacker
would. Meanwhile `fresh_client_calls` makes ``GetTask`` calls from another address and
counts how many were answered with the task.

    async with hogging(url, "idle", 1100, task_id=...) as hog:
        served, failed = await fresh_client_calls(url, task_id, seconds=5)

The hostile client runs in a process of its own, so that its work (reconnecting as fast as
it is refused) costs the fresh client nothing but what it costs the server.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import socket
import subprocess
import sys
import tempfile
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit

import anyio
import httpx

__all__ = [
    "FRESH_ADDRESS",
    "HOSTILE_ADDRESS",
    "Hog",
    "can_bind_loopback_aliases",
    "fresh_client_calls",
    "hogging",
    "hold",
]

HOSTILE_ADDRESS = "127.0.0.2"
FRESH_ADDRESS = "127.0.0.3"
Mode = Literal["idle", "slowloris", "streams"]
V1 = {"Content-Type": "application/json", "A2A-Version": "1.0"}


@dataclass
class Hog:
    """What the hostile client managed."""

    mode: Mode
    count: int
    opened: int = 0
    """Connections opened in all (a closed one is opened again)."""
    refused: int = 0
    """Connections the server closed or answered with an error status."""
    statuses: dict[int, int] = field(default_factory=dict)
    """The statuses of the answers the hostile client got, by status."""
    open_now: int = 0


def _subscribe_request(host: str, task_id: str) -> bytes:
    body = json.dumps(
        {"jsonrpc": "2.0", "id": 1, "method": "SubscribeToTask", "params": {"id": task_id}}
    ).encode()
    head = (
        f"POST / HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n"
        f"A2A-Version: 1.0\r\nContent-Length: {len(body)}\r\n\r\n"
    ).encode()
    return head + body


async def _hold_one(hog: Hog, host: str, port: int, task_id: str, drip: float) -> None:
    """Keep one connection of the hog open, opening it again whenever it is closed."""
    while True:
        try:
            stream = await anyio.connect_tcp(host, port, local_host=HOSTILE_ADDRESS)
        except OSError:
            hog.refused += 1
            await anyio.sleep(0.2)
            continue
        hog.opened += 1
        hog.open_now += 1
        try:
            async with stream:
                if hog.mode == "streams":
                    await stream.send(_subscribe_request(host, task_id))
                    # Never read: the stream's frames pile up in the socket buffers. Only
                    # look whether the server refused it (a short answer, then a close).
                    await _wait_for_close_or_refusal(hog, stream)
                elif hog.mode == "slowloris":
                    request = f"GET / HTTP/1.1\r\nHost: {host}\r\nX-Slow: ".encode()
                    for byte in request + b"a" * 100_000:
                        await stream.send(bytes([byte]))
                        with anyio.move_on_after(drip):
                            data = await stream.receive()
                            _note_answer(hog, data)
                            return  # the server answered or closed: open another one
                else:  # idle
                    data = await stream.receive()
                    _note_answer(hog, data)
        except (anyio.EndOfStream, anyio.BrokenResourceError, OSError):
            hog.refused += 1
        finally:
            hog.open_now -= 1


async def _wait_for_close_or_refusal(hog: Hog, stream: anyio.abc.ByteStream) -> None:
    first = await stream.receive(256)
    _note_answer(hog, first)
    if first.startswith(b"HTTP/1.1 200"):
        await anyio.sleep_forever()  # held, unread
    # Refused: the server answers and (with Connection: close) hangs up.


def _note_answer(hog: Hog, data: bytes) -> None:
    status = int(data[9:12]) if data.startswith(b"HTTP/1.") and len(data) >= 12 else 0
    hog.statuses[status] = hog.statuses.get(status, 0) + 1
    if status != 200:
        hog.refused += 1


async def hold(url: str, mode: Mode, count: int, task_id: str, drip: float, report: str) -> None:
    """The hostile client's loop (run in a process of its own by `hogging`): hold ``count``
    connections until cancelled, writing what it managed to ``report`` (JSON) every 0.2 s."""
    parts = urlsplit(url)
    host, port = parts.hostname or "127.0.0.1", parts.port or 80
    hog = Hog(mode, count)
    async with anyio.create_task_group() as tg:
        for _ in range(count):
            tg.start_soon(_hold_one, hog, host, port, task_id, drip)
        while True:
            await anyio.sleep(0.2)
            Path(report).write_text(json.dumps(dataclasses.asdict(hog)))


@contextlib.asynccontextmanager
async def hogging(
    url: str, mode: Mode, count: int, *, task_id: str = "", drip: float = 2.0
) -> AsyncIterator[Hog]:
    """``count`` connections from `HOSTILE_ADDRESS` held open by another process for the
    duration of the block (which starts once they were all tried once); the `Hog` read back
    when the block ends. Another process, so that the hostile client's work does not slow
    the fresh client down: only the server is shared."""
    with tempfile.TemporaryDirectory() as folder:
        report = Path(folder) / "hog.json"
        code = (
            "import sys, anyio; sys.path.insert(0, sys.argv[1]); "
            "from helpers.hostile import hold; "
            "anyio.run(hold, *sys.argv[2:4], int(sys.argv[4]), sys.argv[5], "
            "float(sys.argv[6]), sys.argv[7])"
        )
        helpers = str(Path(__file__).parents[1])
        args = [url, mode, str(count), task_id, str(drip), str(report)]
        process = subprocess.Popen([sys.executable, "-c", code, helpers, *args])
        hog = Hog(mode, count)
        try:
            with anyio.fail_after(60):
                while hog.opened + hog.refused < count:
                    await anyio.sleep(0.1)
                    assert process.poll() is None, "the hostile client stopped"
                    if report.exists():
                        hog = _read(report) or hog
            await anyio.sleep(0.5)  # let the server take them in
            yield hog
        finally:
            process.terminate()
            process.wait(10)
            latest = _read(report) if report.exists() else None
            if latest is not None:
                vars(hog).update(vars(latest))


def _read(report: Path) -> Hog | None:
    try:
        return Hog(**json.loads(report.read_text()))
    except ValueError:  # caught mid-write
        return None


async def fresh_client_calls(
    url: str, task_id: str, *, seconds: float = 5.0, workers: int = 4, timeout: float = 5.0
) -> tuple[int, int]:
    """``GetTask`` calls from `FRESH_ADDRESS` for ``seconds``; (answered with the task, not)."""
    served = failed = 0
    body = {"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": task_id}}
    transport = httpx.AsyncHTTPTransport(local_address=FRESH_ADDRESS)
    async with httpx.AsyncClient(transport=transport, timeout=timeout) as client:

        async def work() -> None:
            nonlocal served, failed
            with anyio.move_on_after(seconds):
                while True:
                    try:
                        reply = await client.post(url + "/", json=body, headers=V1)
                        ok = reply.status_code == 200 and "result" in reply.json()
                    except (httpx.HTTPError, ValueError):
                        ok = False
                    if ok:
                        served += 1
                    else:
                        failed += 1
                        await anyio.sleep(0.05)

        async with anyio.create_task_group() as tg:
            for _ in range(workers):
                tg.start_soon(work)
    return served, failed


def can_bind_loopback_aliases() -> bool:
    """Whether this machine lets a socket use 127.0.0.2 and 127.0.0.3 (Linux does)."""
    for address in (HOSTILE_ADDRESS, FRESH_ADDRESS):
        with socket.socket() as sock:
            try:
                sock.bind((address, 0))
            except OSError:
                return False
    return True
