"""Streaming: the reply arrives word by word, as chunks of one artifact.

    uv run python examples/streaming.py --adapter starlette --host 127.0.0.1 --port 8000

Send it a message with ``SendStreamingMessage`` (v1.0) or ``message/stream`` (v0.3) and the
words of your text come back one by one. Two ways to write the same agent:

- ``--style generator`` (default): an async generator. A yielded message is a *working*
  status update, each yielded text a chunk appended to one artifact; the task completes
  when the generator ends.
- ``--style context``: the same, driven by hand through the :class:`TaskContext`, which
  also marks the last chunk (``lastChunk``) and names the artifact.
"""

from __future__ import annotations

import argparse
from collections.abc import AsyncIterator

import anyio
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
from a2a_core.types import AgentSkill, Message

DELAY = 0.1  # seconds between words, to make the stream visible


def words_of(ctx: TaskContext) -> list[str]:
    """The words to stream back: the message's words, each but the first after a space."""
    words = ctx.text.split() or ["(silence)"]
    return [words[0], *(" " + word for word in words[1:])]


async def generator_agent(ctx: TaskContext) -> AsyncIterator[str | Message]:
    """Stream the words back with an async generator."""
    words = words_of(ctx)
    yield ctx.agent_message(f"Streaming {len(words)} words")
    for word in words:
        await anyio.sleep(DELAY)
        yield word


async def context_agent(ctx: TaskContext) -> None:
    """Stream the words back through the task context."""
    words = words_of(ctx)
    await ctx.working(f"Streaming {len(words)} words")
    artifact_id = None
    for i, word in enumerate(words):
        await anyio.sleep(DELAY)
        artifact_id = await ctx.artifact(
            word,
            artifact_id=artifact_id,
            name="reply",
            append=i > 0,
            last_chunk=i == len(words) - 1,
        )
    await ctx.complete()


def main() -> None:
    def extra(parser: argparse.ArgumentParser) -> None:
        parser.add_argument(
            "--style",
            choices=("generator", "context"),
            default="generator",
            help="how the agent is written (default: generator)",
        )

    args = parse_args("Serve the streaming agent.", extra)
    server = A2AServer(
        generator_agent if args.style == "generator" else context_agent,
        card=card(
            "Streamer",
            "Streams the text it receives back, one word at a time.",
            AgentSkill(
                id="stream-words",
                name="Stream words",
                description="Streams the message text back word by word.",
                tags=["streaming"],
                examples=["the quick brown fox"],
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
