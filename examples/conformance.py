"""The conformance agent: what the A2A compatibility kits drive over HTTP.

    uv run python examples/conformance.py --adapter starlette --host 127.0.0.1 --port 9999 \\
        --public-url http://localhost:9999

The kits tell the agent what to do through the ``messageId`` prefix of each message (see
:class:`ConformanceAgent`). Besides the agent, this example shows three things a real server
needs: an extended agent card (served to anonymous callers too, since the kits send no
credentials: an option that is off by default), an identity set by the framework's own
middleware (here: any ``Authorization: Bearer ...`` counts as authenticated), and push
notifications to a webhook on the same machine (loopback, refused by default).
"""

from __future__ import annotations

import argparse
from collections.abc import Iterable
from typing import Any

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
from aiohttp import web
from starlette.datastructures import Headers
from starlette.types import ASGIApp, Receive, Scope, Send

import a2a_aiohttp
import a2a_starlette
from a2a_core.protocol import ProtocolOptions
from a2a_core.server import A2AServer, InputRequired, PushOptions, TaskContext
from a2a_core.types import AgentSkill, Message, Part

FILE = Part(raw=b"Generated file content", filename="output.txt", media_type="text/plain")
FILE_URL = Part(
    url="https://example.com/output.txt", filename="output.txt", media_type="text/plain"
)
#: messageId prefix -> the artifact of a task that goes working -> artifact -> completed.
ARTIFACTS: dict[str, str | Part] = {
    "tck-artifact-text": "Generated text content",
    "tck-artifact-file": FILE,
    "tck-artifact-file-url": FILE_URL,
    "tck-artifact-data": Part(data={"key": "value", "count": 42}),
    "tck-stream-001": "Stream hello from TCK",
    "tck-stream-003": "Stream task lifecycle",
    "tck-stream-ordering-001": "Ordered output",
    "tck-stream-artifact-text": "Streamed text content",
    "tck-stream-artifact-file": FILE,
}


def longest_prefix(message_id: str, prefixes: Iterable[str]) -> str | None:
    """The longest of ``prefixes`` that ``message_id`` starts with."""
    return max((p for p in prefixes if message_id.startswith(p)), key=len, default=None)


class ConformanceAgent:
    """Does what the messageId prefix asks (the table is in CONFORMANCE_AGENT.md).

    An agent can be any callable taking the task context; an instance with an async
    ``__call__`` carries its settings, here how long the (re)subscribe tasks stay working.
    """

    def __init__(self, subscribe_delay: float = 4.0) -> None:
        self.subscribe_delay = subscribe_delay

    async def __call__(self, ctx: TaskContext) -> Message | InputRequired | None:
        message_id = ctx.message.message_id
        if message_id.startswith("tck-message-response"):
            return ctx.agent_message("Direct message response")  # a message, no task
        if message_id.startswith("tck-input-required"):
            return InputRequired("Please provide more input")
        if message_id.startswith("tck-reject-task"):
            await ctx.reject("rejected")
        elif message_id.startswith("tck-stream-artifact-chunked"):
            await ctx.working()
            artifact_id = await ctx.artifact("chunk-1 ")
            await ctx.artifact("chunk-2", artifact_id=artifact_id, append=True, last_chunk=True)
            await ctx.complete()
        elif (prefix := longest_prefix(message_id, ARTIFACTS)) is not None:
            await ctx.working()
            await ctx.artifact(ARTIFACTS[prefix])
            await ctx.complete()
        elif message_id.startswith("tck-stream-002"):
            await ctx.complete()
        elif message_id.startswith(("test-resubscribe-message-id", "test-subscribe-message-id")):
            await ctx.working()
            await anyio.sleep(self.subscribe_delay)  # long enough for the kit to (re)subscribe
            await ctx.complete()
        elif message_id.startswith("tck-"):
            await ctx.complete("Hello from TCK")
        else:
            # Anything else: the task stays working after we return, until continued or canceled.
            await ctx.working()
        return None


# --- authentication: any bearer credential is a (stand-in) identity -----------------------


def bearer_identity(authorization: str | None) -> dict[str, str] | None:
    """The caller named by an ``Authorization: Bearer <anything>`` header, if any."""
    scheme, _, value = (authorization or "").partition(" ")
    if scheme.lower() != "bearer" or not value.strip():
        return None
    return {"sub": "bearer-caller"}


class StarletteBearerAuth:
    """ASGI middleware: put the identity where the Starlette adapter looks for it."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            identity = bearer_identity(Headers(scope=scope).get("authorization"))
            if identity is not None:
                a2a_starlette.put_identity(scope, identity)
        await self.app(scope, receive, send)


@web.middleware
async def aiohttp_bearer_auth(request: web.Request, handler: Any) -> web.StreamResponse:
    """aiohttp middleware: put the identity where the aiohttp adapter looks for it."""
    identity = bearer_identity(request.headers.get("Authorization"))
    if identity is not None:
        a2a_aiohttp.put_identity(request, identity)
    response: web.StreamResponse = await handler(request)
    return response


def main() -> None:
    def extra(parser: argparse.ArgumentParser) -> None:
        parser.add_argument(
            "--subscribe-delay",
            type=float,
            default=4.0,
            help="seconds the (re)subscribe tasks stay working (default: 4, twice the kits' "
            "streaming timeout)",
        )
        parser.add_argument(
            "--v03-card", action="store_true", help="add v0.3 card fields for v0.3-era clients"
        )

    # Card hygiene: advertise localhost, never 127.0.0.1 or a private address.
    args = parse_args(
        "Serve the conformance agent for the A2A compatibility kits.",
        extra,
        public_host="localhost",
    )
    skill = AgentSkill(
        id="conformance",
        name="Conformance",
        description="Follows the messageId signals of the A2A compatibility kits.",
        tags=["conformance"],
        examples=["tck-complete-task"],
    )
    public_card = card(
        "Conformance agent",
        "Answers the A2A compatibility kits.",
        skill,
        extended=True,
        modes=("text/plain", "application/json"),
    )
    extended_skill = AgentSkill(
        id="conformance-extended",
        name="Conformance (extended)",
        description="Shown in the extended card only.",
        tags=["conformance"],
    )
    server = A2AServer(
        ConformanceAgent(args.subscribe_delay),
        card=public_card,
        base_url=public_url(args),
        **backend_options(args),
        **console_options(args),
        extended_card=card(
            "Conformance agent",
            "Answers the A2A compatibility kits (extended card).",
            extended_skill,
            extended=True,
            modes=("text/plain", "application/json"),
        ),
        protocol=ProtocolOptions(
            legacy_card_fields=args.v03_card,
            **signing_options(args),
            # The kits send no credentials, and ask for the extended card all the same.
            extended_card_for_anonymous=True,
        ),
        # The kits receive push notifications on a local webhook.
        push=PushOptions(allow_hosts=["localhost", "127.0.0.0/8", "::1"]),
    )
    serve(
        server,
        args,
        asgi_middleware=[StarletteBearerAuth],
        aiohttp_middlewares=[aiohttp_bearer_auth],
    )


if __name__ == "__main__":
    main()
