"""A test agent on the SQL backend, as its own process (killed and started again by the tests).

    python tests/sql/sql_server.py --port 8001 --url sqlite+aiosqlite:///x.db --prefix t_

The agent: ``echo <text>`` replies with the text; ``stream <n> <delay>`` streams ``n``
chunks ``delay`` seconds apart; ``wait`` works until it is cancelled (or its process dies).
"""

from __future__ import annotations

import argparse
from collections.abc import AsyncIterator

import anyio

from a2a_core.server import A2AServer, TaskContext
from a2a_core.types import AgentCapabilities, AgentCard, AgentSkill, Message
from a2a_sql import SqlBackend


async def agent(ctx: TaskContext) -> AsyncIterator[str | Message]:
    """See the module docstring."""
    command, _, rest = ctx.text.partition(" ")
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


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--url", required=True)
    parser.add_argument("--prefix", required=True)
    args = parser.parse_args()
    url = f"http://127.0.0.1:{args.port}"
    card = AgentCard(
        name="SQL test agent",
        description="A test agent on the SQL backend",
        supported_interfaces=[],
        version="1.0.0",
        capabilities=AgentCapabilities(streaming=True),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[AgentSkill(id="s", name="S", description="test skill", tags=["t"])],
    )
    backend = SqlBackend(args.url, prefix=args.prefix)
    server = A2AServer(agent, card=card, base_url=url, backend=backend, shutdown_grace=0.5)
    from a2a_starlette import A2AStarlette, serve

    serve(A2AStarlette(server), server, host="127.0.0.1", port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
