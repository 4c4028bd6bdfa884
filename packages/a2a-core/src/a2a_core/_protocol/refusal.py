"""What a request answered without becoming a call was refused for (L1, pure).

Most bad requests never become a :class:`~a2a_core.call.Call`: unparsable JSON, an unknown
method, invalid parameters, an unsupported version, a body over the limit, refused
credentials. The protocol answers them itself, with an ordinary response. An operator still
wants them counted (a client sending garbage, or a deployment whose clients lost their
credentials, shows up there first), so :func:`refusal_of` reads the reason back out of the
response the protocol built. It runs only on that error path, and only when the server is
observed. The reasons come from the library's own error table, never from the request, so a
hostile client cannot make up new metric attributes.
"""

from __future__ import annotations

from http import HTTPStatus
from typing import Final, Literal

import msgspec

from a2a_core._protocol.errors import error_class_for_code
from a2a_core._protocol.http import HttpResponse

__all__ = ["Refusal", "RefusedAt", "refusal_of"]

#: Where a refused request was sent: the JSON-RPC endpoint, the REST routes, or neither (a
#: path the server does not serve).
RefusedAt = Literal["jsonrpc", "rest", "http"]


class Refusal(msgspec.Struct, frozen=True, gc=False):
    """A request refused before it became a call."""

    binding: RefusedAt
    """Where it was sent."""
    reason: str
    """The error's reason (``JSON_PARSE``, ``METHOD_NOT_FOUND``, ``INVALID_PARAMS``,
    ``UNAUTHENTICATED``...) or, for an error outside any RPC, the HTTP status's name
    (``NOT_FOUND``, ``METHOD_NOT_ALLOWED``)."""
    status: int
    """The HTTP status of the answer (200 for a JSON-RPC error)."""
    code: int | None = None
    """The JSON-RPC error code, on that binding."""


class _ErrorInfo(msgspec.Struct):
    reason: str | None = None


class _RestStatus(msgspec.Struct):
    details: list[_ErrorInfo] = []


class _RestBody(msgspec.Struct):
    error: _RestStatus | None = None


class _RpcError(msgspec.Struct):
    code: int


class _RpcBody(msgspec.Struct):
    jsonrpc: str  # required: an HTTP-level error body on the JSON-RPC path has none
    error: _RpcError | None = None


_rest_decoder: Final = msgspec.json.Decoder(_RestBody)
_rpc_decoder: Final = msgspec.json.Decoder(_RpcBody)


def refusal_of(binding: RefusedAt, response: HttpResponse) -> Refusal | None:
    """The refusal that ``response`` (sent for a request to ``binding``) answers, or
    ``None`` when it is none: a notification's 204, or a success."""
    status = response.status
    if status == 204:
        return None
    if binding == "jsonrpc":  # an error object, whatever the status (401 carries one too)
        try:
            error = _rpc_decoder.decode(response.body).error
        except msgspec.DecodeError:
            error = None
        if error is not None:
            found = error_class_for_code(error.code)
            reason = found.reason if found is not None else "UNKNOWN"
            return Refusal(binding, reason, status, error.code)
    if status < 400:
        return None
    return Refusal(binding, _rest_reason(response) or _status_name(status), status)


def _rest_reason(response: HttpResponse) -> str | None:
    """The ErrorInfo reason of an AIP-193 body, if it has one."""
    try:
        error = _rest_decoder.decode(response.body).error
    except msgspec.DecodeError:
        return None
    if error is None:
        return None
    for detail in error.details:
        if detail.reason:
            return detail.reason if detail.reason.isidentifier() else None
    return None


def _status_name(status: int) -> str:
    try:
        return HTTPStatus(status).name
    except ValueError:
        return "HTTP_ERROR"
