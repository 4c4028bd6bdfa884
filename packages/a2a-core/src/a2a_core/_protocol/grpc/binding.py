"""The gRPC binding's facts (L1, pure): methods, status codes, ``google.rpc.Status``, framing.

A gRPC call is an HTTP/2 request, and the core sees it as one: an `HttpRequest` with method
``POST``, path ``/lf.a2a.v1.A2AService/<Rpc>``, the call's metadata as headers (``content-type:
application/grpc``, ``a2a-version``, ``authorization``...) and the request message's bytes
as body. What the core answers is what goes on that HTTP/2 stream:

- a unary reply: an `HttpResponse` whose body is the response message and whose
  ``trailers`` say ``grpc-status: 0``; an error: no body, and trailers with the status code,
  ``grpc-message`` and ``grpc-status-details-bin`` (a ``google.rpc.Status`` carrying the
  ``ErrorInfo``, base64 as binary metadata is on the wire);
- a stream: an `SseResponse` whose frames are gRPC length-prefixed messages, and, when it
  fails, one last *trailers frame* (flag ``0x80``, the gRPC-Web encoding of trailers) with
  the status. `Deframer` reads them back into messages and a final `GrpcStatus`.

The grpc.aio adapter (``a2a_grpc``) turns these into its calls; another transport (an HTTP/2
server, gRPC-Web) could write them as they are.
"""

from __future__ import annotations

import base64
import dataclasses
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, Final
from urllib.parse import quote, unquote

from a2a_core._protocol.errors import (
    A2AError,
    BadRequest,
    ErrorInfo,
    HttpStatusTable,
    TableName,
    grpc_status_for,
)
from a2a_core._protocol.grpc import codec
from a2a_core._protocol.grpc._schema import PACKAGE, RPCS
from a2a_core._protocol.operations import OPERATIONS, Operation

__all__ = [
    "CODES",
    "CODE_NAMES",
    "CONTENT_TYPE",
    "METHODS",
    "OK_STATUS",
    "SERVICE",
    "STATUS_DETAILS_KEY",
    "Deframer",
    "GrpcMethod",
    "GrpcStatus",
    "StatusDetails",
    "message_frame",
    "parse_status_details",
    "status_from_trailers",
    "status_of",
    "status_trailers",
    "trailers_frame",
]

#: The fully-qualified service name.
SERVICE: Final = f"{PACKAGE}.A2AService"
#: The content type of gRPC requests and replies (``application/grpc+proto`` is the same).
CONTENT_TYPE: Final = "application/grpc"
#: The trailer that carries the serialized ``google.rpc.Status``.
STATUS_DETAILS_KEY: Final = "grpc-status-details-bin"

#: The canonical status codes by name (grpc's ``StatusCode`` numbers).
CODES: Final[Mapping[str, int]] = MappingProxyType(
    {
        "OK": 0,
        "CANCELLED": 1,
        "UNKNOWN": 2,
        "INVALID_ARGUMENT": 3,
        "DEADLINE_EXCEEDED": 4,
        "NOT_FOUND": 5,
        "ALREADY_EXISTS": 6,
        "PERMISSION_DENIED": 7,
        "RESOURCE_EXHAUSTED": 8,
        "FAILED_PRECONDITION": 9,
        "ABORTED": 10,
        "OUT_OF_RANGE": 11,
        "UNIMPLEMENTED": 12,
        "INTERNAL": 13,
        "UNAVAILABLE": 14,
        "DATA_LOSS": 15,
        "UNAUTHENTICATED": 16,
    }
)
#: The names by code.
CODE_NAMES: Final[Mapping[int, str]] = MappingProxyType({v: k for k, v in CODES.items()})

_ERROR_INFO_URL: Final = "type.googleapis.com/google.rpc.ErrorInfo"
_BAD_REQUEST_URL: Final = "type.googleapis.com/google.rpc.BadRequest"


@dataclasses.dataclass(frozen=True, slots=True)
class GrpcMethod:
    """One RPC of the service: its operation, message names and whether it streams."""

    name: str
    """The RPC's name (``SendMessage``)."""
    path: str
    """The HTTP/2 path (``/lf.a2a.v1.A2AService/SendMessage``)."""
    operation: Operation
    """The A2A operation."""
    request: str
    """The request message's name."""
    response: str
    """The response message's name (``StreamResponse`` for both streaming RPCs)."""
    streaming: bool
    """Server streaming."""


