"""OpenTelemetry over gRPC: the call span follows the RPC conventions and continues the
caller's trace from its ``traceparent`` metadata, into the agent's span."""

from __future__ import annotations

import grpc
import pytest
from a2a.types import a2a_pb2, a2a_pb2_grpc

from a2a_core.server import A2AServer
from a2a_core.types import AgentCapabilities, AgentCard
from a2a_grpc import GrpcServer
from helpers.tracing import AGENT_SPAN, TRACE_ID, TRACEPARENT, tracing

pytestmark = pytest.mark.anyio

SPAN = "lf.a2a.v1.A2AService/"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def test_calls_are_rpc_spans_in_the_callers_trace() -> None:
    card = AgentCard(
        name="Traced",
        description="d",
        supported_interfaces=[],
        version="1",
        capabilities=AgentCapabilities(),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[],
    )
    with tracing() as traced:
        server = A2AServer(
            lambda ctx: "hi", card=card, base_url="http://h", observer=traced.observer
        )
        async with (
            GrpcServer(server) as grpc_server,
            grpc.aio.insecure_channel(grpc_server.address) as channel,
        ):
            service = a2a_pb2_grpc.A2AServiceStub(channel)
            message = a2a_pb2.Message(
                message_id="m", role=a2a_pb2.ROLE_USER, parts=[a2a_pb2.Part(text="x")]
            )
            metadata = tuple(TRACEPARENT.items())
            await service.SendMessage(
                a2a_pb2.SendMessageRequest(message=message), metadata=metadata
            )
            with pytest.raises(grpc.aio.AioRpcError):
                await service.GetTask(a2a_pb2.GetTaskRequest(id="nope"))
        (send,) = await traced.wait_for(SPAN + "SendMessage")
        (get,) = await traced.wait_for(SPAN + "GetTask")
        (agent,) = await traced.wait_for(AGENT_SPAN)
    assert send.attributes is not None and get.attributes is not None
    assert send.attributes["rpc.system"] == "grpc"
    assert send.attributes["rpc.service"] == "lf.a2a.v1.A2AService"
    assert send.attributes["rpc.method"] == "SendMessage"
    assert send.attributes["rpc.grpc.status_code"] == 0
    assert send.attributes["a2a.binding"] == "grpc"
    assert f"{send.context.trace_id:032x}" == TRACE_ID
    assert agent.context.trace_id == send.context.trace_id
    assert get.attributes["rpc.grpc.status_code"] == 5
    assert get.attributes["error.type"] == "TASK_NOT_FOUND"
