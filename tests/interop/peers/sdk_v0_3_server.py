"""A peer A2A server on the official ``a2a-sdk`` 0.3.x (Python), for our client's tests.

Run it with the python of the 0.3 virtual environment (``sdk_v0_3_env.py``), not ours:

    <venv>/bin/python sdk_v0_3_server.py --port 0

Binds 127.0.0.1 (port 0: the system picks one), prints ``PORT <n>`` as its first line of
stdout, then serves, until SIGTERM or SIGINT:

- the v0.3 card at ``/.well-known/agent-card.json`` (and the SDK's deprecated
  ``/.well-known/agent.json``): ``url`` is the JSON-RPC endpoint, ``preferredTransport``
  ``JSONRPC``, ``additionalInterfaces`` lists JSON-RPC and HTTP+JSON, ``protocolVersion``
  ``0.3.0``;
- JSON-RPC (v0.3 methods: ``message/send`` ...) at ``/jsonrpc``;
- HTTP+JSON (the v0.3 REST binding) with base URL ``/rest``: ``POST /rest/v1/message:send``...

The agent behaves as the other peers do (see ``README.md`` next to this file): ``stream``,
``wait``, ``ask`` (then any text), ``slow``, anything else is echoed.
"""

from __future__ import annotations

import argparse
import asyncio
import socket
import sys
import uuid

import uvicorn
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.apps import A2AStarletteApplication
from a2a.server.apps.rest.rest_adapter import RESTAdapter
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentSkill,
    Message,
    Part,
    TaskState,
    TextPart,
)
from a2a.utils import new_task
from starlette.applications import Starlette
from starlette.routing import Route

HOST = "127.0.0.1"
JSONRPC_PATH = "/jsonrpc"
REST_PATH = "/rest"
STREAM_CHUNKS = 5
STREAM_PAUSE = 0.05
SLOW_SECONDS = 3.0
QUESTION = "what next?"


def text_part(text: str) -> Part:
    return Part(root=TextPart(text=text))


class PeerExecutor(AgentExecutor):
    """The peers' common agent, on the 0.3 SDK's executor API."""

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        text = context.get_user_input()
        task = context.current_task
        follow_up = task is not None and task.status.state == TaskState.input_required
        if task is None:
            assert context.message is not None
            task = new_task(context.message)
            await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue, task.id, task.context_id)

        def say(reply: str) -> Message:
            return updater.new_agent_message([text_part(reply)])

        if follow_up:
            await updater.complete(say(f"got: {text}"))
            return
        await updater.start_work()
        if text == "stream":
            artifact_id = str(uuid.uuid4())
            for i in range(STREAM_CHUNKS):
                if i:
                    await asyncio.sleep(STREAM_PAUSE)
                await updater.add_artifact(
                    [text_part(f"chunk {i}")],
                    artifact_id=artifact_id,
                    name="chunks",
                    append=i > 0,
                    last_chunk=i == STREAM_CHUNKS - 1,
                )
            await updater.complete()
        elif text == "wait":
            await asyncio.Event().wait()  # until canceled: the SDK cancels this coroutine
        elif text == "ask":
            await updater.requires_input(say(QUESTION), final=True)
        else:
            if text == "slow":
                await asyncio.sleep(SLOW_SECONDS)
            reply = f"echo: {text}"
            await updater.add_artifact([text_part(reply)], name="echo")
            await updater.complete(say(reply))

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        task = context.current_task
        task_id = context.task_id or (task.id if task else "")
        context_id = context.context_id or (task.context_id if task else "")
        await TaskUpdater(event_queue, task_id, context_id).cancel()


def make_card(base_url: str) -> AgentCard:
    jsonrpc_url, rest_url = base_url + JSONRPC_PATH, base_url + REST_PATH
    return AgentCard(
        name="Peer (a2a-sdk 0.3.x)",
        description="Echoes text; 'stream', 'wait', 'ask' and 'slow' do more (see README).",
        url=jsonrpc_url,
        preferred_transport="JSONRPC",
        additional_interfaces=[
            AgentInterface(transport="JSONRPC", url=jsonrpc_url),
            AgentInterface(transport="HTTP+JSON", url=rest_url),
        ],
        protocol_version="0.3.0",
        version="1.0.0",
        capabilities=AgentCapabilities(streaming=True, push_notifications=False),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[
            AgentSkill(
                id="echo",
                name="Echo",
                description="Echoes the text; stream, wait, ask and slow do more.",
                tags=["echo"],
                examples=["hello", "stream", "wait", "ask", "slow"],
            )
        ],
    )


def make_app(base_url: str) -> Starlette:
    card = make_card(base_url)
    handler = DefaultRequestHandler(agent_executor=PeerExecutor(), task_store=InMemoryTaskStore())
    routes = A2AStarletteApplication(agent_card=card, http_handler=handler).routes(
        rpc_url=JSONRPC_PATH
    )
    rest = RESTAdapter(agent_card=card, http_handler=handler)
    routes += [
        Route(REST_PATH + path, endpoint, methods=[method])
        for (path, method), endpoint in rest.routes().items()
    ]
    return Starlette(routes=routes)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0, help="0: any free port")
    args = parser.parse_args()
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((HOST, args.port))
    port = sock.getsockname()[1]
    app = make_app(f"http://{HOST}:{port}")
    print(f"PORT {port}", flush=True)
    config = uvicorn.Config(app, log_level="warning", lifespan="off")
    uvicorn.Server(config).run(sockets=[sock])


if __name__ == "__main__":
    sys.exit(main())
