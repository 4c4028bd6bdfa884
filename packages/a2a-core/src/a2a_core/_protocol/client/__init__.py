"""The client's protocol (L1, pure): calls built as values, replies read into values.

The same split as the server's `ServerProtocol`: no sockets, no clock, no ``await``. Whoever
owns the I/O (`a2a_core.client.A2AClient` on httpx, a test, another transport) sends the
`HttpRequest` that `build_request` returns and hands the reply to `read_reply`, or a stream's
bytes to a `StreamDecoder`. `parse_card` and `choose_interface` say where to call.

- `cards`: the card in either version, and the choice of an `Endpoint`;
- `requests`: `build_request`, `request_url`;
- `replies`: `read_reply`, `read_error`;
- `grpc`: `read_grpc_reply`, `read_grpc_event`, `grpc_error` (gRPC's replies);
- `streams`: `StreamDecoder`, `ReceivedEvent`;
- `errors`: `ClientError` and its kinds.
"""

from a2a_core._protocol.client.cards import (
    BINDING_NAMES,
    HTTP_BINDINGS,
    CardBinding,
    Endpoint,
    choose_interface,
    parse_card,
)
from a2a_core._protocol.client.errors import (
    AgentError,
    ClientError,
    InvalidReplyError,
    NotInDialectError,
    NoUsableInterfaceError,
)
from a2a_core._protocol.client.grpc import grpc_error, read_grpc_event, read_grpc_reply
from a2a_core._protocol.client.replies import read_error, read_reply, result_from_json
from a2a_core._protocol.client.requests import build_request, request_url
from a2a_core._protocol.client.streams import ReceivedEvent, StreamDecoder

__all__ = [
    "BINDING_NAMES",
    "HTTP_BINDINGS",
    "AgentError",
    "CardBinding",
    "ClientError",
    "Endpoint",
    "InvalidReplyError",
    "NoUsableInterfaceError",
    "NotInDialectError",
    "ReceivedEvent",
    "StreamDecoder",
    "build_request",
    "choose_interface",
    "grpc_error",
    "parse_card",
    "read_error",
    "read_grpc_event",
    "read_grpc_reply",
    "read_reply",
    "request_url",
    "result_from_json",
]
