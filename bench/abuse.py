"""Abuse: what a careless or hostile client can make a real server hold, one section each.

    uv run python bench/abuse.py SECTION [options]      # e.g. subscriptions
    uv run python bench/abuse.py SECTION --help

Every section starts real servers on 127.0.0.1, one process each (``serve``, below), drives
them from this process over raw sockets and prints the server's resident set (RSS, from
``/proc``) before and after. The client's own memory is never counted.

Servers (``--servers``, comma-separated):

- ``starlette-h11``: ``A2AStarlette`` on uvicorn, pure Python h11 on the asyncio loop (what
  ``pip install uvicorn`` runs);
- ``starlette-httptools``: the same on httptools and uvloop (what ``uvicorn[standard]``
  picks);
- ``aiohttp``: ``a2a_aiohttp.add_routes`` on aiohttp.

Sections:

- ``subscriptions`` (issue 13, "subscriptions share, they do not copy"): one task of
  ``--size`` bytes (an artifact of that much text; the task then waits for input, so that
  it stays open), then ``--subscribers`` connections that subscribe to it
  (``SubscribeToTask``, JSON-RPC or REST) and never read a byte. Printed per server: the
  RSS idle, with the task, with every subscription open, and the growth per subscription
  (in MiB, and as a multiple of the task's size); then how many subscriptions the server
  answered with a stream (seen without reading: ``MSG_PEEK``, after measuring), and
  whether the task still reads back whole (GetTask).

Before and after a change: ``git archive REV packages | tar -x -C DIR``, then run with
``PYTHONPATH=DIR/packages/a2a-core/src:DIR/packages/a2a-starlette/src:DIR/packages/a2a-aiohttp/src``
(the servers inherit it) for the older code.

Adding a section: a function that adds its subcommand to the parser (see
``add_subscriptions``) and a ``run`` function it points to; register it in ``SECTIONS``.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

from loadgen import build_request  # noqa: E402  (sibling scripts)
from memory_store import rss_bytes  # noqa: E402
from servers import HOST, raise_fd_limit, run_aiohttp, run_uvicorn  # noqa: E402

SERVERS = ("starlette-h11", "starlette-httptools", "aiohttp")
MiB = 1 << 20


# --- the server process --------------------------------------------------------------------


def abuse_server(base_url: str) -> Any:
    """The A2AServer every section runs (in-memory backend, default bounds).

    Its agent answers ``big N`` with a task holding an artifact of ``N`` characters of text,
    then asks for input (the task stays open, so that it can be subscribed to); anything
    else is echoed back.
    """
    from a2a_core.server import A2AServer, TaskContext
    from a2a_core.server.agent import InputRequired
    from a2a_core.types import AgentCapabilities, AgentCard, AgentSkill

    async def agent(ctx: TaskContext) -> Any:
        command, _, rest = ctx.text.partition(" ")
        if command == "big":
            await ctx.artifact("x" * int(rest), name="big")
            return InputRequired("anything else?")
        return ctx.text

    card = AgentCard(
        name="Abuse",
        description="Builds tasks of a given size.",
        supported_interfaces=[],
        version="1.0.0",
        capabilities=AgentCapabilities(streaming=True),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[AgentSkill(id="big", name="Big", description="A big task.", tags=["bench"])],
    )
    return A2AServer(agent, card=card, base_url=base_url)


def serve(kind: str, port: int) -> None:
    """Run one server until killed (the ``serve`` subcommand)."""
    raise_fd_limit()
    base_url = f"http://{HOST}:{port}"
    if kind == "aiohttp":
        from aiohttp import web

        from a2a_aiohttp import add_routes

        app = web.Application()
        add_routes(app, abuse_server(base_url))
        run_aiohttp(app, port)
        return
    from a2a_starlette import A2AStarlette

    run_uvicorn(A2AStarlette(abuse_server(base_url)), port, kind.removeprefix("starlette-"))


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        port: int = sock.getsockname()[1]
        return port


@contextmanager
def running_server(kind: str) -> Iterator[tuple[int, int]]:
    """A server process of ``kind``, as ``(port, pid)``, stopped on exit."""
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, __file__, "serve", kind, "--port", str(port)],
        stdout=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection((HOST, port), timeout=1).close()
                break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"server {kind} did not start") from None
                time.sleep(0.05)
        yield port, process.pid
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


# --- the client side ---------------------------------------------------------------------------


def exchange(port: int, request: bytes, timeout: float = 60) -> bytes:
    """Send one request on a new connection; the whole response (the server closes it)."""
    with socket.create_connection((HOST, port), timeout=timeout) as sock:
        sock.sendall(request)  # with Connection: close (no half-close: uvicorn drops those)
        chunks = []
        while chunk := sock.recv(1 << 20):
            chunks.append(chunk)
    return b"".join(chunks)


def json_body(response: bytes) -> Any:
    head, _, body = response.partition(b"\r\n\r\n")
    if b"transfer-encoding: chunked" in head.lower():
        raw, rest = bytearray(), body
        while rest:
            size_line, _, rest = rest.partition(b"\r\n")
            size = int(size_line.split(b";")[0], 16)
            if size == 0:
                break
            raw += rest[:size]
            rest = rest[size + 2 :]
        body = bytes(raw)
    return json.loads(body)


def rpc(port: int, method: str, params: dict[str, Any], request_id: int = 1) -> bytes:
    body = json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
    headers = {"Content-Type": "application/json", "A2A-Version": "1.0", "Connection": "close"}
    return build_request("POST", "/", port, headers, body.encode())


def settled_rss(pid: int, *, quiet: float = 1.5, limit: float = 60) -> int:
    """The server's RSS once it has stopped changing by more than 1 MiB for ``quiet`` s."""
    deadline = time.monotonic() + limit
    last, since = rss_bytes(pid), time.monotonic()
    while time.monotonic() < deadline:
        time.sleep(0.25)
        now = rss_bytes(pid)
        if abs(now - last) > MiB:
            last, since = now, time.monotonic()
        elif time.monotonic() - since >= quiet:
            return now
    return rss_bytes(pid)