#: Every RPC by path. The generated table and the operations table must agree: each RPC is
#: an operation with the same name, and streams where the operation streams.
METHODS: Final[Mapping[str, GrpcMethod]] = MappingProxyType(
    {
        f"/{SERVICE}/{rpc}": GrpcMethod(
            rpc, f"/{SERVICE}/{rpc}", Operation(rpc), request, response, streaming
        )
        for rpc, request, response, streaming in RPCS
    }
)
assert {m.operation for m in METHODS.values()} == set(OPERATIONS), "an operation without an RPC"
assert all(m.streaming == OPERATIONS[m.operation].streaming for m in METHODS.values())


@dataclasses.dataclass(frozen=True, slots=True)
class GrpcStatus:
    """The status a call ends with: code, message, and the ``google.rpc.Status`` bytes."""

    code: int
    """The canonical code (0 is OK)."""
    message: str = ""
    """``grpc-message``."""
    details: bytes = b""
    """The serialized ``google.rpc.Status`` (``grpc-status-details-bin``), or empty."""

    @property
    def name(self) -> str:
        """The code's canonical name (``NOT_FOUND``)."""
        return CODE_NAMES.get(self.code, "UNKNOWN")


OK_STATUS: Final = GrpcStatus(0)


def _any(type_url: str, message: str, tree: dict[str, Any]) -> dict[str, Any]:
    return {"typeUrl": type_url, "value": codec.encode_tree(tree, message)}


def status_of(
    err: A2AError, table: HttpStatusTable | TableName = HttpStatusTable.V1_0_0
) -> GrpcStatus:
    """The status that reports ``err``: the code from the error table's edition, the
    message, and a ``google.rpc.Status`` with exactly that code and message (clients check
    both against the call's) carrying the ``ErrorInfo`` and, for invalid params with field
    violations, a ``BadRequest``."""
    code = CODES[grpc_status_for(err, table)]
    info = ErrorInfo(_ERROR_INFO_URL, err.reason, err.domain, err.metadata)
    info_tree: dict[str, Any] = {"reason": info.reason, "domain": info.domain}
    if info.metadata:
        info_tree["metadata"] = info.metadata
    details = [_any(_ERROR_INFO_URL, "ErrorInfo", info_tree)]
    violations = getattr(err, "field_violations", None)
    if violations:
        bad = BadRequest(_BAD_REQUEST_URL, violations)
        tree = {
            "fieldViolations": [
                {"field": v.field, "description": v.description} for v in bad.field_violations
            ]
        }
        details.append(_any(_BAD_REQUEST_URL, "BadRequest", tree))
    status = {"code": code, "message": err.message, "details": details}
    return GrpcStatus(code, err.message, codec.encode_tree(status, "Status"))


@dataclasses.dataclass(frozen=True, slots=True)
class StatusDetails:
    """What a ``google.rpc.Status`` says, read back (for clients)."""

    code: int
    """Its code."""
    message: str
    """Its message."""
    reason: str = ""
    """The ``ErrorInfo`` reason (``TASK_NOT_FOUND``), empty without one."""
    domain: str = ""
    """The ``ErrorInfo`` domain."""
    metadata: Mapping[str, str] = dataclasses.field(default_factory=dict)
    """The ``ErrorInfo`` metadata."""
    field_violations: tuple[tuple[str, str], ...] = ()
    """``(field, description)`` of a ``BadRequest``."""


def parse_status_details(data: bytes) -> StatusDetails:
    """Read a serialized ``google.rpc.Status`` (details of other types are skipped).
    Raises `~a2a_core.codec.DecodeError` for bytes that are none."""
    tree = codec.decode_tree(data, "Status")
    found = StatusDetails(tree.get("code", 0), tree.get("message", ""))
    for detail in tree.get("details", ()):
        url, value = detail.get("typeUrl", ""), detail.get("value", b"")
        if url == _ERROR_INFO_URL:
            info = codec.decode_tree(value, "ErrorInfo")
            found = dataclasses.replace(
                found,
                reason=info.get("reason", ""),
                domain=info.get("domain", ""),
                metadata=info.get("metadata", {}),
            )
        elif url == _BAD_REQUEST_URL:
            bad = codec.decode_tree(value, "BadRequest")
            pairs = tuple(
                (v.get("field", ""), v.get("description", ""))
                for v in bad.get("fieldViolations", ())
            )
            found = dataclasses.replace(found, field_violations=pairs)
    return found


