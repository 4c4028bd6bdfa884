"""Cross-replica event latency of the SQL backend on PostgreSQL (``LISTEN/NOTIFY``).

    uv run python bench/sql_replicas.py [--postgres postgresql+asyncpg://postgres@127.0.0.1/postgres]
        [--events 1000] [--interval 0.005] [--lease-ttl 2] [--no-pre-ping] [--pin]

Two server processes share one PostgreSQL database (created for the run, dropped at the
end): replica A on Starlette, replica B on aiohttp (``--adapters`` to change). Measured:

1. **Event latency**, publish to delivery: an agent on A emits ``--events`` artifact chunks,
   each carrying the wall-clock time it was emitted (taken before the write); a subscriber
   (SubscribeToTask over SSE) reads them, and the latency of each is its arrival time minus
   that stamp. Cases: the subscriber on the *other* replica (B: woken by ``NOTIFY``), on
   the same replica (A: woken in process), and the in-memory backend on one server (the
   floor of this machine: HTTP, SSE and the runtime without a database). Target:
   cross-replica p99 under 10 ms.
2. **Failover**: ``kill -9`` of A while it runs a task that a subscriber on B follows; the
   time from the kill to the FAILED final event on B (``--lease-ttl``; 0 skips it).

Nothing is pinned by default: the replicas spend an event waiting on PostgreSQL, and
pinning both to one core (``--pin``: core 0 with ``taskset``) only makes them queue behind
each other. On a shared machine the numbers move with its load: the in-memory case, run
in the same minutes, shows how much of an event's time is the machine's.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import time
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from harness import ServerProcess, admin, free_port, pinned

from a2a_core.server import ExecutionGuards, StreamOptions

HERE = Path(__file__).resolve()
V1 = {"A2A-Version": "1.0", "Content-Type": "application/json"}


# --- the server under test (run as a subprocess: ``sql_replicas.py serve ...``) -----------


def serve(args: argparse.Namespace) -> None:
    """One replica: the tick / wait agent on the SQL backend."""
    import anyio

    from a2a_core.server import A2AServer, TaskContext
    from a2a_core.types import AgentCapabilities, AgentCard, AgentSkill
    from a2a_sql import SqlBackend

    async def agent(ctx: TaskContext) -> AsyncIterator[str]:
        command, _, rest = ctx.text.partition(" ")
        if command == "tick":  # tick <count> <interval>: chunks stamped with their time
            count, interval = rest.split()
            for _ in range(int(count)):
                await anyio.sleep(float(interval))
                yield str(time.time_ns())
        elif command == "wait":
            await ctx.working("waiting")
            await anyio.sleep_forever()
        else:
            yield ctx.text

    options: dict[str, Any] = {}
    if args.url != "memory":  # else the in-memory default
        options["backend"] = SqlBackend(
            args.url,
            prefix=args.prefix,
            replica_id=args.replica_id,
            lease_ttl=args.lease_ttl,
            reap_interval=min(0.5, args.lease_ttl / 4),
            engine_options={"pool_pre_ping": not args.no_pre_ping},
        )
    card = AgentCard(
        name="Bench",
        description="SQL replicas benchmark agent",
        supported_interfaces=[],
        version="1.0.0",
        capabilities=AgentCapabilities(streaming=True),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[AgentSkill(id="s", name="S", description="bench", tags=["bench"])],
    )
    url = f"http://127.0.0.1:{args.port}"
    server = A2AServer(
        agent,
        card=card,
        base_url=url,
        **options,
        streams=StreamOptions(keep_alive_interval=30),
        guards=ExecutionGuards(shutdown_grace=0.5),
    )
    if args.adapter == "aiohttp":
        from aiohttp import web

        from a2a_aiohttp import add_routes

        app = web.Application()
        add_routes(app, server)
        web.run_app(app, host="127.0.0.1", port=args.port, print=None, access_log=None)
    else:
        from a2a_starlette import A2AStarlette
        from a2a_starlette import serve as serve_starlette

        serve_starlette(
            A2AStarlette(server), server, host="127.0.0.1", port=args.port, log_level="warning"
        )


# --- harness -----------------------------------------------------------------------------


PIN = False  # --pin


class Server(ServerProcess):
    def __init__(
        self, adapter: str, url: str, prefix: str, *, lease_ttl: float, no_pre_ping: bool = False
    ) -> None:
        port = free_port()
        command = [
            *(pinned(0) if PIN else []), sys.executable, str(HERE), "serve",
            "--adapter", adapter, "--port", str(port), "--url", url,
            "--prefix", prefix, "--replica-id", f"{adapter}-{port}",
            "--lease-ttl", str(lease_ttl), *(["--no-pre-ping"] if no_pre_ping else []),
        ]  # fmt: skip
        super().__init__(command, port, log_prefix="sql-replicas-", name="server")


def send_body(text: str) -> bytes:
    params: dict[str, Any] = {
        "message": {"messageId": uuid.uuid4().hex, "role": "ROLE_USER", "parts": [{"text": text}]},
        "configuration": {"returnImmediately": True},
    }
    return json.dumps(
        {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": params}
    ).encode()


async def rpc(url: str, body: bytes) -> Any:
    import httpx

    async with httpx.AsyncClient(timeout=30) as client:
        response = await client.post(url + "/", content=body, headers=V1)
        return response.json()["result"]


async def sse_frames(url: str, method: str, params: Any) -> AsyncIterator[dict[str, Any]]:
    """The data of each frame of a streamed JSON-RPC response, as it arrives."""
    import httpx

    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
    async with (
        httpx.AsyncClient(timeout=None) as client,
        client.stream("POST", url + "/", content=body, headers=V1) as response,
    ):
        buffer = b""
        async for chunk in response.aiter_raw():
            buffer += chunk
            while b"\n\n" in buffer:
                frame, buffer = buffer.split(b"\n\n", 1)
                for line in frame.split(b"\n"):
                    if line.startswith(b"data:"):
                        yield json.loads(line[5:])


async def latency(
    publisher: Server, subscriber: Server, events: int, interval: float
) -> list[float]:
    """Milliseconds from each chunk's emission on ``publisher`` to its arrival from
    ``subscriber`` (SubscribeToTask)."""
    task = await rpc(publisher.url, send_body(f"tick {events} {interval}"))
    samples: list[float] = []
    async for data in sse_frames(subscriber.url, "SubscribeToTask", {"id": task["task"]["id"]}):
        update = data.get("result", {}).get("artifactUpdate")
        if update is not None:
            stamp = int(update["artifact"]["parts"][0]["text"])
            samples.append((time.time_ns() - stamp) / 1e6)
    return samples[5:]  # the first few include the subscription's own start


async def failover(url: str, prefix: str, adapters: list[str], lease_ttl: float) -> float:
    """Seconds from ``kill -9`` of the replica running a task to the final event on the other."""
    a = Server(adapters[0], url, prefix, lease_ttl=lease_ttl)
    b = Server(adapters[1], url, prefix, lease_ttl=lease_ttl)
    try:
        task = await rpc(a.url, send_body("wait"))
        frames = sse_frames(b.url, "SubscribeToTask", {"id": task["task"]["id"]})
        await anext(frames)
        await asyncio.sleep(lease_ttl * 0.8)
        a.kill()
        killed = time.monotonic()
        async for data in frames:
            status = data.get("result", {}).get("statusUpdate", {}).get("status", {})
            if status.get("state") == "TASK_STATE_FAILED":
                return time.monotonic() - killed
        raise SystemExit("the subscription ended without the final event")
    finally:
        a.kill()
        a.stop()
        b.stop()


def describe(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)

    def pick(q: float) -> float:
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))]

    return {
        "n": len(ordered),
        "p50": pick(0.50),
        "p90": pick(0.90),
        "p99": pick(0.99),
        "max": ordered[-1],
        "mean": statistics.fmean(ordered),
    }


async def run(args: argparse.Namespace) -> dict[str, Any]:
    import sqlalchemy as sa

    from a2a_sql import upgrade

    adapters = args.adapters.split(",")
    name = f"a2a_bench_{uuid.uuid4().hex[:8]}"
    await admin(args.postgres, f"CREATE DATABASE {name}")
    url = str(sa.make_url(args.postgres).set(database=name))
    prefix = "a2a_"
    results: dict[str, Any] = {
        "adapters": adapters,
        "cores": os.cpu_count(),
        "events": args.events,
        "interval": args.interval,
        "pool_pre_ping": not args.no_pre_ping,
    }
    try:
        await upgrade(url, prefix)
        a = Server(adapters[0], url, prefix, lease_ttl=10.0, no_pre_ping=args.no_pre_ping)
        b = Server(adapters[1], url, prefix, lease_ttl=10.0, no_pre_ping=args.no_pre_ping)
        memory = Server(adapters[0], "memory", prefix, lease_ttl=10.0)
        try:
            for case, publisher, subscriber in (
                ("latency_cross_replica", a, b),
                ("latency_same_replica", a, a),
                ("latency_memory_same_replica", memory, memory),  # the floor: no database
            ):
                samples = await latency(publisher, subscriber, args.events, args.interval)
                results[case] = row = describe(samples)
                print(
                    f"{case}: p50 {row['p50']:.2f} ms, p90 {row['p90']:.2f} ms, "
                    f"p99 {row['p99']:.2f} ms, max {row['max']:.2f} ms (n={row['n']})",
                    flush=True,
                )
        finally:
            a.stop()
            b.stop()
            memory.stop()
        if args.lease_ttl > 0:
            took = await failover(url, prefix, adapters, args.lease_ttl)
            results["failover"] = {"lease_ttl": args.lease_ttl, "kill_to_final_event_s": took}
            print(f"kill -9 to final event: {took:.2f} s (lease_ttl {args.lease_ttl} s)")
    finally:
        await admin(args.postgres, f"DROP DATABASE {name} WITH (FORCE)")
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command")
    server = sub.add_parser("serve", help="(internal) run one replica")
    server.add_argument("--adapter", default="starlette")
    server.add_argument("--port", type=int, required=True)
    server.add_argument("--url", required=True)
    server.add_argument("--prefix", default="a2a_")
    server.add_argument("--replica-id", required=True)
    server.add_argument("--lease-ttl", type=float, default=10.0)
    server.add_argument("--no-pre-ping", action="store_true")
    parser.add_argument(
        "--postgres",
        default=os.environ.get(
            "A2A_TEST_POSTGRES_URL", "postgresql+asyncpg://postgres@127.0.0.1:5432/postgres"
        ),
        help="a PostgreSQL server (a database is created there for the run, then dropped)",
    )
    parser.add_argument("--adapters", default="starlette,aiohttp", help="replica A,B")
    parser.add_argument("--events", type=int, default=1000, help="events per latency case")
    parser.add_argument("--interval", type=float, default=0.005, help="seconds between events")
    parser.add_argument("--lease-ttl", type=float, default=2.0, help="failover case (0: skip it)")
    parser.add_argument(
        "--no-pre-ping",
        action="store_true",
        help="engine without pool_pre_ping (saves a round trip per query; see the docs)",
    )
    parser.add_argument("--pin", action="store_true", help="pin the servers to core 0")
    parser.add_argument("--json", help="also write the results to this file")
    args = parser.parse_args()
    if args.command == "serve":
        serve(args)
        return
    global PIN
    PIN = args.pin
    results = asyncio.run(run(args))
    print(json.dumps(results, indent=2))
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
