"""Building a call: a v1.0 request as the `HttpRequest` an interface expects (L1, pure).

One function, `build_request`, for every operation, binding and dialect. The request is
given in the v1.0 model whatever the interface speaks; the operations table converts it for
a v0.3 interface (the same row the server reads the other way). The result is an
`HttpRequest` whose ``base_url`` is the interface's URL and whose ``path`` and ``query`` are
relative to it (``/`` for JSON-RPC, which posts to the URL itself): `request_url` joins them.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Final

import msgspec

from a2a_core._protocol import codec
from a2a_core._protocol.client.cards import Endpoint
from a2a_core._protocol.client.errors import NotInDialectError
from a2a_core._protocol.grpc import binding as grpc_binding
from a2a_core._protocol.grpc import codec as grpc_codec
from a2a_core._protocol.http import Headers, HttpRequest
from a2a_core._protocol.jsonrpc import JsonRpcId
from a2a_core._protocol.media_types import JSON_CONTENT_TYPE
from a2a_core._protocol.operations import OPERATIONS, CallRequest, Operation
from a2a_core._protocol.rest.outgoing import encode_rest_request
from a2a_core.types import SendMessageConfiguration

__all__ = ["build_request", "request_url"]

_EVENT_STREAM: Final = "text/event-stream"


class _JsonRpcCall(msgspec.Struct):
    jsonrpc: str
    id: JsonRpcId
    method: str
    params: msgspec.Raw


_ENCODER: Final = msgspec.json.Encoder()


def _with_tenant(request: Any, tenant: str) -> Any:
    # The card's tenant goes into every request to its interface that names none.
    if tenant and getattr(request, "tenant", None) == "":
        return msgspec.structs.replace(request, tenant=tenant)
    return request


def build_request(
    operation: Operation,
    request: CallRequest,
    endpoint: Endpoint,
    *,
    request_id: JsonRpcId = 1,
    headers: Iterable[tuple[str, str]] = (),
    extensions: Sequence[str] = (),
    last_event_id: str | None = None,
) -> HttpRequest:
    """The HTTP request that calls ``operation`` with ``request`` at ``endpoint``.

    ``request`` is the operation's v1.0 params struct (`OperationSpec.params`). On a gRPC
    endpoint it is the call as the HTTP/2 request it is (path ``/lf.a2a.v1.A2AService/<Rpc>``,
    metadata as headers, the protobuf message as body): the gRPC transport sends its body
    and headers over its channel.
    ``request_id`` is the JSON-RPC id (unused on REST). ``headers`` are added as given (after
    the protocol's own: ``Content-Type``, ``Accept``, ``A2A-Version`` on a v1.0 interface,
    ``A2A-Extensions`` when ``extensions`` are asked for, ``Last-Event-ID`` to resume a
    stream). Raises `NotInDialectError` for an operation the interface's dialect lacks
    (ListTasks in v0.3), and ``TypeError`` when ``request`` is not the operation's struct.
    """
    spec = OPERATIONS[operation]
    if not isinstance(request, spec.params):
        raise TypeError(
            f"{operation.value} takes a {spec.params.__name__}, not {type(request).__name__}"
        )
    if endpoint.binding == "grpc":
        tenanted = _with_tenant(request, endpoint.tenant)
        return _grpc_request(operation, tenanted, endpoint, headers, extensions)
    dialect = endpoint.dialect
    if dialect == "1.0":
        request = _with_tenant(request, endpoint.tenant)
    elif operation is Operation.SEND_MESSAGE and request.configuration is None:
        # v0.3 left `blocking`'s default open, and servers differ (a2a-sdk 0.3's REST
        # binding reads it absent as non-blocking): a blocking send says so.
        request = msgspec.structs.replace(request, configuration=SendMessageConfiguration())
    pairs: list[tuple[str, str]] = [
        ("content-type", JSON_CONTENT_TYPE),
        ("accept", _EVENT_STREAM if spec.streaming else JSON_CONTENT_TYPE),
    ]
    if dialect == "1.0":
        pairs.append(("a2a-version", "1.0"))
    if extensions:
        pairs.append(("a2a-extensions", ", ".join(extensions)))
    if last_event_id is not None:
        pairs.append(("last-event-id", last_event_id))
    pairs.extend(headers)

    if endpoint.binding == "rest":
        rest = encode_rest_request(operation, dialect, request)
        if rest is None:
            raise NotInDialectError(f"{operation.value} is not part of A2A {dialect}")
        if not rest.body:
            pairs = [pair for pair in pairs if pair[0] != "content-type"]
        return HttpRequest(
            method=rest.method,
            path=rest.path,
            query=rest.query,
            headers=Headers(pairs),
            body=rest.body,
            base_url=endpoint.url,
        )

    if dialect == "1.0":
        method, params = operation.value, codec.encode(request)
    else:
        if spec.v0_3_method is None or spec.v0_3_from_v1 is None:
            raise NotInDialectError(f"{operation.value} is not part of A2A {dialect}")
        method, params = spec.v0_3_method, codec.encode(spec.v0_3_from_v1(request))
    body = _ENCODER.encode(_JsonRpcCall("2.0", request_id, method, msgspec.Raw(params)))
    return HttpRequest(
        method="POST", path="/", headers=Headers(pairs), body=body, base_url=endpoint.url
    )


#: The gRPC path of each operation.
_GRPC_PATHS: Final = {m.operation: m.path for m in grpc_binding.METHODS.values()}


def _grpc_request(
    operation: Operation,
    request: Any,
    endpoint: Endpoint,
    headers: Iterable[tuple[str, str]],
    extensions: Sequence[str],
) -> HttpRequest:
    """A gRPC call as the HTTP/2 request it is: the RPC's path, the metadata as headers, the
    protobuf message as body (`a2a_core._protocol.grpc.binding`)."""
    pairs = [("content-type", grpc_binding.CONTENT_TYPE), ("a2a-version", "1.0")]
    if extensions:
        pairs.append(("a2a-extensions", ", ".join(extensions)))
    pairs.extend(headers)
    return HttpRequest(
        method="POST",
        path=_GRPC_PATHS[operation],
        headers=Headers(pairs),
        body=grpc_codec.encode(request),
        base_url=endpoint.url,
    )


def request_url(request: HttpRequest) -> str:
    """The absolute URL of a request from `build_request`: its ``base_url``, its ``path``
    below it (nothing for ``/``), and its query."""
    base = request.base_url or ""
    url = base if request.path == "/" else base.rstrip("/") + request.path
    return f"{url}?{request.query}" if request.query else url
