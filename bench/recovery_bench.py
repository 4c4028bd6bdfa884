"""How fast lost work goes on, and what a checkpoint costs (docs/durability.md).

    uv run python bench/recovery_bench.py [--postgres URL] [--redis URL] [--mysql URL]
        [--lease-ttl 2,10] [--tasks 5] [--rounds 3] [--checkpoints 200]

Two replicas of ``examples/durable.py`` (``--recovery retry``) share a backend
(PostgreSQL, then Redis). Each round starts ``--tasks`` long tasks on replica A, follows
each one from replica B (SubscribeToTask over SSE), and then:

1. **Crash**: ``kill -9`` of A. Measured, on B's subscribers: from the kill to the WORKING
   update that says attempt 2 starts (the claim), and to the new attempt's first artifact
   chunk; for each ``--lease-ttl``.
2. **Hand-off**: SIGTERM of A, whose ``--shutdown-grace`` is 0.5 s. Measured: from the end
   of the grace (the signal plus 0.5 s) to the claim and to the first chunk on B.

3. **Checkpoint**: one server in process per backend (in memory, SQLite, and the servers
   given), an agent calling ``ctx.checkpoint({"next": i})`` ``--checkpoints`` times:
   the median and p99 time of one call.

Prints a table per measurement, and all of it as JSON at the end. Everything runs on
127.0.0.1; on PostgreSQL and MySQL a database is created for the run and dropped at the
end, and the Redis keys it wrote (a fresh prefix) are deleted. Nothing is pinned: the
replicas spend their time waiting on the backend.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import statistics
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import httpx
import sqlalchemy as sa
from harness import ServerProcess, admin, free_port

ROOT = Path(__file__).resolve().parents[1]
DURABLE = ROOT / "examples" / "durable.py"
V1 = {"A2A-Version": "1.0", "Content-Type": "application/json"}
GRACE = 0.5


# --- replicas ------------------------------------------------------------------------------


def replica(backend: list[str], name: str, lease_ttl: float) -> ServerProcess:
    port = free_port()
    command = [
        sys.executable,
        str(DURABLE),
        "--port",
        str(port),
        "--log-level",
        "warning",
        *backend,
        "--recovery",
        "retry",
        "--steps",
        "1000",
        "--step-seconds",
        "0.05",
        "--lease-ttl",
        str(lease_ttl),
        "--shutdown-grace",
        str(GRACE),
        "--replica-id",
        name,
    ]
    return ServerProcess(command, port, log_prefix=f"recovery-{name}", name=f"replica {name}")


async def send(client: httpx.AsyncClient, url: str) -> str:
    message = {"messageId": uuid.uuid4().hex, "role": "ROLE_USER", "parts": [{"text": "go"}]}
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "SendMessage",
        "params": {"message": message, "configuration": {"returnImmediately": True}},
    }
    reply = (await client.post(url + "/", json=body, headers=V1)).json()
    task_id: str = reply["result"]["task"]["id"]
    return task_id


async def follow(url: str, task_id: str, seen: dict[str, float], ready: asyncio.Event) -> None:
    """Record when the claim of attempt 2 and its first chunk arrive (``time.monotonic``)."""
    body = {"jsonrpc": "2.0", "id": 1, "method": "SubscribeToTask", "params": {"id": task_id}}
    async with (
        httpx.AsyncClient(timeout=120) as client,
        client.stream("POST", url + "/", json=body, headers=V1) as reply,
    ):
        ready.set()
        async for line in reply.aiter_lines():
            if not line.startswith("data:"):
                continue
            result = json.loads(line[5:]).get("result", {})
            status = result.get("statusUpdate", {}).get("status", {})
            parts = status.get("message", {}).get("parts", [])
            text = "".join(p.get("text", "") for p in parts)
            if text.startswith("Attempt 2 starts") and "claim" not in seen:
                seen["claim"] = time.monotonic()
            chunk = result.get("artifactUpdate", {}).get("artifact", {}).get("parts", [])
            if chunk and "attempt 2" in chunk[0].get("text", ""):
                seen["chunk"] = time.monotonic()
                return


async def one_round(
    backend: list[str], lease_ttl: float, tasks: int, how: str
) -> list[dict[str, float]]:
    """Start ``tasks`` on A, follow them from B, lose A (``how``: crash or handoff)."""
    a = replica(backend, f"a-{uuid.uuid4().hex[:6]}", lease_ttl)
    b = replica(backend, f"b-{uuid.uuid4().hex[:6]}", lease_ttl)
    try:
        async with httpx.AsyncClient(timeout=30) as client:
            task_ids = [await send(client, a.url) for _ in range(tasks)]
        seen: list[dict[str, float]] = [{} for _ in task_ids]
        ready = [asyncio.Event() for _ in task_ids]
        followers = [
            asyncio.create_task(follow(b.url, t, s, r))
            for t, s, r in zip(task_ids, seen, ready, strict=True)
        ]
        await asyncio.gather(*(r.wait() for r in ready))
        await asyncio.sleep(0.5)  # every task at work
        start = time.monotonic()
        if how == "crash":
            a.kill()
        else:
            os.kill(a.process.pid, signal.SIGTERM)
            start += GRACE  # measured from the end of the grace
        await asyncio.wait_for(asyncio.gather(*followers), timeout=lease_ttl * 3 + 30)
        return [{k: v - start for k, v in s.items()} for s in seen]
    finally:
        a.kill()
        b.stop()


# --- checkpoints ---------------------------------------------------------------------------


async def checkpoint_cost(backend: Any, count: int) -> list[float]:
    """Seconds of each ``ctx.checkpoint`` call, in process."""
    from a2a_core.server import A2AServer, TaskContext
    from a2a_core.types import AgentCapabilities, AgentCard, AgentSkill

    times: list[float] = []

    async def agent(ctx: TaskContext) -> str:
        await ctx.working()
        for i in range(count):
            began = time.perf_counter()
            await ctx.checkpoint({"next": i, "notes": "x" * 64})
            times.append(time.perf_counter() - began)
        return "done"

    card = AgentCard(
        name="bench",
        description="checkpoints",
        supported_interfaces=[],
        version="1",
        capabilities=AgentCapabilities(streaming=True),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[AgentSkill(id="s", name="s", description="s", tags=["s"])],
    )
    server = A2AServer(agent, card=card, base_url="http://127.0.0.1", backend=backend)
    from a2a_core.http import Headers, HttpRequest

    body = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "SendMessage",
            "params": {
                "message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "go"}]}
            },
        }
    ).encode()
    async with server:
        pairs = (("a2a-version", "1.0"), ("content-type", "application/json"))
        request = HttpRequest("POST", "/", headers=Headers(pairs), body=body)
        await server.handle(request)
    return times


def backends(args: argparse.Namespace, prefix: str) -> list[tuple[str, Any]]:
    from a2a_core.server import InMemoryBackend
    from a2a_sql import SqlBackend

    made: list[tuple[str, Any]] = [
        ("memory", InMemoryBackend()),
        ("sqlite", SqlBackend(f"sqlite+aiosqlite:///{args.scratch}/bench.db", prefix=prefix)),
    ]
    if args.postgres:
        made.append(("postgresql", SqlBackend(args.postgres, prefix=prefix, create_schema=True)))
    if args.mysql:
        made.append(("mysql", SqlBackend(args.mysql, prefix=prefix, create_schema=True)))
    if args.redis:
        from a2aserve_redis import RedisBackend

        made.append(("redis", RedisBackend(args.redis, prefix=f"bench-{prefix}:")))
    return made


# --- the run -------------------------------------------------------------------------------


def summary(values: list[float]) -> str:
    if not values:
        return "-"
    ordered = sorted(values)
    p99 = ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))]
    return f"median {statistics.median(ordered):.3f}, max {ordered[-1]:.3f} (p99 {p99:.3f})"


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--postgres", default="postgresql+asyncpg://postgres@127.0.0.1:5432/postgres"
    )
    parser.add_argument("--redis", default="redis://127.0.0.1:6379/15")
    parser.add_argument("--mysql", default="mysql+asyncmy://root@127.0.0.1:3306/test")
    parser.add_argument("--lease-ttl", default="2,10")
    parser.add_argument("--tasks", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--checkpoints", type=int, default=200)
    parser.add_argument("--scratch", default="/tmp")
    args = parser.parse_args()
    prefix = f"rb{uuid.uuid4().hex[:8]}_"
    made: list[tuple[str, str]] = []  # (server URL, database) created for this run
    for option in ("postgres", "mysql"):
        server = getattr(args, option)
        if server:
            await admin(server, f"CREATE DATABASE {prefix}db")
            made.append((server, f"{prefix}db"))
            setattr(args, option, str(sa.make_url(server).set(database=f"{prefix}db")))
    try:
        await run(args, prefix)
    finally:
        for server, database in made:
            force = " WITH (FORCE)" if server.startswith("postgresql") else ""
            await admin(server, f"DROP DATABASE {database}{force}")
        if args.redis:
            from redis.asyncio import Redis

            client = Redis.from_url(args.redis)
            keys = [key async for key in client.scan_iter(match=f"bench-{prefix}:*")]
            if keys:
                await client.delete(*keys)
            await client.aclose()


async def run(args: argparse.Namespace, prefix: str) -> None:
    results: dict[str, Any] = {}
    shared = []
    if args.postgres:
        shared.append(("postgresql", ["--sql", args.postgres, "--sql-prefix", prefix]))
    if args.redis:
        shared.append(("redis", ["--redis", args.redis, "--redis-prefix", f"bench-{prefix}:"]))
    if args.postgres:
        from a2a_sql import upgrade

        await upgrade(args.postgres, prefix)
    for name, backend in shared:
        for lease in (float(x) for x in args.lease_ttl.split(",")):
            for how in ("crash", "handoff"):
                if how == "handoff" and lease != float(args.lease_ttl.split(",")[0]):
                    continue  # a hand-off does not wait for a lease
                claims: list[float] = []
                chunks: list[float] = []
                for _ in range(args.rounds):
                    for seen in await one_round(backend, lease, args.tasks, how):
                        claims.append(seen["claim"])
                        chunks.append(seen["chunk"])
                key = f"{name} {how}" + (f" lease {lease:g} s" if how == "crash" else "")
                results[key] = {"claim": claims, "first_chunk": chunks}
                print(f"{key:32} claim: {summary(claims)} s; first chunk: {summary(chunks)} s")
    for name, backend in backends(args, f"{prefix}cp_"):  # tables of their own
        times = await checkpoint_cost(backend, args.checkpoints)
        micros = [t * 1e6 for t in times]
        results[f"checkpoint {name}"] = {
            "median_us": statistics.median(micros),
            "p99_us": sorted(micros)[round(0.99 * (len(micros) - 1))],
        }
        print(
            f"checkpoint {name:12} median {statistics.median(micros):8.0f} µs, "
            f"p99 {sorted(micros)[round(0.99 * (len(micros) - 1))]:8.0f} µs"
        )
    print(json.dumps(results))


if __name__ == "__main__":
    asyncio.run(main())