#: What ``grpc-message`` keeps as it is: printable ASCII but ``%`` (the gRPC spec's rule).
_MESSAGE_SAFE: Final = "".join(chr(c) for c in range(0x20, 0x7F) if chr(c) != "%")


def status_trailers(status: GrpcStatus) -> tuple[tuple[str, str], ...]:
    """The trailers that end a call with ``status``, as on the HTTP/2 wire (the message
    percent-encoded, the details base64)."""
    trailers = [("grpc-status", str(status.code))]
    if status.message:
        trailers.append(("grpc-message", quote(status.message, safe=_MESSAGE_SAFE)))
    if status.details:
        trailers.append((STATUS_DETAILS_KEY, base64.b64encode(status.details).decode()))
    return tuple(trailers)


def status_from_trailers(trailers: Mapping[str, str] | tuple[tuple[str, str], ...]) -> GrpcStatus:
    """The `GrpcStatus` that trailers (as `status_trailers` writes them) report."""
    items = dict(trailers.items() if isinstance(trailers, Mapping) else trailers)
    raw_code = items.get("grpc-status", "2")
    code = int(raw_code) if raw_code.isdigit() else CODES["UNKNOWN"]
    details = items.get(STATUS_DETAILS_KEY, "")
    try:
        detail_bytes = base64.b64decode(details + "=" * (-len(details) % 4)) if details else b""
    except ValueError:
        detail_bytes = b""
    return GrpcStatus(code, unquote(items.get("grpc-message", "")), detail_bytes)


# --- framing ---------------------------------------------------------------------------------

_TRAILERS_FLAG: Final = 0x80


def message_frame(message: bytes) -> bytes:
    """One length-prefixed message, as a gRPC stream carries it."""
    return b"\x00" + len(message).to_bytes(4, "big") + message


def trailers_frame(status: GrpcStatus) -> bytes:
    """The frame that ends a stream with ``status`` (gRPC-Web's trailers frame)."""
    block = "".join(f"{name}: {value}\r\n" for name, value in status_trailers(status)).encode()
    return bytes((_TRAILERS_FLAG,)) + len(block).to_bytes(4, "big") + block


def _status_of_block(block: bytes) -> GrpcStatus:
    """The status carried by a trailers frame's block (``name: value`` lines)."""
    pairs = []
    for line in block.decode("latin-1").split("\r\n"):
        name, sep, value = line.partition(":")
        if sep:
            pairs.append((name.strip().lower(), value.strip()))
    return status_from_trailers(tuple(pairs))


class Deframer:
    """Reads a stream's frames back from chunks cut anywhere: each message's bytes, and the
    final `GrpcStatus` when the stream ends with a trailers frame.

    A message whose bytes come as one chunk right after its 5-byte head (the server's
    shared payloads, `EventStream.whole_frames`) is that very chunk, not a copy: a task of
    12 MiB sent to 60 subscribers is one bytes object until the transport takes it.
    """

    __slots__ = ("_buffer",)

    def __init__(self) -> None:
        self._buffer = bytearray()

    def feed(self, chunk: bytes) -> list[bytes | GrpcStatus]:
        """The frames completed by ``chunk``, in order."""
        buffer = self._buffer
        if (
            len(buffer) == 5
            and not buffer[0] & _TRAILERS_FLAG
            and int.from_bytes(buffer[1:5], "big") == len(chunk)
        ):
            buffer.clear()
            return [bytes(chunk)]  # bytes(...) of a bytes object is that object
        # Parsed from the chunk itself when nothing is held: no copy into the buffer.
        data: bytes | bytearray = chunk
        if buffer:
            buffer += chunk
            data = buffer
        out: list[bytes | GrpcStatus] = []
        at = 0
        while len(data) - at >= 5:
            size = int.from_bytes(data[at + 1 : at + 5], "big")
            end = at + 5 + size
            if end > len(data):
                break
            flag = data[at]
            payload = bytes(data[at + 5 : end])
            if flag & _TRAILERS_FLAG:
                out.append(_status_of_block(payload))
            else:
                out.append(payload)
            at = end
        if data is buffer:
            del buffer[:at]
        else:
            buffer += chunk[at:]
        return out

    @property
    def pending(self) -> int:
        """Bytes of an incomplete frame still held."""
        return len(self._buffer)
