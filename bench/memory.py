"""Memory side by side: stored tasks, and idle SSE subscribers on real connections.

    uv run --group bench python bench/memory.py [--tasks 100000] [--subscribers 10000]
        [--only store|subscribers] [--servers ours-ht,ours-aio,sdk-ht,...]

**Stored tasks.** ``--tasks`` small completed tasks (one user message in the history, a
status message, one text artifact: about 100 bytes of text) go into an in-memory store, in a
fresh interpreter per store; printed: the growth of the resident set per task. Ours is
``InMemoryTaskStore`` with its bounds off (every task stays); the official SDK's is its
``InMemoryTaskStore`` (protobuf tasks, default copying adapter).

**Idle subscribers.** A server from ``bench/servers.py`` runs on 127.0.0.1 (pinned to core 0
like the HTTP benchmarks); one task is held open (``hold``), then ``--subscribers`` clients
open a real TCP connection each and subscribe to it (``SubscribeToTask``; the bare
endpoints' own route), and each reads its first frame. Printed: the growth of the server's
resident set from before the first subscriber to when all are connected and idle, per
subscriber: the connection, the server's request and stream state, buffers, everything.
The client runs in another process (``bench/loadgen.py``'s helpers), so its own memory is
not counted. File descriptor limits are raised to the hard limit on both sides.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

from memory_store import rss_bytes  # noqa: E402  (a sibling script)

# --- stored tasks ------------------------------------------------------------------------


async def store_ours(count: int) -> float:
    from memory_store import small_task

    from a2a_core.server import InMemoryTaskStore

    store = InMemoryTaskStore(ttl=None, max_terminal_tasks=None)
    sample = small_task(0)
    await store.create(sample)  # warm up code paths and per-tenant structures
    await store.delete(sample.id)
    gc.collect()
    before = rss_bytes()
    for n in range(count):
        await store.create(small_task(n))
    gc.collect()
    assert len(store) == count
    return (rss_bytes() - before) / count


def _sdk_task(n: int) -> Any:
    """The same small completed task as ``memory_store.small_task``, as the SDK's protobuf
    (our v1.0 JSON is ProtoJSON, which protobuf parses as it is)."""
    from a2a.types import Task
    from google.protobuf import json_format
    from memory_store import small_task

    from a2a_core import codec

    return json_format.Parse(codec.encode(small_task(n)), Task())


async def store_sdk(count: int) -> float:
    from a2a.server.context import ServerCallContext
    from a2a.server.tasks import InMemoryTaskStore

    store = InMemoryTaskStore()
    context = ServerCallContext()
    sample = _sdk_task(0)
    await store.save(sample, context)  # warm up
    await store.delete(sample.id, context)
    gc.collect()
    before = rss_bytes()
    for n in range(count):
        await store.save(_sdk_task(n), context)
    gc.collect()
    return (rss_bytes() - before) / count


def run_store_case(kind: str, count: int) -> None:
    sys.path.insert(0, str(BENCH))
    measure = store_ours if kind == "ours" else store_sdk
    print(json.dumps({"bytes_per_task": asyncio.run(measure(count))}))


# --- idle subscribers --------------------------------------------------------------------


async def subscribe_all(spec: dict[str, Any]) -> dict[str, Any]:
    """In the client process: hold a task, open every subscriber, report, release."""
    import loadgen
    from servers import raise_fd_limit

    raise_fd_limit()
    port, pid = spec["port"], spec["pid"]
    hold = await loadgen.post(port, loadgen.request_bytes(port, spec["hold"], n=1))
    if hold.status != 200:
        raise RuntimeError(f"hold failed: {hold.status} {hold.body[:200]!r}")
    task_id = loadgen._task_id(hold.body)
    subscribe = loadgen.request_bytes(port, spec["subscribe"], id=task_id)
    # A first round of subscribers, closed again, so that lazily built server state (code
    # paths, caches, buffer pools) is not counted against the measured ones.
    sem = asyncio.Semaphore(64)

    async def open_one() -> tuple[Any, Any]:
        async with sem:
            reader, writer, _ = await loadgen.open_stream(port, subscribe)
            await loadgen.read_first_frame(reader)
            return reader, writer

    warm = await asyncio.gather(*(open_one() for _ in range(200)))
    for _, writer in warm:
        writer.close()
    await asyncio.sleep(1.0)
    before = rss_bytes(pid)
    started = time.perf_counter()
    streams = await asyncio.wait_for(
        asyncio.gather(*(open_one() for _ in range(spec["subscribers"]))), timeout=600
    )
    connect_seconds = time.perf_counter() - started
    await asyncio.sleep(2.0)  # let the server settle (buffers, lazy allocations)
    after = rss_bytes(pid)
    release = loadgen.request_bytes(port, spec["release"], id=task_id, n=1)
    reply = await loadgen.post(port, release)
    for _, writer in streams:
        writer.close()
    return {
        "subscribers": len(streams),
        "rss_before": before,
        "rss_after": after,
        "bytes_per_subscriber": (after - before) / len(streams),
        "connect_seconds": connect_seconds,
        "released": reply.status,
    }


def run_subscriber_case(spec_json: str) -> None:
    sys.path.insert(0, str(BENCH))
    spec = json.loads(spec_json)
    if spec.get("cpu") is not None and hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {spec["cpu"]})
    print(json.dumps(asyncio.run(subscribe_all(spec))))


def measure_subscribers(
    server_key: str, count: int, baseline: Path | None = None
) -> dict[str, Any]:
    sys.path.insert(0, str(BENCH))
    import dataclasses

    import run as bench

    before = server_key.endswith("-before")
    server = next(s for s in bench.SERVERS if s.key == server_key.removesuffix("-before"))
    if before:
        server = dataclasses.replace(server, key=server_key, baseline=True)
    pin = bench.can_pin()
    templates = bench.stream_templates(server.family)
    with (
        tempfile.TemporaryDirectory() as logs,
        bench.running_server(server, pin=pin, log_dir=Path(logs), baseline=baseline) as (
            port,
            pid,
        ),
    ):
        spec = {
            "port": port,
            "pid": pid,
            "subscribers": count,
            "hold": templates["hold"],
            "subscribe": templates["subscribe"],
            "release": templates["release"],
            "cpu": bench.LOAD_CPU if pin else None,
        }
        out = subprocess.run(
            [sys.executable, __file__, "--subscriber-case", json.dumps(spec)],
            capture_output=True,
            text=True,
            timeout=900,
        )
        if out.returncode != 0:
            raise RuntimeError(out.stderr[-3000:])
        return dict(json.loads(out.stdout.strip().splitlines()[-1]))


# --- main --------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--tasks", type=int, default=100_000)
    parser.add_argument("--subscribers", type=int, default=10_000)
    parser.add_argument("--only", choices=("store", "subscribers"))
    parser.add_argument("--servers", default="ours-ht,ours-h11,ours-aio,sdk-ht,bare-ht,bare-aio")
    parser.add_argument(
        "--baseline", type=Path, help="packages of the code before a change (KEY-before rows)"
    )
    args = parser.parse_args()
    if args.only in (None, "store"):
        print(f"Stored tasks: {args.tasks:,} small completed tasks, RSS growth per task")
        for kind, label in (
            ("ours", "a2aserve-core InMemoryTaskStore"),
            ("sdk", "a2a-sdk InMemoryTaskStore"),
        ):
            out = subprocess.run(
                [sys.executable, __file__, "--store-case", kind, str(args.tasks)],
                capture_output=True,
                text=True,
                check=True,
            )
            result = json.loads(out.stdout.strip().splitlines()[-1])
            print(f"  {label:28} {result['bytes_per_task']:8,.0f} bytes per task")
    if args.only in (None, "subscribers"):
        print(
            f"\nIdle SSE subscribers: {args.subscribers:,} connections to one held task, "
            "server RSS growth per subscriber"
        )
        for key in [k for k in args.servers.split(",") if k]:
            try:
                result = measure_subscribers(key, args.subscribers, args.baseline)
            except Exception as exc:
                print(f"  {key:10} failed: {str(exc)[-500:]}")
                continue
            print(
                f"  {key:10} {result['bytes_per_subscriber']:8,.0f} bytes per subscriber "
                f"({result['subscribers']:,} connected in {result['connect_seconds']:.1f} s; "
                f"RSS {result['rss_before'] / 2**20:.0f} -> "
                f"{result['rss_after'] / 2**20:.0f} MiB)",
                flush=True,
            )


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--store-case":
        run_store_case(sys.argv[2], int(sys.argv[3]))
    elif len(sys.argv) > 1 and sys.argv[1] == "--subscriber-case":
        run_subscriber_case(sys.argv[2])
    else:
        main()
