"""A test agent on the SQL backend, as its own process (killed and started again by the tests).

    python tests/sql/sql_server.py --port 8001 --url sqlite+aiosqlite:///x.db --prefix t_ \
        [--adapter aiohttp] [--replica-id a] [--lease-ttl 2]

(`Server` runs it from a test.) The agent: ``echo <text>`` replies with the text; ``stream <n> <delay>`` streams ``n``
chunks ``delay`` seconds apart; ``tick <n> <delay>`` the same, each chunk the wall-clock
time (ns) it was emitted at; ``sizes <delay> <n>...`` a chunk of ``n`` characters for
each ``n``; ``wait`` works until it is cancelled (or its process dies),
and prints ``agent of task <id> was cancelled`` when it is.

The replica id is stable by default (one per prefix), so a restarted server is the same
replica as before and fails its previous run's tasks at once (the restart rule); replicas
running side by side on one prefix need ``--replica-id`` each.
"""

from __future__ import annotations

import argparse
import logging
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path

import anyio

from a2a_core.server import ExecutionGuards, PushOptions, StreamOptions

sys.path.insert(0, str(Path(__file__).parents[1]))  # tests/, for the helpers when run as a script

from a2a_core.server import A2AServer, TaskContext
from a2a_core.types import AgentCapabilities, AgentCard, AgentSkill, Message
from a2a_sql import SqlBackend
from helpers.processes import ServerProcess


async def agent(ctx: TaskContext) -> AsyncIterator[str | Message]:
    """See the module docstring."""
    command, _, rest = ctx.text.partition(" ")
    if command == "echo":
        yield rest
    elif command in ("stream", "tick"):
        count, delay = rest.split()
        yield ctx.agent_message(f"streaming {count} chunks")
        for i in range(int(count)):
            await anyio.sleep(float(delay))
            yield str(time.time_ns()) if command == "tick" else f"chunk{i} "
    elif command == "sizes":  # sizes <delay> <n1> <n2>...: a chunk of n characters each
        delay, *sizes = rest.split()
        yield ctx.agent_message("sizes")
        for size in sizes:
            await anyio.sleep(float(delay))
            yield "x" * int(size)
    elif command == "wait":
        yield ctx.agent_message("waiting")
        try:
            await anyio.sleep_forever()
        except anyio.get_cancelled_exc_class():
            print(f"agent of task {ctx.task_id} was cancelled", flush=True)
            raise


class Server(ServerProcess):
    """One ``sql_server.py`` process, started and ready (its card answers)."""

    def __init__(self, url: str, prefix: str, log: Path, *extra: str) -> None:
        super().__init__(__file__, "--url", url, "--prefix", prefix, *extra, log=log)
        self.wait_ready()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--url", required=True)
    parser.add_argument("--prefix", required=True)
    parser.add_argument("--adapter", choices=("starlette", "aiohttp"), default="starlette")
    parser.add_argument("--replica-id", default=None)
    parser.add_argument("--lease-ttl", type=float, default=10.0)
    parser.add_argument("--keep-alive", type=float, default=15.0)
    parser.add_argument("--statement-timeout", type=float, default=10.0)
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    for noisy in ("httpx", "uvicorn.access", "aiohttp.access"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    url = f"http://127.0.0.1:{args.port}"
    card = AgentCard(
        name="SQL test agent",
        description="A test agent on the SQL backend",
        supported_interfaces=[],
        version="1.0.0",
        capabilities=AgentCapabilities(streaming=True, push_notifications=True),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[AgentSkill(id="s", name="S", description="test skill", tags=["t"])],
    )
    backend = SqlBackend(
        args.url,
        prefix=args.prefix,
        replica_id=args.replica_id or f"sql-server-{args.prefix}",
        lease_ttl=args.lease_ttl,
        reap_interval=min(args.lease_ttl / 4, 0.5),
        statement_timeout=args.statement_timeout,
    )
    server = A2AServer(
        agent,
        card=card,
        base_url=url,
        backend=backend,
        guards=ExecutionGuards(shutdown_grace=0.5),
        streams=StreamOptions(keep_alive_interval=args.keep_alive),
        push=PushOptions(allow_hosts=["127.0.0.1/32"]),
    )
    print(f"replica {backend.replica_id} on {url} ({args.adapter})", flush=True)
    if args.adapter == "aiohttp":
        from aiohttp import web

        from a2a_aiohttp import add_routes

        app = web.Application()
        add_routes(app, server)
        web.run_app(app, host="127.0.0.1", port=args.port, print=None)
    else:
        from a2a_starlette import A2AStarlette, serve

        serve(A2AStarlette(server), server, host="127.0.0.1", port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