# --- section: subscriptions ------------------------------------------------------------------


def add_subscriptions(sections: Any) -> None:
    parser = sections.add_parser(
        "subscriptions", help="unread subscriptions to one big task (issue 13)"
    )
    parser.add_argument("--servers", default=",".join(SERVERS), help="comma-separated kinds")
    parser.add_argument("--size", type=int, default=4_000_000, help="task size in bytes")
    parser.add_argument("--subscribers", type=int, default=100)
    parser.add_argument("--binding", choices=("jsonrpc", "rest"), default="jsonrpc")
    parser.set_defaults(run=run_subscriptions)


def subscribe_request(port: int, binding: str, task_id: str, n: int) -> bytes:
    if binding == "rest":
        headers = {"A2A-Version": "1.0", "Accept": "text/event-stream"}
        return build_request("GET", f"/tasks/{task_id}:subscribe", port, headers)
    request = rpc(port, "SubscribeToTask", {"id": task_id}, request_id=n)
    return request.replace(b"Connection: close\r\n", b"")


def measure_subscriptions(kind: str, size: int, count: int, binding: str) -> dict[str, Any]:
    with running_server(kind) as (port, pid):
        rss_idle = settled_rss(pid)
        message = {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": f"big {size}"}]}
        reply = json_body(exchange(port, rpc(port, "SendMessage", {"message": message})))
        task = reply["result"]["task"]
        task_id = task["id"]
        del reply, task
        rss_task = settled_rss(pid)
        sockets = []
        for n in range(count):
            sock = socket.create_connection((HOST, port))
            sock.sendall(subscribe_request(port, binding, task_id, n + 2))
            sockets.append(sock)  # and never read from it
        rss_subscribed = settled_rss(pid)
        # Measured: now see (without taking anything from the socket) that each was served.
        streaming = sum(sock.recv(12, socket.MSG_PEEK) == b"HTTP/1.1 200" for sock in sockets)
        check = json_body(exchange(port, rpc(port, "GetTask", {"id": task_id})))["result"]
        intact = len(check["artifacts"][0]["parts"][0]["text"]) == size
        intact = intact and check["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
        for sock in sockets:
            sock.close()
    return {
        "server": kind,
        "binding": binding,
        "subscribers": count,
        "rss_idle": rss_idle,
        "rss_task": rss_task,
        "rss_subscribed": rss_subscribed,
        "streaming": streaming,
        "task_intact": intact,
    }


def run_subscriptions(args: argparse.Namespace) -> None:
    raise_fd_limit()
    print(
        f"{args.subscribers} unread {args.binding} subscriptions to a task of "
        f"{args.size / MiB:.1f} MiB (RSS of the server)"
    )
    print(
        f"{'server':<20} {'idle':>9} {'task':>9} {'subscribed':>11} {'per sub':>9} "
        f"{'x task':>7} {'streams':>8}"
    )
    for kind in args.servers.split(","):
        row = measure_subscriptions(kind, args.size, args.subscribers, args.binding)
        grown = row["rss_subscribed"] - row["rss_task"]
        per = grown / args.subscribers
        print(
            f"{kind:<20} {row['rss_idle'] / MiB:>7.0f}Mi {row['rss_task'] / MiB:>7.0f}Mi "
            f"{row['rss_subscribed'] / MiB:>9.0f}Mi {per / MiB:>7.2f}Mi {per / args.size:>7.2f} "
            f"{row['streaming']:>4}/{args.subscribers:<3}"
            + ("" if row["task_intact"] else "  TASK NOT INTACT")
        )


# --- main -------------------------------------------------------------------------------------

#: Every section: a function adding its subcommand (which sets ``run``).
SECTIONS: tuple[Callable[[Any], None], ...] = (add_subscriptions,)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    sections = parser.add_subparsers(dest="section", required=True)
    for add in SECTIONS:
        add(sections)
    server = sections.add_parser("serve", help="run one server (used by the sections)")
    server.add_argument("kind", choices=SERVERS)
    server.add_argument("--port", type=int, required=True)
    args = parser.parse_args()
    if args.section == "serve":
        serve(args.kind, args.port)
    else:
        args.run(args)


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    main()
