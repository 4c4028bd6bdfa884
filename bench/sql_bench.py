"""SendMessage requests/s on PostgreSQL: our SqlBackend vs the official SDK's DatabaseTaskStore.

    uv run --group bench python bench/sql_bench.py \\
        [--postgres postgresql+asyncpg://postgres@127.0.0.1:5432/postgres] [--duration 12]

One run, the same machine, the same uvicorn settings (`servers.run_uvicorn`: one worker,
``--stack`` h11 on asyncio by default), the same echo agent (`servers.our_server`,
`servers.sdk_app`), the same load (`loadgen.py`: ``--connections`` keep-alive connections
posting a v1.0 JSON-RPC SendMessage; each request creates a task, records the message, the
artifact and the completion):

- ``ours-memory``: our server on the in-memory backend (the ceiling of ours);
- ``ours-sql``: our server on ``a2a_sql.SqlBackend`` (asyncpg), every event logged in the
  task's transaction;
- ``sdk-sql``: the official ``a2a-sdk`` with its ``DatabaseTaskStore`` (asyncpg, with the
  same connection pool as ours: 10 + 10 overflow) on the same PostgreSQL;
- ``sdk-memory``: the SDK on its ``InMemoryTaskStore``, for scale.

Servers are pinned to core 0 and the load generator to core 1 when there are two cores
(PostgreSQL is shared and not pinned); the duration is split into ``--rounds`` rotating
through the servers, and each row is the median round. A database of its own is created
on the server named by ``--postgres`` and dropped at the end. The 1-minute load average
before and after is printed with the table: on a shared machine, compare ratios.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

from harness import ServerProcess, admin, free_port, pinned

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

SERVERS = ("ours-memory", "ours-sql", "sdk-sql", "sdk-memory")
PREFIX = "a2a_"
SDK_TABLE = "sdk_tasks"


# --- the servers under test (``sql_bench.py serve KIND ...``, one process each) ------------


def serve(args: argparse.Namespace) -> None:
    """One server: ours or the SDK's, in memory or on the database."""
    import servers

    base_url = f"http://{servers.HOST}:{args.port}"
    servers.raise_fd_limit()
    if args.kind.startswith("ours"):
        from a2a_starlette import A2AStarlette

        backend = None
        if args.kind == "ours-sql":
            from a2a_sql import SqlBackend

            backend = SqlBackend(args.url, prefix=PREFIX)
        app = A2AStarlette(servers.our_server(base_url, backend))
    else:
        task_store = None
        if args.kind == "sdk-sql":
            from a2a.server.tasks import DatabaseTaskStore
            from sqlalchemy.ext.asyncio import create_async_engine

            # The pool ours has by default (a2a_sql.POOL_SIZE), so both have the same.
            engine = create_async_engine(args.url, pool_size=10, max_overflow=10)
            task_store = DatabaseTaskStore(engine, table_name=SDK_TABLE)
        app = servers.sdk_app(base_url, task_store)
    servers.run_uvicorn(app, args.port, args.stack)


# --- harness -----------------------------------------------------------------------------


class Server(ServerProcess):
    """One server process, ready when its card answers; stopped with SIGINT."""

    stop_signal = signal.SIGINT
    stop_timeout = 15.0

    def __init__(self, kind: str, url: str, stack: str) -> None:
        self.kind = kind
        port = free_port()
        command = [
            *pinned(0), sys.executable, str(Path(__file__).resolve()), "serve", kind,
            "--port", str(port), "--url", url, "--stack", stack,
        ]  # fmt: skip
        super().__init__(command, port, log_prefix="sql-bench-", name=kind)


def send_request() -> dict[str, Any]:
    """The request template of `loadgen.py`: a v1.0 JSON-RPC SendMessage."""
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "SendMessage",
        "params": {
            # `loadgen.fresh_ids` puts a new messageId in its place in each request.
            "message": {
                "messageId": "m-0000000000",
                "role": "ROLE_USER",
                "parts": [{"text": "hello"}],
            }
        },
    }
    return {
        "method": "POST",
        "path": "/",
        "headers": {"Content-Type": "application/json", "A2A-Version": "1.0"},
        "body": json.dumps(body),
    }


def load(port: int, seconds: float, connections: int) -> dict[str, Any]:
    spec = {
        "mode": "requests",
        "port": port,
        "request": send_request(),
        "expect_status": 200,
        "connections": connections,
        "warmup": 1.0,
        "duration": seconds,
        "cpu": 1 if (os.cpu_count() or 1) >= 2 else None,
    }
    out = subprocess.run(
        [sys.executable, str(BENCH / "loadgen.py"), json.dumps(spec)],
        check=True,
        capture_output=True,
        text=True,
        timeout=seconds + 90,
    ).stdout
    result: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
    result["rps"] = result["requests"] / result["seconds"] if result["seconds"] else 0.0
    return result


def loadavg() -> float:
    return os.getloadavg()[0]


