"""REST error replies: AIP-193 bodies with the status of the table (L1, pure)."""

from __future__ import annotations

from typing import Final

import msgspec

from a2a_core._protocol.errors import (
    A2AError,
    ErrorInfo,
    HttpStatusTable,
    MethodNotFoundError,
    RestErrorBody,
    RestStatus,
    TableName,
    rest_error_body,
)
from a2a_core._protocol.http import RETRY_AFTER_SECONDS, HttpResponse
from a2a_core._protocol.media_types import (
    JSON_CONTENT_TYPE,
)
from a2a_core._protocol.operations import Dialect
from a2a_core._protocol.rest.routes import RouteMiss

#: What responses carry unless the server is configured otherwise.
DEFAULT_CONTENT_TYPE: Final = JSON_CONTENT_TYPE


# ---------------------------------------------------------------------------------------
# Content types and error responses


_ENCODER: Final = msgspec.json.Encoder()
_RETRY_AFTER: Final = ("retry-after", str(RETRY_AFTER_SECONDS))


def _response(
    status: int, body: RestErrorBody, content_type: str, extra: tuple[tuple[str, str], ...] = ()
) -> HttpResponse:
    try:
        data = _ENCODER.encode(body)
    except Exception:  # developer-supplied ErrorInfo metadata that is not a str map
        error = body.error
        details = [
            ErrorInfo(d.type, d.reason, d.domain) if isinstance(d, ErrorInfo) else d
            for d in error.details
        ]
        data = _ENCODER.encode(
            RestErrorBody(
                RestStatus(error.code, error.status, error.message, details),
                body.code,
                body.message,
            )
        )
    if status in (429, 503):  # busy or unavailable for now: say when to come back
        extra = (*extra, _RETRY_AFTER)
    return HttpResponse(status, (("content-type", content_type), *extra), data)


def rest_error_response(
    err: A2AError,
    table: HttpStatusTable | TableName = HttpStatusTable.V1_0_0,
    content_type: str = DEFAULT_CONTENT_TYPE,
    dialect: Dialect = "1.0",
) -> HttpResponse:
    """The REST reply for ``err``: its HTTP status and the AIP-193 ``{"error": ...}`` body.

    Used for both dialects: v0.3 REST never defined an error body (spec-decisions F7), and the
    AIP-193 one is what the v1.0 binding and its TCK expect. On the v0.3 routes
    (``dialect="0.3"``) the body carries the JSON-RPC ``code`` and ``message`` at the top
    level as well, which is what v0.3 REST clients read to raise a typed error.
    """
    status, body = rest_error_body(err, table, dialect)
    return _response(status, body, content_type)


def rest_route_miss_response(
    miss: RouteMiss, content_type: str = DEFAULT_CONTENT_TYPE, dialect: Dialect = "1.0"
) -> HttpResponse:
    """The reply to a `RouteMiss`: 404 (as MethodNotFound), or 405 with an ``Allow`` header.

    ``dialect`` is that of the path's prefix (``/v1/...`` is v0.3), for the body's shape.
    """
    if miss.status == 404:
        return rest_error_response(
            MethodNotFoundError("No such REST route"), content_type=content_type, dialect=dialect
        )
    allow = ", ".join(miss.allow)
    err = MethodNotFoundError(f"Method not allowed; this path allows {allow}")
    _, body = rest_error_body(err, dialect=dialect)
    error = body.error
    status = RestStatus(405, "UNIMPLEMENTED", error.message, error.details)
    return _response(
        405, RestErrorBody(status, body.code, body.message), content_type, (("allow", allow),)
    )
