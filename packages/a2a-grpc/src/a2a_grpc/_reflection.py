"""gRPC server reflection (``grpc.reflection.v1alpha``), for grpcurl, Postman and friends.

Reflection serves the service's file descriptor. We ship no generated code, so the
descriptor is built here from the same schema table the codec works from (generated from
``a2a.proto``), into a descriptor pool of its own: it never meets the default pool, where
another library (the official SDK's ``a2a_pb2``) may hold the same names. Needs the
``a2aserve-grpc[reflection]`` extra (grpcio-reflection, which brings protobuf).
"""

from __future__ import annotations

from typing import Any, Final

from a2a_core.grpc import SERVICE, schema

__all__ = ["add_reflection", "file_descriptor"]

#: The messages of ``wellknown.proto``: Google's, served from their own files.
_GOOGLE: Final = frozenset(
    {
        "Struct",
        "Value",
        "ListValue",
        "Timestamp",
        "Empty",
        "Any",
        "Status",
        "ErrorInfo",
        "BadRequest",
        "FieldViolation",
    }
)
_WELL_KNOWN_TYPES: Final = {
    "struct": ".google.protobuf.Struct",
    "value": ".google.protobuf.Value",
    "timestamp": ".google.protobuf.Timestamp",
}


def _camel(name: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in name.split("_"))


def file_descriptor() -> Any:
    """``a2a.proto`` as a ``FileDescriptorProto``, from the schema table."""
    from google.protobuf import descriptor_pb2 as d

    field_type = d.FieldDescriptorProto
    scalars = {
        "string": field_type.TYPE_STRING,
        "bytes": field_type.TYPE_BYTES,
        "bool": field_type.TYPE_BOOL,
        "int32": field_type.TYPE_INT32,
        "int64": field_type.TYPE_INT64,
        "double": field_type.TYPE_DOUBLE,
    }
    package = schema.PACKAGE

    def set_type(field: Any, kind: str, ref: str) -> None:
        if kind in scalars:
            field.type = scalars[kind]
        elif kind == "enum":
            field.type, field.type_name = field_type.TYPE_ENUM, f".{package}.{ref}"
        elif kind == "message":
            field.type, field.type_name = field_type.TYPE_MESSAGE, f".{package}.{ref}"
        else:
            field.type, field.type_name = field_type.TYPE_MESSAGE, _WELL_KNOWN_TYPES[kind]

    proto = d.FileDescriptorProto(name="a2a.proto", package=package, syntax="proto3")
    proto.dependency.extend(
        [
            "google/protobuf/empty.proto",
            "google/protobuf/struct.proto",
            "google/protobuf/timestamp.proto",
        ]
    )
    for name, fields in schema.MESSAGES.items():
        if name in _GOOGLE:
            continue
        message = proto.message_type.add(name=name)
        groups = list(dict.fromkeys(f[6] for f in fields if f[6]))
        for group in groups:
            message.oneof_decl.add(name=group)
        for number, json_name, kind, label, ref, field_name, oneof in fields:
            field = message.field.add(name=field_name, number=number, json_name=json_name)
            field.label = field_type.LABEL_OPTIONAL
            if label == 3:
                entry = message.nested_type.add(name=f"{_camel(field_name)}Entry")
                entry.options.map_entry = True
                key = entry.field.add(name="key", number=1, json_name="key")
                key.label, key.type = field_type.LABEL_OPTIONAL, field_type.TYPE_STRING
                value = entry.field.add(name="value", number=2, json_name="value")
                value.label = field_type.LABEL_OPTIONAL
                set_type(value, kind, ref)
                field.label = field_type.LABEL_REPEATED
                field.type = field_type.TYPE_MESSAGE
                field.type_name = f".{package}.{name}.{entry.name}"
                continue
            set_type(field, kind, ref)
            if label == 2:
                field.label = field_type.LABEL_REPEATED
            elif oneof:
                field.oneof_index = groups.index(oneof)
            elif label == 1:
                # proto3 `optional`: a synthetic oneof, after the real ones.
                field.proto3_optional = True
                field.oneof_index = len(message.oneof_decl)
                message.oneof_decl.add(name=f"_{field_name}")
    for name, values in schema.ENUMS.items():
        if name == "NullValue":
            continue
        enum = proto.enum_type.add(name=name)
        for number, value_name in enumerate(values):
            enum.value.add(name=value_name, number=number)
    service = proto.service.add(name=SERVICE.rsplit(".", 1)[1])
    for rpc, request, response, streaming in schema.RPCS:
        method = service.method.add(name=rpc)
        method.input_type = f".{package}.{request}"
        method.output_type = (
            ".google.protobuf.Empty" if response == "Empty" else f".{package}.{response}"
        )
        method.server_streaming = streaming
    return proto


def add_reflection(grpc_server: Any) -> None:
    """Serve reflection for the A2A service (and reflection itself) on ``grpc_server``."""
    try:
        from google.protobuf import (
            descriptor_pb2,
            descriptor_pool,
            empty_pb2,
            struct_pb2,
            timestamp_pb2,
        )
        from grpc_reflection.v1alpha import reflection
    except ImportError:  # pragma: no cover - the extra is installed in the workspace
        raise RuntimeError(
            "reflection=True needs grpcio-reflection: pip install grpcio-reflection"
        ) from None
    pool = descriptor_pool.DescriptorPool()
    for module in (empty_pb2, struct_pb2, timestamp_pb2):
        google = descriptor_pb2.FileDescriptorProto()
        module.DESCRIPTOR.CopyToProto(google)
        pool.Add(google)
    pool.Add(file_descriptor())
    reflection.enable_server_reflection((SERVICE, reflection.SERVICE_NAME), grpc_server, pool=pool)
