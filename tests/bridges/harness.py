"""Serve a bridged agent over real HTTP on 127.0.0.1 and drive it with the official a2a-sdk
1.x client: what every bridge suite shares.

``served(adapter, agent, card)`` runs ``A2AServer(agent, card=card)`` behind the Starlette
adapter (uvicorn) or the aiohttp adapter, and yields a :class:`Peer`: the official client
connected to it over JSON-RPC, with helpers to send, stream and cancel.
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

import anyio
import httpx
from a2a.client import A2ACardResolver, Client, ClientConfig, ClientFactory
from a2a.types.a2a_pb2 import (
    CancelTaskRequest,
    GetTaskRequest,
    Message,
    Part,
    Role,
    SendMessageConfiguration,
    SendMessageRequest,
    StreamResponse,
    Task,
    TaskState,
)
from aiohttp import web

from a2a_aiohttp import a2a_subapp
from a2a_core.server import A2AServer, Agent
from a2a_core.types import AgentCard
from a2a_starlette import A2AStarlette
from interop.servers import PREFIXES, _aiohttp, _bound_socket, _uvicorn

TERMINAL = (
    TaskState.TASK_STATE_COMPLETED,
    TaskState.TASK_STATE_FAILED,
    TaskState.TASK_STATE_CANCELED,
    TaskState.TASK_STATE_REJECTED,
)


@dataclass
class Peer:
    """The official client, connected to a served bridge."""

    client: Client
    server: A2AServer
    url: str

    async def send(self, text: str, *, task_id: str = "", context_id: str = "") -> StreamResponse:
        """A blocking send: its one reply (a task or a message)."""
        events = [e async for e in self.client.send_message(request(text, task_id, context_id))]
        assert len(events) == 1
        return events[0]

    async def start(self, text: str, *, task_id: str = "", context_id: str = "") -> Task:
        """A non-blocking send: the task as soon as it exists."""
        config = SendMessageConfiguration(return_immediately=True)
        req = request(text, task_id, context_id, config)
        events = [e async for e in self.client.send_message(req)]
        assert len(events) == 1
        assert events[0].HasField("task"), events[0]
        return events[0].task

    def stream(
        self, text: str, *, task_id: str = "", context_id: str = ""
    ) -> AsyncIterator[StreamResponse]:
        """A streaming send (the client streams when the card says it may)."""
        return self.client.send_message(request(text, task_id, context_id))

    async def get(self, task_id: str) -> Task:
        return await self.client.get_task(GetTaskRequest(id=task_id))

    async def cancel(self, task_id: str) -> Task:
        return await self.client.cancel_task(CancelTaskRequest(id=task_id))

    async def wait_for(
        self, task_id: str, predicate: Callable[[Task], bool], timeout: float = 10
    ) -> Task:
        """Poll GetTask until ``predicate(task)``."""
        with anyio.fail_after(timeout):
            while True:
                task = await self.get(task_id)
                if predicate(task):
                    return task
                await anyio.sleep(0.02)


def request(
    text: str,
    task_id: str = "",
    context_id: str = "",
    configuration: SendMessageConfiguration | None = None,
) -> SendMessageRequest:
    """A SendMessageRequest with one text part."""
    message = Message(
        message_id=str(uuid.uuid4()),
        role=Role.ROLE_USER,
        parts=[Part(text=text)],
        task_id=task_id,
        context_id=context_id,
    )
    req = SendMessageRequest(message=message)
    if configuration is not None:
        req.configuration.CopyFrom(configuration)
    return req


def joined(parts: Any) -> str:
    """The text of some parts, joined."""
    return "".join(part.text for part in parts)


def artifact_text(task: Task) -> str:
    """The text of every artifact of ``task``, joined."""
    return "".join(joined(artifact.parts) for artifact in task.artifacts)


def status_text(task: Task) -> str:
    return joined(task.status.message.parts)


@contextlib.asynccontextmanager
async def served(
    adapter: str, agent: Agent, card: AgentCard, *, streaming: bool = True
) -> AsyncIterator[Peer]:
    """``agent`` served by ``adapter`` on 127.0.0.1, and the official client connected to it
    (``streaming=False``: the client never streams, whatever the card says)."""
    sock = _bound_socket()
    port = sock.getsockname()[1]
    url = f"http://127.0.0.1:{port}{PREFIXES[adapter]}"
    server = A2AServer(agent, card=card, base_url=url)
    try:
        async with contextlib.AsyncExitStack() as stack:
            if adapter == "starlette":
                await stack.enter_async_context(_uvicorn(A2AStarlette(server), sock))
            else:
                root = web.Application()
                root.add_subapp(PREFIXES[adapter], a2a_subapp(server))
                await stack.enter_async_context(_aiohttp(root, sock))
            http = await stack.enter_async_context(httpx.AsyncClient(timeout=30))
            config = ClientConfig(
                httpx_client=http, supported_protocol_bindings=["JSONRPC"], streaming=streaming
            )
            sdk_card = await A2ACardResolver(http, url).get_agent_card()
            client = ClientFactory(config).create(sdk_card)
            try:
                yield Peer(client, server, url)
            finally:
                await client.close()
    finally:
        sock.close()