def run(args: argparse.Namespace) -> dict[str, Any]:
    import sqlalchemy as sa

    from a2a_sql import upgrade

    name = f"a2a_bench_{uuid.uuid4().hex[:8]}"
    server_url = sa.make_url(args.postgres)
    url = server_url.set(database=name).render_as_string(hide_password=False)
    asyncio.run(admin(args.postgres, f"CREATE DATABASE {name}"))
    results: dict[str, Any] = {
        "cores": os.cpu_count(),
        "connections": args.connections,
        "duration": args.duration,
        "rounds": args.rounds,
        "stack": args.stack,
        "postgres": asyncio.run(admin(args.postgres, "SHOW server_version")),
        "loadavg_before": loadavg(),
    }
    running: list[Server] = []
    try:
        asyncio.run(upgrade(url, PREFIX))
        kinds = [k for k in SERVERS if k in args.servers.split(",")]
        for kind in kinds:
            running.append(Server(kind, url, args.stack))
        rounds: dict[str, list[dict[str, Any]]] = {k: [] for k in kinds}
        per_round = args.duration / args.rounds
        for index in range(args.rounds):
            order = running[index % len(running) :] + running[: index % len(running)]
            for server in order:
                done = load(server.port, per_round, args.connections)
                rounds[server.kind].append(done)
                print(
                    f"round {index + 1} {server.kind:12} {done['rps']:8.1f} req/s "
                    f"p50 {done['p50_ms']:.1f} ms p99 {done['p99_ms']:.1f} ms "
                    f"errors {done['errors']}",
                    flush=True,
                )
        for kind, samples in rounds.items():
            middle = sorted(samples, key=lambda r: r["rps"])[len(samples) // 2]
            results[kind] = {
                "rps": middle["rps"],
                "p50_ms": middle["p50_ms"],
                "p99_ms": middle["p99_ms"],
                "errors": sum(r["errors"] for r in samples),
                "rounds_rps": [r["rps"] for r in samples],
            }
        results["stored"] = {
            "ours-sql": asyncio.run(admin(url, f"SELECT count(*) FROM {PREFIX}tasks")),
            "sdk-sql": asyncio.run(admin(url, f"SELECT count(*) FROM {SDK_TABLE}"))
            if "sdk-sql" in kinds
            else None,
        }
        for server in running:
            log = server.output()
            if "Traceback" in log:
                print(f"--- {server.kind} logged errors:\n{log[-3000:]}", file=sys.stderr)
    finally:
        for server in running:
            server.stop()
        results["loadavg_after"] = loadavg()
        asyncio.run(admin(args.postgres, f"DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
    return results


def table(results: dict[str, Any]) -> str:
    kinds = [k for k in SERVERS if k in results]
    sdk = results.get("sdk-sql", {}).get("rps")
    lines = [
        "| server | SendMessage req/s | p50 ms | p99 ms | errors | vs sdk-sql |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for kind in kinds:
        row = results[kind]
        ratio = f"{row['rps'] / sdk:.1f}x" if sdk else "-"
        lines.append(
            f"| {kind} | {row['rps']:.0f} | {row['p50_ms']:.1f} | {row['p99_ms']:.1f} | "
            f"{row['errors']} | {ratio} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    sub = parser.add_subparsers(dest="command")
    one = sub.add_parser("serve", help="(internal) run one server under test")
    one.add_argument("kind", choices=SERVERS)
    one.add_argument("--port", type=int, required=True)
    one.add_argument("--url", required=True)
    one.add_argument("--stack", default="h11")
    parser.add_argument(
        "--postgres", default="postgresql+asyncpg://postgres@127.0.0.1:5432/postgres"
    )
    parser.add_argument("--duration", type=float, default=12.0, help="seconds per server")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--stack", choices=("h11", "httptools"), default="h11")
    parser.add_argument("--servers", default=",".join(SERVERS))
    parser.add_argument("--json", default=str(BENCH / "results" / "sql-latest.json"))
    args = parser.parse_args()
    if args.command == "serve":
        serve(args)
        return
    results = run(args)
    print()
    print(table(results))
    sdk, ours = results.get("sdk-sql"), results.get("ours-sql")
    if sdk and ours:
        ratio = ours["rps"] / sdk["rps"]
        verdict = "met" if ratio >= 5 else "missed"
        print(f"\nours-sql / sdk-sql: {ratio:.1f}x (target >= 5x: {verdict})")
    if "ours-memory" in results and ours:
        print(f"ours-sql / ours-memory: {ours['rps'] / results['ours-memory']['rps']:.0%}")
    print(
        f"rows stored: {results['stored']}; load average (1 min) before "
        f"{results['loadavg_before']:.2f}, after {results['loadavg_after']:.2f}; "
        f"{results['cores']} cores, PostgreSQL {results['postgres']}"
    )
    Path(args.json).parent.mkdir(exist_ok=True)
    Path(args.json).write_text(json.dumps(results, indent=2) + "\n")
    print(f"raw results: {args.json}")


if __name__ == "__main__":
    main()
