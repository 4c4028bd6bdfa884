"""The official ``a2a-sdk`` 1.x client's side of the interop suites: its configuration per
binding, and requests and checks the tests share (``test_sdk_v1.py``, ``test_sdk_grpc.py``).
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from typing import Any

import anyio
import grpc
import httpx
from a2a.client import Client, ClientConfig
from a2a.client.transports.grpc import GrpcTransport
from a2a.types.a2a_pb2 import (
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

OPEN_STATES = (TaskState.TASK_STATE_SUBMITTED, TaskState.TASK_STATE_WORKING)


def client_config(binding: str, http: httpx.AsyncClient, **options: Any) -> ClientConfig:
    """The SDK's configuration for ``binding``. For gRPC as a real client would have it:
    gRPC preferred over JSON-RPC (the client's order wins over the card's, where JSON-RPC
    comes first), channels from ``grpc.aio.insecure_channel``."""
    if binding != "GRPC":
        return ClientConfig(httpx_client=http, supported_protocol_bindings=[binding], **options)
    return ClientConfig(
        httpx_client=http,
        grpc_channel_factory=grpc.aio.insecure_channel,
        supported_protocol_bindings=["GRPC", "JSONRPC"],
        use_client_preference=True,
        **options,
    )


def check_transport(client: Client, binding: str) -> Client:
    """``client`` speaks ``binding`` (gRPC could fall back to JSON-RPC unnoticed otherwise;
    ``_transport`` is the SDK's ``BaseClient`` attribute)."""
    is_grpc = isinstance(client._transport, GrpcTransport)  # type: ignore[attr-defined]
    assert is_grpc == (binding == "GRPC")
    return client


def request(
    text: str,
    *,
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


async def collect(events: AsyncIterator[StreamResponse]) -> list[StreamResponse]:
    """Every event of a stream."""
    return [event async for event in events]


async def send_one(client: Client, req: SendMessageRequest) -> StreamResponse:
    """The single response of a non-streaming send."""
    events = await collect(client.send_message(req))
    assert len(events) == 1
    return events[0]


async def start_held(client: Client) -> Task:
    """A task that stays WORKING until released (non-blocking send)."""
    reply = await send_one(
        client, request("hold", configuration=SendMessageConfiguration(return_immediately=True))
    )
    assert reply.HasField("task")
    assert reply.task.status.state in OPEN_STATES
    return reply.task


async def release(client: Client, task_id: str) -> None:
    """Release a held task (the agent answers with a message, not a task)."""
    reply = await send_one(client, request(f"release {task_id}"))
    assert reply.WhichOneof("payload") == "message"
    assert reply.message.role == Role.ROLE_AGENT
    assert reply.message.parts[0].text == f"released {task_id}"


async def wait_for_state(client: Client, task_id: str, state: TaskState.ValueType) -> Task:
    """Poll GetTask until the task reaches ``state``."""
    with anyio.fail_after(10):
        while True:
            task = await client.get_task(GetTaskRequest(id=task_id))
            if task.status.state == state:
                return task
            await anyio.sleep(0.02)


def texts(parts: object) -> list[str]:
    return [part.text for part in parts]  # type: ignore[attr-defined]
