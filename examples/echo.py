"""Echo: the smallest useful A2A agent. It replies with the text it was sent.

    uv run python examples/echo.py --adapter starlette --host 127.0.0.1 --port 8000

``--v03-card`` adds the v0.3 card fields (top-level ``url``...) that v0.3-era clients need.
"""

from __future__ import annotations

import argparse

from _common import (
    backend_options,
    card,
    console_options,
    parse_args,
    public_url,
    serve,
    signing_options,
)

from a2a_core.protocol import ProtocolOptions
from a2a_core.server import A2AServer, TaskContext
from a2a_core.types import AgentSkill


async def echo(ctx: TaskContext) -> str:
    """Reply with the text of the message."""
    return ctx.text


def main() -> None:
    def extra(parser: argparse.ArgumentParser) -> None:
        parser.add_argument(
            "--v03-card", action="store_true", help="add v0.3 card fields for v0.3-era clients"
        )

    args = parse_args("Serve the echo agent.", extra)
    server = A2AServer(
        echo,
        card=card(
            "Echo",
            "Replies with the text it receives.",
            AgentSkill(
                id="echo",
                name="Echo",
                description="Echoes the message text.",
                tags=["echo"],
                examples=["hello"],
            ),
        ),
        base_url=public_url(args),
        **backend_options(args),
        **console_options(args),
        protocol=ProtocolOptions(legacy_card_fields=args.v03_card, **signing_options(args)),
    )
    serve(server, args)


if __name__ == "__main__":
    main()
