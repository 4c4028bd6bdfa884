"""Why a request was answered without becoming a call (L1, pure): the `Refusal` value.

Most bad requests never become a :class:`~a2a_core.call.Call`: unparsable JSON, an unknown
method, invalid parameters, an unsupported version, a body over the limit, refused
credentials. The protocol answers them itself, and says why in the reply it gives
(`HttpResponse.refusal`), as h11's errors carry the status to answer with: the reason is
known where the reply is made, so nothing reads it back out of the bytes. An operator still
wants such requests counted (a client sending garbage, or a deployment whose clients lost
their credentials, shows up there first): the server tells its observer. The reasons come
from the library's own error table (``A2AError.reason``) or HTTP's status names, never from
the request, so a hostile client cannot make up new metric attributes.
"""

from __future__ import annotations

from typing import Literal

import msgspec

__all__ = ["Refusal", "RefusedAt"]

#: Where a refused request was sent: the JSON-RPC endpoint, the REST routes, the gRPC
#: service, or none of them (a path the server does not serve).
RefusedAt = Literal["jsonrpc", "rest", "grpc", "http"]


class Refusal(msgspec.Struct, frozen=True, gc=False):
    """A request refused before it became a call."""

    binding: RefusedAt
    """Where it was sent."""
    reason: str
    """The error's reason (``JSON_PARSE``, ``METHOD_NOT_FOUND``, ``INVALID_PARAMS``,
    ``UNAUTHENTICATED``...) or, for an error outside any RPC, the HTTP status's name
    (``NOT_FOUND``, ``METHOD_NOT_ALLOWED``)."""
    status: int
    """The HTTP status of the answer (200 for a JSON-RPC error and for gRPC, whose status is
    in its trailers)."""
    code: int | None = None
    """The JSON-RPC error code, on that binding."""
