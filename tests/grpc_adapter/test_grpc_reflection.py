"""Server reflection: the descriptor we build from the schema table is ``a2a.proto`` as the
official SDK's generated code has it, field for field, and a reflection client finds and
calls the service with it."""

from __future__ import annotations

from typing import Any

import anyio
import grpc
import pytest
from a2a.types import a2a_pb2
from google.protobuf import descriptor_pool, message_factory
from grpc_reflection.v1alpha.proto_reflection_descriptor_database import (
    ProtoReflectionDescriptorDatabase,
)

from a2a_core.server import A2AServer
from a2a_core.types import AgentCapabilities, AgentCard
from a2a_grpc import GrpcServer

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _shape(descriptor: Any) -> dict[str, Any]:
    """What a message descriptor says of its wire form and JSON names."""
    return {
        field.name: (
            field.number,
            field.type,
            field.is_repeated,
            field.has_presence,
            field.json_name,
            field.message_type.full_name if field.message_type else None,
            field.enum_type.full_name if field.enum_type else None,
            field.containing_oneof.name if field.containing_oneof else None,
        )
        for field in descriptor.fields
    }


def test_the_descriptor_is_the_official_one() -> None:
    from a2a_grpc._reflection import file_descriptor

    pool = descriptor_pool.DescriptorPool()
    from google.protobuf import descriptor_pb2, empty_pb2, struct_pb2, timestamp_pb2

    for module in (empty_pb2, struct_pb2, timestamp_pb2):
        proto = descriptor_pb2.FileDescriptorProto()
        module.DESCRIPTOR.CopyToProto(proto)
        pool.Add(proto)
    ours = pool.Add(file_descriptor())
    theirs = a2a_pb2.DESCRIPTOR
    assert sorted(ours.message_types_by_name) == sorted(theirs.message_types_by_name)
    for name, message in theirs.message_types_by_name.items():
        assert _shape(ours.message_types_by_name[name]) == _shape(message), name
    assert {n: [v.name for v in e.values] for n, e in ours.enum_types_by_name.items()} == {
        n: [v.name for v in e.values] for n, e in theirs.enum_types_by_name.items()
    }
    ours_service = ours.services_by_name["A2AService"]
    theirs_service = theirs.services_by_name["A2AService"]
    assert [
        (m.name, m.input_type.full_name, m.output_type.full_name, m.server_streaming)
        for m in ours_service.methods
    ] == [
        (m.name, m.input_type.full_name, m.output_type.full_name, m.server_streaming)
        for m in theirs_service.methods
    ]


async def test_a_reflection_client_finds_and_calls_the_service() -> None:
    card = AgentCard(
        name="Reflected",
        description="d",
        supported_interfaces=[],
        version="1",
        capabilities=AgentCapabilities(),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[],
    )
    server = A2AServer(lambda ctx: "hi " + ctx.text, card=card, base_url="http://h")
    async with GrpcServer(server, reflection=True) as grpc_server:

        def reflect() -> tuple[Any, ...]:
            # The tools' synchronous API, in a thread: the server answers on this loop.
            with grpc.insecure_channel(grpc_server.address) as channel:
                database = ProtoReflectionDescriptorDatabase(channel)
                services = database.get_services()
                pool = descriptor_pool.DescriptorPool(database)
                method = pool.FindServiceByName("lf.a2a.v1.A2AService").methods_by_name[
                    "SendMessage"
                ]
                return (
                    services,
                    message_factory.GetMessageClass(method.input_type),
                    message_factory.GetMessageClass(method.output_type),
                )

        services, request_class, reply_class = await anyio.to_thread.run_sync(reflect)
        assert "lf.a2a.v1.A2AService" in services
        request = request_class()
        request.message.message_id = "m1"
        request.message.role = 1
        request.message.parts.add(text="there")
        async with grpc.aio.insecure_channel(grpc_server.address) as channel:
            call = channel.unary_unary(
                "/lf.a2a.v1.A2AService/SendMessage",
                request_serializer=lambda m: m.SerializeToString(),
                response_deserializer=reply_class.FromString,
            )
            reply = await call(request)
    assert reply.task.artifacts[0].parts[0].text == "hi there"
