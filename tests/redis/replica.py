"""One replica of a test agent on the Redis backend, as its own process (see redis_harness).

    python tests/redis/replica.py --adapter aiohttp --port 8001 \
        --redis redis://127.0.0.1:6379/15 --prefix a2a-test:x: --lease-ttl 2

The agent does what the message text says:

- ``echo <text>``: replies with the text (a completed task).
- ``stream <n> <delay>``: a working status, then ``n`` chunks of one artifact, ``delay``
  seconds apart, then completes.
- ``wait``: a working status, then waits until it is cancelled (or its replica dies).
- ``ask``: asks for input; the follow-up message completes the task with its text.
"""

from __future__ import annotations

import argparse
import logging
from collections.abc import AsyncIterator

import anyio

from a2a_core.server import (
    A2AServer,
    ExecutionGuards,
    InputRequired,
    PushOptions,
    StreamOptions,
    TaskContext,
)
from a2a_core.types import AgentCapabilities, AgentCard, AgentSkill, Message
from a2aserve_redis import RedisBackend


async def agent(ctx: TaskContext) -> AsyncIterator[str | Message | InputRequired]:
    """See the module docstring."""
    command, _, rest = ctx.text.partition(" ")
    if ctx.is_follow_up:
        await anyio.sleep(0.3)
        yield f"continued: {ctx.text}"
        return
    if command == "echo":
        yield rest
    elif command == "stream":
        count, delay = rest.split()
        yield ctx.agent_message(f"streaming {count} chunks")
        for i in range(int(count)):
            await anyio.sleep(float(delay))
            yield f"chunk{i} "
    elif command == "wait":
        yield ctx.agent_message("waiting")
        await anyio.sleep_forever()
    elif command == "ask":
        yield InputRequired("what next?")
    else:
        yield f"unknown command {command!r}"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--adapter", choices=("starlette", "aiohttp"), required=True)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--redis", required=True)
    parser.add_argument("--prefix", required=True)
    parser.add_argument("--lease-ttl", type=float, default=10.0)
    parser.add_argument("--keep-alive", type=float, default=15.0)
    parser.add_argument("--write-retry", type=float, default=5.0)
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")

    backend = RedisBackend(
        args.redis,
        prefix=args.prefix,
        lease_ttl=args.lease_ttl,
        reap_interval=min(args.lease_ttl / 4, 0.5),
        write_retry=args.write_retry,
    )
    url = f"http://127.0.0.1:{args.port}"
    card = AgentCard(
        name=f"Replica on {args.adapter}",
        description="A test agent on the Redis backend",
        supported_interfaces=[],
        version="1.0.0",
        capabilities=AgentCapabilities(streaming=True, push_notifications=True),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[AgentSkill(id="s", name="S", description="test skill", tags=["t"])],
    )
    server = A2AServer(
        agent,
        card=card,
        base_url=url,
        backend=backend,
        streams=StreamOptions(keep_alive_interval=args.keep_alive),
        push=PushOptions(allow_hosts=["127.0.0.1/32"]),
        guards=ExecutionGuards(shutdown_grace=0.5),
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
