"""Benchmarks of the Redis backend (a2aserve-redis) against the in-memory default.

    uv run python bench/redis_bench.py [--redis redis://127.0.0.1:6379/15] [--duration 10]

Three measurements, each printed as a table row (and all of them as JSON at the end):

1. **SendMessage requests/s**, one server process (Starlette under uvicorn, or aiohttp with
   ``--adapter aiohttp``) with the echo agent, in-memory backend vs Redis backend; load
   from ``wrk`` (POST of a v1.0 JSON-RPC SendMessage, ``--connections`` keep-alive
   connections). Each request creates a task, records the message, an artifact and the
   completion: with Redis that is the task create, three saves, four appends, the close
   and three push-config lookups, on the same Redis as the other replicas would use.
2. **Event latency**, publish to delivery: an agent on replica A emits ``--events`` artifact
   chunks, each carrying the wall-clock time it was emitted (taken before the append);
   a subscriber (SubscribeToTask over SSE) reads them, and the latency of each is its
   arrival time minus that stamp. Three cases: Redis with the subscriber on the *other*
   replica (B), Redis on the same replica, in-memory on the same replica (the floor).
3. **Failover**: ``kill -9`` of replica A while it runs a task that a subscriber on B
   follows; the time from the kill to the FAILED final event on B (``--lease-ttl``).

Processes are pinned with ``taskset`` when there are at least two cores: servers on core 0,
the load generator on core 1 (Redis itself is not pinned). Every key the benchmark writes is
under a fresh prefix and deleted at the end.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from harness import FRESH_IDS_LUA, MESSAGE_ID, ServerProcess, free_port, pinned

from a2a_core.server import StreamOptions

HERE = Path(__file__).resolve()
V1 = {"A2A-Version": "1.0", "Content-Type": "application/json"}


# --- the server under test (run as a subprocess: ``redis_bench.py serve ...``) -------------


def serve(args: argparse.Namespace) -> None:
    """One server process: the echo / tick / wait agent on the chosen backend and adapter."""
    import anyio

    from a2a_core.server import A2AServer, TaskContext
    from a2a_core.types import AgentCapabilities, AgentCard, AgentSkill

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
    if args.redis:
        from a2aserve_redis import RedisBackend

        backend = RedisBackend(
            args.redis,
            prefix=args.prefix,
            lease_ttl=args.lease_ttl,
            reap_interval=min(0.5, args.lease_ttl / 4),
        )
        options = {"backend": backend}
    card = AgentCard(
        name="Bench",
        description="Redis benchmark agent",
        supported_interfaces=[],
        version="1.0.0",
        capabilities=AgentCapabilities(streaming=True, push_notifications=True),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[AgentSkill(id="s", name="S", description="bench", tags=["bench"])],
    )
    url = f"http://127.0.0.1:{args.port}"
    server = A2AServer(
        agent, card=card, base_url=url, **options, streams=StreamOptions(keep_alive_interval=30)
    )
    if args.adapter == "aiohttp":
        from aiohttp import web

        from a2a_aiohttp import add_routes

        app = web.Application()
        add_routes(app, server)
        web.run_app(app, host="127.0.0.1", port=args.port, print=None, access_log=None)
    else:
        import uvicorn

        from a2a_starlette import A2AStarlette

        uvicorn.run(
            A2AStarlette(server),
            host="127.0.0.1",
            port=args.port,
            log_level="warning",
            access_log=False,
        )


# --- harness -----------------------------------------------------------------------------


class Server(ServerProcess):
    def __init__(
        self, adapter: str, redis: str | None, prefix: str, *, lease_ttl: float = 10.0
    ) -> None:
        port = free_port()
        command = [
            *pinned(0),
            sys.executable,
            str(HERE),
            "serve",
            "--adapter", adapter,
            "--port", str(port),
            "--prefix", prefix,
            "--lease-ttl", str(lease_ttl),
        ]  # fmt: skip
        if redis:
            command += ["--redis", redis]
        super().__init__(command, port, log_prefix="redis-bench-", name="server")


def send_body(text: str, *, immediately: bool = False, message_id: str = "") -> bytes:
    params: dict[str, Any] = {
        "message": {
            "messageId": message_id or uuid.uuid4().hex,
            "role": "ROLE_USER",
            "parts": [{"text": text}],
        }
    }
    if immediately:
        params["configuration"] = {"returnImmediately": True}
    return json.dumps(
        {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": params}
    ).encode()


def wrk(url: str, duration: float, connections: int) -> dict[str, float]:
    """SendMessage requests/s from wrk (one thread), after a short warm-up."""
    body = send_body("hello", message_id=MESSAGE_ID).decode()  # a new one per request
    headers = "".join(f'wrk.headers["{k}"] = "{v}"\n' for k, v in V1.items())
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as script:
        script.write(
            f'wrk.method = "POST"\nwrk.body = {json.dumps(body)}\n{headers}{FRESH_IDS_LUA}'
        )
    try:
        base = [*pinned(1), "wrk", "-t1", f"-c{connections}", "-s", script.name, "--latency"]
        subprocess.run([*base, "-d2s", url + "/"], check=True, capture_output=True)
        out = subprocess.run(
            [*base, f"-d{duration:.0f}s", url + "/"], check=True, capture_output=True, text=True
        ).stdout
    finally:
        os.unlink(script.name)
    rate = float(next(line for line in out.splitlines() if "Requests/sec" in line).split()[1])
    errors = sum(int(line.split()[-1]) for line in out.splitlines() if "Non-2xx" in line)
    percentiles = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] in ("50%", "99%"):
            percentiles[parts[0]] = parts[1]
    return {"rps": rate, "errors": errors, **percentiles}  # type: ignore[dict-item]


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


async def rpc(url: str, body: bytes) -> Any:
    import httpx

    async with httpx.AsyncClient(timeout=30) as client:
        response = await client.post(url + "/", content=body, headers=V1)
        return response.json()["result"]


async def latency(
    publisher: Server, subscriber: Server, events: int, interval: float
) -> list[float]:
    """Milliseconds from each chunk's emission on ``publisher`` to its arrival from
    ``subscriber`` (SubscribeToTask)."""
    task = await rpc(publisher.url, send_body(f"tick {events} {interval}", immediately=True))
    task_id = task["task"]["id"]
    samples: list[float] = []
    async for data in sse_frames(subscriber.url, "SubscribeToTask", {"id": task_id}):
        update = data.get("result", {}).get("artifactUpdate")
        if update is not None:
            stamp = int(update["artifact"]["parts"][0]["text"])
            samples.append((time.time_ns() - stamp) / 1e6)
    return samples[5:]  # the first few include the subscription's own start


async def failover(redis: str, prefix: str, adapter: str, lease_ttl: float) -> float:
    """Seconds from ``kill -9`` of the replica running a task to the final event on the other."""
    a = Server(adapter, redis, prefix, lease_ttl=lease_ttl)
    b = Server(adapter, redis, prefix, lease_ttl=lease_ttl)
    try:
        task = await rpc(a.url, send_body("wait", immediately=True))
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


def delete_prefix(url: str, prefix: str) -> None:
    import redis

    client = redis.Redis.from_url(url)
    try:
        keys = list(client.scan_iter(match=prefix + "*", count=1000))
        for start in range(0, len(keys), 500):
            client.delete(*keys[start : start + 500])
    finally:
        client.close()


async def run(args: argparse.Namespace) -> dict[str, Any]:
    prefix = f"a2a-bench:{uuid.uuid4().hex[:8]}:"
    results: dict[str, Any] = {"adapter": args.adapter, "cores": os.cpu_count()}
    try:
        # 1. SendMessage requests/s, same adapter, memory vs Redis.
        for name, redis in (("memory", None), ("redis", args.redis)):
            server = Server(args.adapter, redis, prefix)
            try:
                results[f"send_{name}"] = wrk(server.url, args.duration, args.connections)
            finally:
                server.stop()
            print(f"SendMessage, {name:6}: {results[f'send_{name}']}", flush=True)
        results["send_ratio"] = results["send_redis"]["rps"] / results["send_memory"]["rps"]
        print(f"Redis / memory: {results['send_ratio']:.0%}", flush=True)

        # 2. Event latency: cross-replica, same replica, in memory.
        a = Server(args.adapter, args.redis, prefix)
        b = Server(args.adapter, args.redis, prefix)
        memory = Server(args.adapter, None, prefix)
        try:
            for name, publisher, subscriber in (
                ("latency_redis_cross_replica", a, b),
                ("latency_redis_same_replica", a, a),
                ("latency_memory_same_replica", memory, memory),
            ):
                samples = await latency(publisher, subscriber, args.events, args.interval)
                results[name] = describe(samples)
                row = results[name]
                print(
                    f"{name}: p50 {row['p50']:.2f} ms, p90 {row['p90']:.2f} ms, "
                    f"p99 {row['p99']:.2f} ms, max {row['max']:.2f} ms (n={row['n']})",
                    flush=True,
                )
        finally:
            for server in (a, b, memory):
                server.stop()

        # 3. Failover.
        if args.lease_ttl > 0:
            took = await failover(args.redis, prefix, args.adapter, args.lease_ttl)
            results["failover"] = {"lease_ttl": args.lease_ttl, "kill_to_final_event_s": took}
            print(f"kill -9 to final event: {took:.2f} s (lease_ttl {args.lease_ttl} s)")
    finally:
        delete_prefix(args.redis, prefix)
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command")
    server = sub.add_parser("serve", help="(internal) run one server under test")
    server.add_argument("--adapter", default="starlette")
    server.add_argument("--port", type=int, required=True)
    server.add_argument("--redis")
    server.add_argument("--prefix", default="a2a-bench:")
    server.add_argument("--lease-ttl", type=float, default=10.0)
    parser.add_argument("--redis", default="redis://127.0.0.1:6379/15")
    parser.add_argument("--adapter", choices=("starlette", "aiohttp"), default="starlette")
    parser.add_argument("--duration", type=float, default=10.0, help="seconds per wrk run")
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--events", type=int, default=1000, help="events per latency case")
    parser.add_argument("--interval", type=float, default=0.005, help="seconds between events")
    parser.add_argument("--lease-ttl", type=float, default=10.0, help="failover case (0: skip it)")
    parser.add_argument("--json", help="also write the results to this file")
    args = parser.parse_args()
    if args.command == "serve":
        serve(args)
        return
    if shutil.which("wrk") is None:
        raise SystemExit("wrk is needed (apt-get install wrk)")
    results = asyncio.run(run(args))
    print(json.dumps(results, indent=2))
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
