"""Multi-turn: the agent asks for your name, then greets you.

    uv run python examples/multi_turn.py --adapter starlette --host 127.0.0.1 --port 8000

The first message gets the task into ``input-required`` with a question. Send the answer as
a second message with the same ``taskId``: the agent is called again, on the same task, and
completes it with a greeting artifact.
"""

from __future__ import annotations

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
from a2a_core.server import A2AServer, InputRequired, TaskContext
from a2a_core.types import AgentSkill


async def greeter(ctx: TaskContext) -> str | InputRequired:
    """Ask for a name (first turn, or an empty answer); greet once there is one."""
    name = ctx.text.strip()
    if not ctx.is_follow_up or not name:
        return InputRequired("Hello! What is your name?")
    return f"Nice to meet you, {name}!"


def main() -> None:
    args = parse_args("Serve the multi-turn agent.")
    server = A2AServer(
        greeter,
        card=card(
            "Greeter",
            "Asks for your name, then greets you.",
            AgentSkill(
                id="greet",
                name="Greet",
                description="Asks the user's name and greets them by it.",
                tags=["multi-turn"],
                examples=["hi"],
            ),
        ),
        base_url=public_url(args),
        **backend_options(args),
        **console_options(args),
        protocol=ProtocolOptions(**signing_options(args)),
    )
    serve(server, args)


if __name__ == "__main__":
    main()
