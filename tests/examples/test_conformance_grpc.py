"""``examples/conformance.py --grpc-port N`` serves what the compatibility kits check over gRPC.

The example runs as users run it (a subprocess per adapter, HTTP and gRPC ports on
127.0.0.1); the calls are made with the official SDK's generated stubs on a grpc.aio
channel, as the kits' gRPC client makes them, with ``a2a-version: 1.0`` on every call.
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import grpc
import httpx
import pytest
from a2a.types import a2a_pb2, a2a_pb2_grpc
from google.rpc import error_details_pb2, status_pb2

from examples.test_examples import CARD_PATH, EXAMPLES, free_port

pytestmark = pytest.mark.anyio

METADATA = (("a2a-version", "1.0"),)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class Example:
    def __init__(self, adapter: str, log: Path) -> None:
        self.port, self.grpc_port = free_port(), free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = log
        command = [
            sys.executable,
            str(EXAMPLES / "conformance.py"),
            "--adapter",
            adapter,
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--grpc-port",
            str(self.grpc_port),
            "--subscribe-delay",
            "0.5",
        ]
        with log.open("wb") as out:
            self.process = subprocess.Popen(
                command, cwd=EXAMPLES.parent, stdout=out, stderr=subprocess.STDOUT
            )

    def wait_ready(self) -> None:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and self.process.poll() is None:
            try:
                if httpx.get(self.url + CARD_PATH, timeout=1).status_code == 200:
                    return
            except httpx.TransportError:
                time.sleep(0.05)
        raise AssertionError(f"the example did not start:\n{self.log.read_text()}")

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


@pytest.fixture(scope="module", params=["starlette", "aiohttp"])
def example(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Example]:
    log = tmp_path_factory.mktemp("grpc-example") / f"{request.param}.log"
    running = Example(request.param, log)
    try:
        running.wait_ready()
        yield running
    finally:
        running.stop()


@pytest.fixture
async def service(example: Example) -> AsyncIterator[a2a_pb2_grpc.A2AServiceStub]:
    async with grpc.aio.insecure_channel(f"127.0.0.1:{example.grpc_port}") as channel:
        yield a2a_pb2_grpc.A2AServiceStub(channel)


def request(message_id: str, text: str = "hi", **fields: Any) -> a2a_pb2.SendMessageRequest:
    message = a2a_pb2.Message(
        message_id=message_id, role=a2a_pb2.ROLE_USER, parts=[a2a_pb2.Part(text=text)], **fields
    )
    return a2a_pb2.SendMessageRequest(message=message)


def reason_of(exc: grpc.aio.AioRpcError) -> str:
    status = status_pb2.Status()
    for key, value in exc.trailing_metadata() or ():
        if key == "grpc-status-details-bin":
            status.ParseFromString(value)
    info = error_details_pb2.ErrorInfo()
    assert status.details[0].Unpack(info)
    assert (status.code, status.message) == (exc.code().value[0], exc.details())
    return str(info.reason)


def test_the_card_lists_grpc_at_localhost(example: Example) -> None:
    card = httpx.get(example.url + CARD_PATH, timeout=5).json()
    interfaces = [(i["protocolBinding"], i["url"]) for i in card["supportedInterfaces"]]
    assert interfaces[0][0] == "JSONRPC"
    assert interfaces[-1] == ("GRPC", f"localhost:{example.grpc_port}")
    assert "127.0.0.1" not in str(card)


async def test_artifact_and_message_prefixes(service: a2a_pb2_grpc.A2AServiceStub) -> None:
    task = (await service.SendMessage(request("tck-artifact-data-1"), metadata=METADATA)).task
    assert task.status.state == a2a_pb2.TASK_STATE_COMPLETED
    data = task.artifacts[0].parts[0].data.struct_value
    assert (data["key"], data["count"]) == ("value", 42)
    reply = await service.SendMessage(request("tck-message-response-1"), metadata=METADATA)
    assert reply.WhichOneof("payload") == "message"
    assert reply.message.parts[0].text == "Direct message response"
    hello = (await service.SendMessage(request("tck-something-new-1"), metadata=METADATA)).task
    assert hello.status.message.parts[0].text == "Hello from TCK"


async def test_input_required_then_cancel(service: a2a_pb2_grpc.A2AServiceStub) -> None:
    task = (await service.SendMessage(request("tck-input-required-1"), metadata=METADATA)).task
    assert task.status.state == a2a_pb2.TASK_STATE_INPUT_REQUIRED
    cancel = a2a_pb2.CancelTaskRequest(id=task.id)
    canceled = await service.CancelTask(cancel, metadata=METADATA)
    assert canceled.status.state == a2a_pb2.TASK_STATE_CANCELED
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await service.CancelTask(cancel, metadata=METADATA)
    assert caught.value.code() is grpc.StatusCode.FAILED_PRECONDITION
    assert reason_of(caught.value) == "TASK_NOT_CANCELABLE"


async def test_stream_artifact_chunked(service: a2a_pb2_grpc.A2AServiceStub) -> None:
    call = service.SendStreamingMessage(
        request("tck-stream-artifact-chunked-1", "chunks"), metadata=METADATA
    )
    events = [event async for event in call]
    assert [e.WhichOneof("payload") for e in events] == [
        "task",
        "status_update",
        "artifact_update",
        "artifact_update",
        "status_update",
    ]
    first, last = events[2].artifact_update, events[3].artifact_update
    assert (first.artifact.parts[0].text, first.append, first.last_chunk) == (
        "chunk-1 ",
        False,
        False,
    )
    assert (last.artifact.parts[0].text, last.append, last.last_chunk) == ("chunk-2", True, True)
    assert events[-1].status_update.status.state == a2a_pb2.TASK_STATE_COMPLETED


async def test_extended_card_for_anonymous_callers(service: a2a_pb2_grpc.A2AServiceStub) -> None:
    card = await service.GetExtendedAgentCard(
        a2a_pb2.GetExtendedAgentCardRequest(), metadata=METADATA
    )
    assert card.skills[0].id == "conformance-extended"
    assert card.supported_interfaces[-1].protocol_binding == "GRPC"


async def test_subscription_to_an_input_required_task_until_completed(
    service: a2a_pb2_grpc.A2AServiceStub,
) -> None:
    task = (await service.SendMessage(request("tck-input-required-sub"), metadata=METADATA)).task
    call = service.SubscribeToTask(a2a_pb2.SubscribeToTaskRequest(id=task.id), metadata=METADATA)
    events = []
    async for event in call:
        events.append(event)
        if len(events) == 1:
            follow_up = request("tck-complete-task-sub", "done", task_id=task.id)
            done = await service.SendMessage(follow_up, metadata=METADATA)
            assert done.task.status.state == a2a_pb2.TASK_STATE_COMPLETED
    assert events[0].task.status.state == a2a_pb2.TASK_STATE_INPUT_REQUIRED
    assert events[-1].status_update.status.state == a2a_pb2.TASK_STATE_COMPLETED
    with pytest.raises(grpc.aio.AioRpcError) as caught:  # terminal: nothing to subscribe to
        async for _ in service.SubscribeToTask(
            a2a_pb2.SubscribeToTaskRequest(id=task.id), metadata=METADATA
        ):
            pass
    assert caught.value.code() is grpc.StatusCode.UNIMPLEMENTED
    assert reason_of(caught.value) == "UNSUPPORTED_OPERATION"


async def test_errors_and_versions(service: a2a_pb2_grpc.A2AServiceStub) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await service.GetTask(a2a_pb2.GetTaskRequest(id="no-such-task"), metadata=METADATA)
    assert caught.value.code() is grpc.StatusCode.NOT_FOUND
    assert reason_of(caught.value) == "TASK_NOT_FOUND"
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await service.GetTask(
            a2a_pb2.GetTaskRequest(id="no-such-task"), metadata=(("a2a-version", "2.0"),)
        )
    assert caught.value.code() is grpc.StatusCode.UNIMPLEMENTED
    assert reason_of(caught.value) == "VERSION_NOT_SUPPORTED"
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await service.SendMessage(a2a_pb2.SendMessageRequest(), metadata=METADATA)
    assert caught.value.code() is grpc.StatusCode.INVALID_ARGUMENT
    assert reason_of(caught.value) == "INVALID_PARAMS"
