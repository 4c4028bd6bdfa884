"""The gRPC binding, pure: the service's methods, the protobuf codec, statuses and framing.

The public face of ``a2a_core.grpc``: import these names from here. Nothing here imports
grpc or protobuf; the ``a2aserve-grpc`` package serves and calls with grpc.aio on top of it,
and another transport (an HTTP/2 server, gRPC-Web) can too. See ``docs/grpc.md``.

- `METHODS`: every RPC of ``lf.a2a.v1.A2AService`` by path (`GrpcMethod`: its operation,
  message names, whether it streams);
- `encode_message` / `decode_message`: a v1.0 Struct to protobuf bytes and back, validated as
  JSON is (`DecodeError` otherwise);
- `GrpcStatus`, `status_of`, `status_trailers`, `status_from_trailers`,
  `parse_status_details`: an error as the call's status with its ``google.rpc.Status``
  (``ErrorInfo``, ``BadRequest``), and back;
- `message_frame`, `trailers_frame`, `Deframer`: a stream's length-prefixed messages and
  its final status, as the core's streams carry them;
- `schema`: the table generated from ``a2a.proto`` (messages, enums, RPCs) that the codec
  and the adapter's reflection read.
"""

from a2a_core._protocol.codec import DecodeError
from a2a_core._protocol.grpc import _schema as schema
from a2a_core._protocol.grpc.binding import (
    CODE_NAMES,
    CODES,
    CONTENT_TYPE,
    METHODS,
    OK_STATUS,
    SERVICE,
    STATUS_DETAILS_KEY,
    Deframer,
    GrpcMethod,
    GrpcStatus,
    StatusDetails,
    message_frame,
    parse_status_details,
    status_from_trailers,
    status_of,
    status_trailers,
    trailers_frame,
)
from a2a_core._protocol.grpc.codec import DEFAULT_MAX_DEPTH
from a2a_core._protocol.grpc.codec import decode as decode_message
from a2a_core._protocol.grpc.codec import encode as encode_message

__all__ = [
    "CODES",
    "CODE_NAMES",
    "CONTENT_TYPE",
    "DEFAULT_MAX_DEPTH",
    "METHODS",
    "OK_STATUS",
    "SERVICE",
    "STATUS_DETAILS_KEY",
    "DecodeError",
    "Deframer",
    "GrpcMethod",
    "GrpcStatus",
    "StatusDetails",
    "decode_message",
    "encode_message",
    "message_frame",
    "schema",
    "parse_status_details",
    "status_from_trailers",
    "status_of",
    "status_trailers",
    "trailers_frame",
]
