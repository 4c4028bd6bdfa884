"""Talk to an A2A agent with the official ``a2a-sdk`` 1.x client and print what it sees.

Start an agent, then point this script at its base URL:

    uv run python examples/echo.py --adapter starlette --port 8000 &
    uv run python examples/sdk_transcript.py http://127.0.0.1:8000

    uv run python examples/streaming.py --adapter aiohttp --port 8001 &
    uv run python examples/sdk_transcript.py http://127.0.0.1:8001 --text "one two three"

For each binding (``--binding JSONRPC``, ``--binding HTTP+JSON``, both by default) it
resolves the agent card with the SDK's ``A2ACardResolver``, creates a client with
``ClientFactory``, sends one message (blocking, ``streaming=False``) and streams one
(``SendStreamingMessage``), and prints the card, the reply and every stream event as the
SDK parsed them. ``--json`` also prints each parsed object as ProtoJSON. The exit status is
non-zero if anything fails. The official SDK is in the workspace's dev dependencies.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.metadata
import sys
import uuid
from typing import Any

import httpx
from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
from a2a.types.a2a_pb2 import (
    AgentCard,
    Message,
    Part,
    Role,
    SendMessageRequest,
    StreamResponse,
    Task,
    TaskState,
)
from google.protobuf.json_format import MessageToJson

BINDINGS = ("JSONRPC", "HTTP+JSON")


def state_name(state: int) -> str:
    """``TASK_STATE_COMPLETED`` -> ``COMPLETED``."""
    return TaskState.Name(state).removeprefix("TASK_STATE_")  # type: ignore[arg-type]


def text_of(parts: Any) -> str:
    """The parts, readable: text quoted, anything else by kind."""
    shown = []
    for part in parts:
        kind = part.WhichOneof("content")
        shown.append(repr(part.text) if kind == "text" else f"<{kind}>")
    return " + ".join(shown) or "(no parts)"


def show_card(card: AgentCard) -> None:
    caps = card.capabilities
    print(f"name:         {card.name} (version {card.version})")
    print(f"description:  {card.description}")
    print(
        "capabilities: "
        f"streaming={caps.streaming} pushNotifications={caps.push_notifications} "
        f"extendedAgentCard={caps.extended_agent_card}"
    )
    print("interfaces:")
    for interface in card.supported_interfaces:
        print(
            f"  {interface.protocol_binding:<10} v{interface.protocol_version:<4} {interface.url}"
        )
    print("skills:       " + ", ".join(f"{s.id} ({s.name})" for s in card.skills))


def show_task(task: Task, indent: str = "  ") -> None:
    print(f"{indent}task {task.id} state={state_name(task.status.state)}")
    print(f"{indent}  context {task.context_id}")
    if task.status.HasField("message"):
        print(f"{indent}  status message: {text_of(task.status.message.parts)}")
    for artifact in task.artifacts:
        name = f" {artifact.name!r}" if artifact.name else ""
        print(f"{indent}  artifact{name}: {text_of(artifact.parts)}")
    for message in task.history:
        print(f"{indent}  history {Role.Name(message.role)}: {text_of(message.parts)}")


def show_event(event: StreamResponse, dump: bool) -> None:
    kind = event.WhichOneof("payload")
    if kind == "task":
        print("  [task]")
        show_task(event.task, indent="    ")
    elif kind == "message":
        print(f"  [message] {Role.Name(event.message.role)}: {text_of(event.message.parts)}")
    elif kind == "status_update":
        update = event.status_update
        extra = ""
        if update.status.HasField("message"):
            extra = f" message: {text_of(update.status.message.parts)}"
        print(f"  [status-update] state={state_name(update.status.state)}{extra}")
    elif kind == "artifact_update":
        update = event.artifact_update
        print(
            f"  [artifact-update] {update.artifact.artifact_id[:8]}... "
            f"{text_of(update.artifact.parts)} append={update.append} "
            f"lastChunk={update.last_chunk}"
        )
    if dump:
        print("    " + MessageToJson(event, indent=None))


def user_message(text: str) -> SendMessageRequest:
    message = Message(message_id=str(uuid.uuid4()), role=Role.ROLE_USER, parts=[Part(text=text)])
    return SendMessageRequest(message=message)


async def transcript(url: str, bindings: list[str], text: str, dump: bool) -> None:
    version = importlib.metadata.version("a2a-sdk")
    async with httpx.AsyncClient(timeout=30) as http:
        print(f"== card: official a2a-sdk {version}, A2ACardResolver({url!r})")
        card = await A2ACardResolver(http, url).get_agent_card()
        show_card(card)
        if dump:
            print(MessageToJson(card, indent=None))
        for binding in bindings:
            config = ClientConfig(
                streaming=False, httpx_client=http, supported_protocol_bindings=[binding]
            )
            client = ClientFactory(config).create(card)
            print(f"\n== send ({binding}, blocking): {text!r}")
            async for event in client.send_message(user_message(text)):
                if event.HasField("task"):
                    show_task(event.task)
                else:
                    show_event(event, dump=False)
                if dump:
                    print("    " + MessageToJson(event, indent=None))

            if not card.capabilities.streaming:
                print(f"\n== stream ({binding}): the card does not declare streaming")
                continue
            config = ClientConfig(
                streaming=True, httpx_client=http, supported_protocol_bindings=[binding]
            )
            client = ClientFactory(config).create(card)
            print(f"\n== stream ({binding}, SendStreamingMessage): {text!r}")
            async for event in client.send_message(user_message(text)):
                show_event(event, dump)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("url", help="the agent's base URL (where its card is served)")
    parser.add_argument(
        "--binding",
        choices=BINDINGS,
        action="append",
        help="the binding to use (repeatable; default: both)",
    )
    parser.add_argument("--text", default="hello from the official a2a-sdk", help="what to send")
    parser.add_argument("--json", action="store_true", help="also print each object as JSON")
    args = parser.parse_args()
    try:
        asyncio.run(transcript(args.url, args.binding or list(BINDINGS), args.text, args.json))
    except Exception as exc:
        print(f"\nFAILED: {type(exc).__name__}: {exc}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
