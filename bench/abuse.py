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
- ``aiohttp``: ``a2a_aiohttp.add_routes`` on aiohttp;
- ``grpc`` (the ``subscriptions`` section only, where it is the binding too):
  ``a2a_grpc.GrpcServer`` alone, driven by grpcio's blocking client.

Sections:

- ``subscriptions`` (issue 13, "subscriptions share, they do not copy"): one task of
  ``--size`` bytes (an artifact of that much text; the task then waits for input, so that
  it stays open), then ``--subscribers`` connections that subscribe to it
  (``SubscribeToTask``, JSON-RPC or REST; over gRPC with ``--servers grpc``) and never
  read a byte. Printed per server: the
  RSS idle, with the task, with every subscription open, and the growth per subscription
  (in MiB, and as a multiple of the task's size); then how many subscriptions the server
  answered with a stream (seen without reading: ``MSG_PEEK``, after measuring), whether
  the task still reads back whole (GetTask), and the RSS 10 s after the clients closed
  their connections (issue 24: within 150 MiB of idle).

Before and after a change: ``git archive REV packages | tar -x -C DIR``, then run with
``PYTHONPATH=DIR/packages/a2a-core/src:DIR/packages/a2a-starlette/src:DIR/packages/a2a-aiohttp/src``
(the servers inherit it) for the older code.

- ``shutdown`` (issue 13, "bounded, clean shutdown"): ``--agents`` blocking sends and one
  streaming send whose agents never finish, then SIGTERM. Printed per server: the seconds
  from SIGTERM to the process's exit (``kill -9`` after ``--limit``), how many blocking
  callers got an answer (their task FAILED, or an error) rather than a dropped connection,
  and whether the stream ended with a final frame. ``--baseline DIR`` measures a checkout's
  packages too, in the same run.
- ``messages`` (issue 13, "memory bounded in bytes"): ``--count`` SendMessage calls (distinct
  messageIds, one connection each, one after the other) whose bodies are just under the
  body limit (8 MiB), answered by the echo agent: each task holds the message in its
  history and the artifact repeating it, and its log a snapshot and the artifact event.
  Printed per server: the RSS idle, at its peak, and after, with how many tasks are still
  kept (ListTasks) and the time taken. First, in this process, what one stored task costs
  per byte of message: one echo SendMessage of each ``--cost-sizes`` through
  ``A2AServer.handle``, with the bytes the store and the log report and the bytes
  ``tracemalloc`` sees held after the reply is gone.
  ``--baseline DIR`` measures a checkout's packages too, in the same run.
- ``cancel`` (issue 39, "an executor that swallows cancellation"): an agent that catches
  every cancellation and carries on, then CancelTask. Printed per server: the task's state
  and the server's CPU (of one core) over ``--window`` seconds, ``--settle`` seconds after
  the cancel. ``--baseline DIR`` measures a checkout's packages too.

Adding a section: a function that adds its subcommand to the parser (see
``add_subscriptions``) and a ``run`` function it points to; register it in ``SECTIONS``.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
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
#: Servers a section may be asked for beside SERVERS (not run unless named).
GRPC = "grpc"
MiB = 1 << 20


# --- the server process --------------------------------------------------------------------


def abuse_server(base_url: str) -> Any:
    """The A2AServer every section runs (in-memory backend, default bounds).

    Its agent answers ``big N`` with a task holding an artifact of ``N`` characters of text,
    then asks for input (the task stays open, so that it can be subscribed to); anything
    else is echoed back.
    """
    import anyio

    from a2a_core.server import A2AServer, InputRequired, TaskContext
    from a2a_core.types import AgentCapabilities, AgentCard, AgentSkill

    async def agent(ctx: TaskContext) -> Any:
        command, _, rest = ctx.text.partition(" ")
        if command == "forever":  # the shutdown section: an agent that never finishes
            await ctx.working()
            await anyio.sleep_forever()
        if command == "big":
            await ctx.artifact("x" * int(rest), name="big")
            return InputRequired("anything else?")
        if command == "stubborn":  # the cancel section: swallows every cancellation
            await ctx.working()
            while True:
                try:
                    await anyio.sleep(0.5)
                except anyio.get_cancelled_exc_class():
                    pass
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
    try:
        from a2a_core.server import StreamOptions

        # Every client of a section is this process, at one address: no limit per client.
        streams = StreamOptions(max_streams_per_peer=None)
    except (ImportError, TypeError):  # a --baseline checkout from before the limit
        return A2AServer(agent, card=card, base_url=base_url)
    return A2AServer(agent, card=card, base_url=base_url, streams=streams)


def serve(kind: str, port: int) -> None:
    """Run one server until killed (the ``serve`` subcommand)."""
    raise_fd_limit()
    base_url = f"http://{HOST}:{port}"
    server = abuse_server(base_url)
    if kind == GRPC:
        import asyncio

        from a2a_grpc import GrpcServer

        async def run_grpc() -> None:
            async with GrpcServer(server, host=HOST, port=port) as grpc_server:
                await grpc_server.wait()

        asyncio.run(run_grpc())
        return
    if kind == "aiohttp":
        from aiohttp import web

        from a2a_aiohttp import add_routes

        app = web.Application()
        add_routes(app, server)
        run_aiohttp(app, port)
        return
    import a2a_starlette

    stack = kind.removeprefix("starlette-")
    app = a2a_starlette.A2AStarlette(server)
    clean = getattr(a2a_starlette, "serve", None)  # absent from a --baseline before it
    if clean is None:
        run_uvicorn(app, port, stack)
        return
    loop = "uvloop" if stack == "httptools" else "asyncio"
    clean(app, server, host=HOST, port=port, http=stack, loop=loop, log_level="warning")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        port: int = sock.getsockname()[1]
        return port


@contextmanager
def running_server(
    kind: str, baseline: Path | None = None
) -> Iterator[tuple[int, subprocess.Popen[bytes]]]:
    """A server process of ``kind``, as ``(port, process)``, stopped on exit; ``baseline``:
    a checkout whose packages it imports instead (for a before/after)."""
    port = free_port()
    env = dict(os.environ)
    if baseline is not None:
        env["PYTHONPATH"] = os.pathsep.join(
            str(baseline / "packages" / package / "src")
            for package in ("a2a-core", "a2a-starlette", "a2a-aiohttp", "a2a-grpc")  # folders
        )
    process = subprocess.Popen(
        [sys.executable, __file__, "serve", kind, "--port", str(port)],
        stdout=subprocess.DEVNULL,
        env=env,
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
        yield port, process
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
    if kind == GRPC:
        return measure_grpc_subscriptions(size, count)
    with running_server(kind) as (port, process):
        pid = process.pid
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
        time.sleep(10)  # what the server still holds 10 s after its clients left
        rss_closed = rss_bytes(pid)
    return {
        "server": kind,
        "binding": binding,
        "subscribers": count,
        "rss_idle": rss_idle,
        "rss_task": rss_task,
        "rss_subscribed": rss_subscribed,
        "rss_closed": rss_closed,
        "streaming": streaming,
        "task_intact": intact,
    }


def measure_grpc_subscriptions(size: int, count: int) -> dict[str, Any]:
    """`measure_subscriptions` over gRPC: the calls are grpcio's, never read."""
    import grpc
    from a2a.types import a2a_pb2, a2a_pb2_grpc

    with running_server(GRPC) as (port, process):
        pid = process.pid
        rss_idle = settled_rss(pid)
        unlimited = [("grpc.max_receive_message_length", -1)]
        channel = grpc.insecure_channel(f"{HOST}:{port}", options=unlimited)
        service = a2a_pb2_grpc.A2AServiceStub(channel)
        part = a2a_pb2.Part(text=f"big {size}")
        message = a2a_pb2.Message(message_id="m1", role=a2a_pb2.ROLE_USER, parts=[part])
        task_id = service.SendMessage(a2a_pb2.SendMessageRequest(message=message)).task.id
        rss_task = settled_rss(pid)
        request = a2a_pb2.SubscribeToTaskRequest(id=task_id)
        calls = [service.SubscribeToTask(request) for _ in range(count)]  # never read
        rss_subscribed = settled_rss(pid)
        check = service.GetTask(a2a_pb2.GetTaskRequest(id=task_id))
        intact = len(check.artifacts[0].parts[0].text) == size
        intact = intact and check.status.state == a2a_pb2.TASK_STATE_INPUT_REQUIRED
        # Every call that was answered is readable: its snapshot comes once asked for.
        streaming = sum(next(call).task.id == task_id for call in calls)
        for call in calls:
            call.cancel()
        channel.close()
        time.sleep(10)
        rss_closed = rss_bytes(pid)
    return {
        "server": GRPC,
        "binding": GRPC,
        "subscribers": count,
        "rss_idle": rss_idle,
        "rss_task": rss_task,
        "rss_subscribed": rss_subscribed,
        "rss_closed": rss_closed,
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
        f"{'x task':>7} {'streams':>8} {'closed+10s':>11}"
    )
    for kind in args.servers.split(","):
        row = measure_subscriptions(kind, args.size, args.subscribers, args.binding)
        grown = row["rss_subscribed"] - row["rss_task"]
        per = grown / args.subscribers
        print(
            f"{kind:<20} {row['rss_idle'] / MiB:>7.0f}Mi {row['rss_task'] / MiB:>7.0f}Mi "
            f"{row['rss_subscribed'] / MiB:>9.0f}Mi {per / MiB:>7.2f}Mi {per / args.size:>7.2f} "
            f"{row['streaming']:>4}/{args.subscribers:<3} {row['rss_closed'] / MiB:>9.0f}Mi"
            + ("" if row["task_intact"] else "  TASK NOT INTACT")
        )


# --- section: shutdown ------------------------------------------------------------------------


def add_shutdown(sections: Any) -> None:
    parser = sections.add_parser(
        "shutdown", help="SIGTERM with agents that never finish: time to exit (issue 13)"
    )
    parser.add_argument("--servers", default=",".join(SERVERS), help="comma-separated kinds")
    parser.add_argument("--agents", type=int, default=20, help="blocking sends left running")
    parser.add_argument("--limit", type=float, default=60.0, help="seconds before kill -9")
    parser.add_argument(
        "--baseline", type=Path, help="a checkout to measure too (its packages), as before"
    )
    parser.set_defaults(run=run_shutdown)


def _read_all(sock: socket.socket) -> bytes:
    sock.settimeout(1.0)
    chunks = []
    try:
        while chunk := sock.recv(1 << 16):
            chunks.append(chunk)
    except OSError:  # reset, or nothing more within the second
        pass
    return b"".join(chunks)


def measure_shutdown(kind: str, agents: int, limit: float, baseline: Path | None) -> dict[str, Any]:
    with running_server(kind, baseline) as (port, process):
        sockets = []
        for n in range(agents):
            message = {"messageId": f"m{n}", "role": "ROLE_USER", "parts": [{"text": "forever"}]}
            sock = socket.create_connection((HOST, port))
            sock.sendall(rpc(port, "SendMessage", {"message": message}, request_id=n + 1))
            sockets.append(sock)
        stream = socket.create_connection((HOST, port))
        message = {"messageId": "ms", "role": "ROLE_USER", "parts": [{"text": "forever"}]}
        stream.sendall(rpc(port, "SendStreamingMessage", {"message": message}))
        list_working = rpc(port, "ListTasks", {"status": "TASK_STATE_WORKING"})
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:  # every agent is working
            working = json_body(exchange(port, list_working))["result"]["totalSize"]
            if working >= agents + 1:
                break
            time.sleep(0.05)
        process.send_signal(signal.SIGTERM)
        signalled = time.monotonic()
        try:
            process.wait(limit)
            took: float | None = time.monotonic() - signalled
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
            took = None
        replies = [_read_all(sock) for sock in sockets]
        streamed = _read_all(stream)
        for sock in (*sockets, stream):
            sock.close()
    answered = sum(b'"TASK_STATE_FAILED"' in r or b'"error"' in r for r in replies)
    return {
        "server": kind,
        "code": "baseline" if baseline is not None else "this tree",
        "seconds": took,
        "answered": answered,
        "stream_final": b"TASK_STATE_FAILED" in streamed or b'"error"' in streamed,
    }


def run_shutdown(args: argparse.Namespace) -> None:
    raise_fd_limit()
    print(
        f"SIGTERM with {args.agents} blocking sends and 1 stream whose agents never finish "
        f"(kill -9 after {args.limit:.0f} s)"
    )
    print(f"{'server':<20} {'code':<10} {'to exit':>10} {'answered':>9} {'stream end':>11}")
    trees: list[Path | None] = [None] if args.baseline is None else [args.baseline, None]
    for kind in args.servers.split(","):
        for tree in trees:
            row = measure_shutdown(kind, args.agents, args.limit, tree)
            took = row["seconds"]
            shown = f"{took:.2f} s" if took is not None else f"> {args.limit:.0f} s"
            end = "final" if row["stream_final"] else "cut"
            print(
                f"{kind:<20} {row['code']:<10} {shown:>10} "
                f"{row['answered']:>5}/{args.agents:<3} {end:>11}"
            )


# --- section: messages -----------------------------------------------------------------------


def add_messages(sections: Any) -> None:
    parser = sections.add_parser(
        "messages", help="SendMessage calls just under the body limit (issue 13)"
    )
    parser.add_argument("--servers", default=",".join(SERVERS), help="comma-separated kinds")
    parser.add_argument("--count", type=int, default=100, help="SendMessage calls")
    parser.add_argument("--body", type=int, default=8 * MiB - 64, help="bytes of each request body")
    parser.add_argument(
        "--cost-sizes",
        default="1024,65536,1048576,8388000",
        help="message sizes (bytes of text) of the in-process cost measurement; '' skips it",
    )
    parser.add_argument(
        "--baseline", type=Path, help="a checkout to measure too (its packages), as before"
    )
    parser.set_defaults(run=run_messages)


def send_request(port: int, n: int, body_size: int) -> bytes:
    """SendMessage number ``n`` (its own messageId), its body exactly ``body_size`` bytes."""
    empty = rpc(port, "SendMessage", message_params(n, ""), request_id=n)
    text = "x" * (body_size - (len(empty) - len(empty.partition(b"\r\n\r\n")[0]) - 4))
    request = rpc(port, "SendMessage", message_params(n, text), request_id=n)
    assert len(request.partition(b"\r\n\r\n")[2]) == body_size
    return request


def message_params(n: int, text: str) -> dict[str, Any]:
    return {"message": {"messageId": f"m{n}", "role": "ROLE_USER", "parts": [{"text": text}]}}


def peak_rss(pid: int) -> int:
    """The highest RSS the process has had (``VmHWM``)."""
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError("no VmHWM")


def measure_messages(
    kind: str, count: int, body_size: int, baseline: Path | None
) -> dict[str, Any]:
    with running_server(kind, baseline) as (port, process):
        pid = process.pid
        rss_idle = settled_rss(pid)
        started = time.monotonic()
        completed = 0
        for n in range(count):
            reply = json_body(exchange(port, send_request(port, n, body_size)))
            completed += reply["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
            del reply
        seconds = time.monotonic() - started
        rss_after = settled_rss(pid)
        listed = json_body(
            exchange(port, rpc(port, "ListTasks", {"historyLength": 0, "pageSize": 100}))
        )["result"]
        return {
            "server": kind,
            "code": "baseline" if baseline is not None else "this tree",
            "rss_idle": rss_idle,
            "rss_peak": peak_rss(pid),
            "rss_after": rss_after,
            "seconds": seconds,
            "completed": completed,
            "kept": listed["totalSize"],
        }


async def stored_cost(size: int) -> dict[str, int]:
    """What one more stored task costs: an echo SendMessage of ``size`` characters through
    ``A2AServer.handle``, after one of the same size (which grew the store's and the log's
    encoding buffers, a one-off); the bytes the store and the log report more, and the
    bytes ``tracemalloc`` sees held once the request is over."""
    import gc
    import tracemalloc

    from a2a_core.http import Headers, HttpRequest

    server = abuse_server("http://127.0.0.1:9999")
    headers = Headers([("content-type", "application/json"), ("a2a-version", "1.0")])

    def request(n: int) -> HttpRequest:
        params = message_params(n, "x" * size)
        body = json.dumps({"jsonrpc": "2.0", "id": n, "method": "SendMessage", "params": params})
        return HttpRequest("POST", "/", headers=headers, body=body.encode())

    async with server:
        store, log = server.backend.store, server.backend.event_log
        await server.handle(request(0))
        before = (store.encoded_bytes, log.encoded_bytes)
        gc.collect()
        tracemalloc.start()
        traced = tracemalloc.get_traced_memory()[0]
        reply = await server.handle(request(1))
        assert json.loads(reply.body)["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
        del reply
        gc.collect()
        held = tracemalloc.get_traced_memory()[0] - traced
        tracemalloc.stop()
        return {
            "size": size,
            "held": held,
            "store": store.encoded_bytes - before[0],
            "log": log.encoded_bytes - before[1],
        }


def run_messages(args: argparse.Namespace) -> None:
    import asyncio

    sizes = [int(s) for s in args.cost_sizes.split(",") if s]
    if sizes:
        print("One more echo SendMessage of N characters, in process: what it leaves held")
        print(f"{'N':>10} {'store':>11} {'log':>11} {'per byte':>9} {'traced':>11}")
        for size in sizes:
            row = asyncio.run(stored_cost(size))
            print(
                f"{size:>10,} {row['store']:>11,} {row['log']:>11,} "
                f"{(row['store'] + row['log']) / size:>9.2f} {row['held']:>11,}"
            )
        print("(traced: every allocation still held, the store's bookkeeping and indexes too)\n")
    print(
        f"{args.count} SendMessage calls of {args.body:,} bytes each (echo agent, distinct "
        "messageIds), RSS of the server"
    )
    print(
        f"{'server':<20} {'code':<10} {'idle':>9} {'peak':>9} {'after':>9} {'kept':>5} "
        f"{'done':>5} {'time':>7}"
    )
    trees: list[Path | None] = [None] if args.baseline is None else [args.baseline, None]
    for kind in args.servers.split(","):
        for tree in trees:
            row = measure_messages(kind, args.count, args.body, tree)
            print(
                f"{kind:<20} {row['code']:<10} {row['rss_idle'] / MiB:>7.0f}Mi "
                f"{row['rss_peak'] / MiB:>7.0f}Mi {row['rss_after'] / MiB:>7.0f}Mi "
                f"{row['kept']:>5} {row['completed']:>5} {row['seconds']:>6.1f}s"
            )


# --- main -------------------------------------------------------------------------------------

# --- section: cancel -------------------------------------------------------------------------


def add_cancel(sections: Any) -> None:
    parser = sections.add_parser(
        "cancel", help="an agent that swallows cancellation, after CancelTask (issue 39)"
    )
    parser.add_argument("--servers", default=SERVERS[0], help="comma-separated kinds")
    parser.add_argument("--settle", type=float, default=7.0, help="seconds after the cancel")
    parser.add_argument("--window", type=float, default=5.0, help="seconds of CPU measured")
    parser.add_argument(
        "--baseline", type=Path, help="a checkout to measure too (its packages), as before"
    )
    parser.set_defaults(run=run_cancel)


def cpu_seconds(pid: int) -> float:
    """User and system CPU time of the process so far (``/proc/PID/stat``)."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def measure_cancel(
    kind: str, settle: float, window: float, baseline: Path | None
) -> dict[str, Any]:
    with running_server(kind, baseline) as (port, process):
        message = message_params(0, "stubborn")
        params = {**message, "configuration": {"returnImmediately": True}}
        task = json_body(exchange(port, rpc(port, "SendMessage", params)))["result"]["task"]
        time.sleep(0.5)
        canceled = json_body(exchange(port, rpc(port, "CancelTask", {"id": task["id"]})))
        time.sleep(settle)  # past ExecutionGuards.cancel_grace (5 s): cut loose, if it can be
        before = cpu_seconds(process.pid)
        time.sleep(window)
        used = cpu_seconds(process.pid) - before
        return {
            "server": kind,
            "code": "baseline" if baseline is not None else "this tree",
            "state": canceled["result"]["status"]["state"],
            "cpu": used / window,
        }


def run_cancel(args: argparse.Namespace) -> None:
    print(
        f"An agent that catches every cancellation and goes on, {args.settle:g} s after "
        f"CancelTask: the server's CPU over {args.window:g} s"
    )
    print(f"{'server':<20} {'code':<10} {'task':<22} {'CPU':>8}")
    for kind in args.servers.split(","):
        for baseline in (args.baseline, None) if args.baseline else (None,):
            row = measure_cancel(kind, args.settle, args.window, baseline)
            print(f"{kind:<20} {row['code']:<10} {row['state']:<22} {100 * row['cpu']:>7.1f}%")


#: Every section: a function adding its subcommand (which sets ``run``).
SECTIONS: tuple[Callable[[Any], None], ...] = (
    add_subscriptions,
    add_shutdown,
    add_messages,
    add_cancel,
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    sections = parser.add_subparsers(dest="section", required=True)
    for add in SECTIONS:
        add(sections)
    server = sections.add_parser("serve", help="run one server (used by the sections)")
    server.add_argument("kind", choices=(*SERVERS, GRPC))
    server.add_argument("--port", type=int, required=True)
    args = parser.parse_args()
    if args.section == "serve":
        serve(args.kind, args.port)
    else:
        args.run(args)


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    main()
