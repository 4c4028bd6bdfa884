"""A push-enabled test agent on the SQL backend, as its own process (killed by the tests).

    python tests/sql/push_server.py --port 8001 --url sqlite+aiosqlite:///x.db --prefix t_

The agent: ``stream <n> [<delay>]`` answers with ``n`` artifact chunks (``delay`` seconds
apart), then completes. Webhooks on
127.0.0.1 are allowed; a failed attempt is retried every few tenths of a second for long
(a receiver that is down keeps its jobs pending), and a claim lasts 3 s.
"""

from __future__ import annotations

import argparse
from collections.abc import AsyncIterator

import anyio

from a2a_core.server import A2AServer, ExecutionGuards, PushOptions, TaskContext
from a2a_core.types import AgentCapabilities, AgentCard, AgentSkill
from a2a_sql import PushQueueSettings, SqlBackend

SETTINGS = PushQueueSettings(
    claim_timeout=3.0,
    scan_interval=0.2,
    webhook={"timeout": 1.0, "retries": 1000, "backoff": 0.1, "max_backoff": 0.3, "jitter": 0},
)


async def agent(ctx: TaskContext) -> AsyncIterator[str]:
    """See the module docstring."""
    command, _, rest = ctx.text.partition(" ")
    if command == "stream":
        count, _, delay = rest.partition(" ")
        for i in range(int(count)):
            if delay:
                await anyio.sleep(float(delay))
            yield f"chunk{i} "


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--url", required=True)
    parser.add_argument("--prefix", required=True)
    args = parser.parse_args()
    url = f"http://127.0.0.1:{args.port}"
    card = AgentCard(
        name="SQL push test agent",
        description="A test agent with webhooks on the SQL backend",
        supported_interfaces=[],
        version="1.0.0",
        capabilities=AgentCapabilities(streaming=True, push_notifications=True),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[AgentSkill(id="s", name="S", description="test skill", tags=["t"])],
    )
    backend = SqlBackend(args.url, prefix=args.prefix, push_queue=SETTINGS)
    server = A2AServer(
        agent,
        card=card,
        base_url=url,
        backend=backend,
        guards=ExecutionGuards(shutdown_grace=0.5),
        push=PushOptions(allow_hosts=["127.0.0.1/32"]),
    )
    from a2a_starlette import A2AStarlette, serve

    serve(A2AStarlette(server), server, host="127.0.0.1", port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
