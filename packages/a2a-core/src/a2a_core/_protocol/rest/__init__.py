"""The HTTP+JSON (REST) binding: its route table and its request and response codec (L1, pure).

This package owns what makes REST different from JSON-RPC; everything after it (the L2 calls,
the error table) is shared. Like the JSON-RPC module it is a codec plus a table, one module a
section (`routes`, `query`, `requests`, `results`, `error_replies`); every public name is
importable from ``a2a_core.rest`` itself:

- the **route table** (`ROUTES`, spec-decisions F1, F11): the v1.0 routes, each also under
  ``/{tenant}/``, and the v0.3 routes under ``/v1/``, each mapped to a version-neutral
  `Operation`; `match_route` turns a method and a path into a `RouteMatch` or a `RouteMiss`
  (404: no such path; 405: the path exists for other methods, listed for ``Allow``);
- `decode_rest_request`: path parameters, query parameters and body to the **v1.0 request**
  of the operation, whichever dialect the route speaks (v0.3 bodies are the ProtoJSON of the
  v0.3 proto, converted by :mod:`a2a_core.compat.v0_3.rest_convert`);
- `encode_rest_result` and `encode_rest_stream_event`: a v1.0 result or stream event to the
  bytes of the route's dialect;
- the request ``Content-Type`` check and the AIP-193 error responses.

Decisions, each tested:

- **``/v1/`` is v0.3.** A path whose first segment is ``v1`` is matched against the v0.3 routes
  only, so ``GET /v1/tasks/x`` is the v0.3 GetTask and never the v1.0 GetTask of a tenant
  named ``v1``; a ``/v1/`` path no v0.3 route knows (``GET /v1/tasks``: v0.3 has no list) is
  a 404. The tenant ``v1`` is therefore unreachable over REST unless the server does not serve
  v0.3 REST (``match_route(..., v0_3=False)``), in which case ``/v1/...`` is tenant ``v1``.
- **Routes without a tenant win** over tenant-prefixed ones when both match a path
  (``GET /tasks/x`` is GetTask, not ListTasks of a tenant called ``tasks``).
- **Paths are matched raw.** ``path`` must be the raw, still percent-encoded path (ASGI's
  ``raw_path``, not the decoded ``path``); each segment is percent-decoded after splitting on
  ``/``, so an id may hold any character but ``/`` (``%2F`` in an id, invalid UTF-8, or an
  empty segment is a 404). The custom verb (``:cancel``, ``:subscribe``) is recognised on the
  raw last segment before decoding: ``/tasks/a:b:cancel`` cancels task ``a:b``. A last
  segment ending in a verb belongs to the verb's route whenever that route fits the path
  (``GET /tasks/x:cancel`` is a 405, not GetTask of ``x:cancel``; such an id is written
  ``x%3Acancel``), and is an ordinary id elsewhere (config ``c:cancel``). No trailing-slash
  or case folding of paths; methods are compared upper-cased. A 404 answers as
  MethodNotFound; a 405 carries ``Allow`` and the status ``UNIMPLEMENTED``.
- **Query parameters** (`parse_query`): camelCase or snake_case names; booleans ``true`` /
  ``false`` (any case); enums by name (any case) or number; timestamps ISO 8601 with ``Z`` or
  an offset (a ``+`` that arrived as a space is restored; a zone-less time is UTC); int32
  in decimal; repeated fields as repeated parameters and/or comma lists; an empty value means
  "not given"; a scalar given twice, a nested name (``a.b``, ``a[b]``) for a known field, or a
  bad value is InvalidParams naming the parameter. Unknown parameters (``A2A-Version``...)
  are ignored. ``tenant`` comes only from the path.
- **Bodies.** An empty body is ``{}``. Malformed JSON is `JSONParseError`, a well-formed
  body of the wrong shape is `InvalidParamsError` (both answer HTTP 400). Bodies of GET and
  DELETE routes are ignored, and so is the query string of routes that take a body. A value
  the path also gives (``id``, ``taskId``, ``tenant``, a v0.3 resource ``name``/``parent``)
  may be repeated in the body only with the same value, else InvalidParams; on a route
  without a tenant segment a v1.0 body may carry ``tenant``.
- **Content types.** A non-empty body must be JSON by its ``Content-Type``: the check shared
  with JSON-RPC (`a2a_core.media_types.check_request_content_type`, re-exported here) accepts
  ``application/json``, ``application/a2a+json`` and any ``application/*+json`` (parameters
  and case ignored), and no ``Content-Type``; with an empty body any value is accepted.
  Anything else is `ContentTypeNotSupportedError` (-32005, HTTP 415 in the v1.0.0 table).
  Responses use `JSON_CONTENT_TYPE` by default or `A2A_JSON_CONTENT_TYPE` (spec-decisions A11):
  the caller that builds responses chooses and passes it.
"""

from a2a_core._protocol.media_types import (
    A2A_JSON_CONTENT_TYPE,
    JSON_CONTENT_TYPE,
    check_request_content_type,
    is_json_media_type,
)
from a2a_core._protocol.rest.error_replies import (
    DEFAULT_CONTENT_TYPE,
    rest_error_response,
    rest_route_miss_response,
)
from a2a_core._protocol.rest.query import QueryField, QueryKind, parse_query
from a2a_core._protocol.rest.requests import RestRequest, decode_rest_request
from a2a_core._protocol.rest.results import encode_rest_result, encode_rest_stream_event
from a2a_core._protocol.rest.routes import ROUTES, RestRoute, RouteMatch, RouteMiss, match_route

__all__ = [
    "A2A_JSON_CONTENT_TYPE",
    "DEFAULT_CONTENT_TYPE",
    "JSON_CONTENT_TYPE",
    "ROUTES",
    "QueryField",
    "QueryKind",
    "RestRequest",
    "RestRoute",
    "RouteMatch",
    "RouteMiss",
    "check_request_content_type",
    "decode_rest_request",
    "encode_rest_result",
    "encode_rest_stream_event",
    "is_json_media_type",
    "match_route",
    "parse_query",
    "rest_error_response",
    "rest_route_miss_response",
]
