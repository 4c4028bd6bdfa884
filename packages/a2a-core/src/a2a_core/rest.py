"""The HTTP+JSON (REST) binding: its route table and its request and response codec (L1, pure).

This module owns what makes REST different from JSON-RPC; everything after it (the L2 calls,
the error table) is shared. Like the JSON-RPC module it is a codec plus a table:

- the **route table** (`ROUTES`, DIGEST §1 and §7.1): the v1.0 routes, each also under
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
  Responses use `JSON_CONTENT_TYPE` by default or `A2A_JSON_CONTENT_TYPE` (DIGEST §12 A11):
  the caller that builds responses chooses and passes it.
"""

from __future__ import annotations

import datetime as _dt
import enum
import re
from collections.abc import Sequence
from typing import Any, Final, Literal, TypeAlias, TypeVar
from urllib.parse import unquote

import msgspec
from msgspec import field

from a2a_core import codec
from a2a_core import types as v1
from a2a_core._base import WireStruct
from a2a_core.compat.v0_3 import rest_convert, rest_types
from a2a_core.errors import (
    A2AError,
    ErrorInfo,
    FieldViolation,
    HttpStatusTable,
    InvalidParamsError,
    JSONParseError,
    LocalProtocolError,
    MethodNotFoundError,
    RestErrorBody,
    RestStatus,
    TableName,
    rest_error_body,
)
from a2a_core.http import HttpResponse
from a2a_core.media_types import (
    A2A_JSON_CONTENT_TYPE,
    JSON_CONTENT_TYPE,
    check_request_content_type,
    is_json_media_type,
)
from a2a_core.operations import OPERATIONS, CallRequest, Dialect, Operation
from a2a_core.types._common import Struct

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

T = TypeVar("T")

#: What responses carry unless the server is configured otherwise.
DEFAULT_CONTENT_TYPE: Final = JSON_CONTENT_TYPE

#: The v1.0 request a REST route decodes to (the operations' request union).
RestRequest: TypeAlias = CallRequest


# ---------------------------------------------------------------------------------------
# The route table


class RestRoute(msgspec.Struct, frozen=True):
    """One REST route: a method and a path template, and what they mean."""

    method: str
    """The HTTP method, upper-case."""
    template: str
    """The path template, e.g. ``/{tenant}/tasks/{id}:cancel``."""
    operation: Operation
    """The version-neutral operation it invokes."""
    dialect: Dialect
    """The dialect of its payloads: ``"1.0"`` or ``"0.3"`` (the ``/v1/`` routes)."""
    streaming: bool
    """Whether the result is an SSE stream rather than one response (the operation's)."""


class RouteMatch(msgspec.Struct, frozen=True):
    """A request whose method and path name a route, with the path parameters decoded."""

    route: RestRoute
    """The route."""
    params: dict[str, str]
    """Percent-decoded path parameters: ``tenant``, ``id``, ``task_id`` as the template has."""

    @property
    def operation(self) -> Operation:
        """The operation of the route."""
        return self.route.operation

    @property
    def dialect(self) -> Dialect:
        """The dialect of the route."""
        return self.route.dialect

    @property
    def streaming(self) -> bool:
        """Whether the route answers with an SSE stream."""
        return self.route.streaming

    @property
    def tenant(self) -> str:
        """The tenant of the path, ``""`` when the route has none."""
        return self.params.get("tenant", "")


class RouteMiss(msgspec.Struct, frozen=True):
    """No route for the request: 404 (no such path) or 405 (the path exists, not the method)."""

    status: Literal[404, 405]
    """The HTTP status to answer with."""
    allow: tuple[str, ...] = ()
    """For 405, the methods the path allows, for the ``Allow`` header."""


_V1_ROUTES: Final = (
    ("POST", "/message:send", Operation.SEND_MESSAGE),
    ("POST", "/message:stream", Operation.SEND_STREAMING_MESSAGE),
    ("GET", "/tasks/{id}", Operation.GET_TASK),
    ("GET", "/tasks", Operation.LIST_TASKS),
    ("POST", "/tasks/{id}:cancel", Operation.CANCEL_TASK),
    # The proto says GET, the spec text and both TCKs POST: serve both (DIGEST §12 A3).
    ("GET", "/tasks/{id}:subscribe", Operation.SUBSCRIBE_TO_TASK),
    ("POST", "/tasks/{id}:subscribe", Operation.SUBSCRIBE_TO_TASK),
    ("POST", "/tasks/{task_id}/pushNotificationConfigs", Operation.CREATE_PUSH_CONFIG),
    ("GET", "/tasks/{task_id}/pushNotificationConfigs/{id}", Operation.GET_PUSH_CONFIG),
    ("GET", "/tasks/{task_id}/pushNotificationConfigs", Operation.LIST_PUSH_CONFIGS),
    (
        "DELETE",
        "/tasks/{task_id}/pushNotificationConfigs/{id}",
        Operation.DELETE_PUSH_CONFIG,
    ),
    ("GET", "/extendedAgentCard", Operation.GET_EXTENDED_CARD),
)

# v0.3: no list-tasks route (DIGEST §12 A4); the create route's proto path typo (`task/*`)
# is not served, the spec and the SDKs use `tasks/`.
_V0_3_ROUTES: Final = (
    ("POST", "/v1/message:send", Operation.SEND_MESSAGE),
    ("POST", "/v1/message:stream", Operation.SEND_STREAMING_MESSAGE),
    ("GET", "/v1/tasks/{id}", Operation.GET_TASK),
    ("POST", "/v1/tasks/{id}:cancel", Operation.CANCEL_TASK),
    ("GET", "/v1/tasks/{id}:subscribe", Operation.SUBSCRIBE_TO_TASK),
    ("POST", "/v1/tasks/{id}:subscribe", Operation.SUBSCRIBE_TO_TASK),
    ("POST", "/v1/tasks/{task_id}/pushNotificationConfigs", Operation.CREATE_PUSH_CONFIG),
    ("GET", "/v1/tasks/{task_id}/pushNotificationConfigs/{id}", Operation.GET_PUSH_CONFIG),
    ("GET", "/v1/tasks/{task_id}/pushNotificationConfigs", Operation.LIST_PUSH_CONFIGS),
    (
        "DELETE",
        "/v1/tasks/{task_id}/pushNotificationConfigs/{id}",
        Operation.DELETE_PUSH_CONFIG,
    ),
    ("GET", "/v1/card", Operation.GET_EXTENDED_CARD),
)

#: Every route, in precedence order: v1.0 without tenant, v1.0 with tenant, then v0.3.
ROUTES: Final[tuple[RestRoute, ...]] = (
    *(RestRoute(m, t, op, "1.0", OPERATIONS[op].streaming) for m, t, op in _V1_ROUTES),
    *(
        RestRoute(m, "/{tenant}" + t, op, "1.0", OPERATIONS[op].streaming)
        for m, t, op in _V1_ROUTES
    ),
    *(RestRoute(m, t, op, "0.3", OPERATIONS[op].streaming) for m, t, op in _V0_3_ROUTES),
)

_V0_3_PREFIX: Final = "v1"
_METHOD_ORDER: Final = ("GET", "POST", "PUT", "PATCH", "DELETE")

# A compiled template segment: a literal, a variable, or a variable followed by `:verb`.
_Literal = tuple[Literal["lit"], str]
_Variable = tuple[Literal["var"], str]
_VerbVariable = tuple[Literal["verb"], str, str]
_Segment = _Literal | _Variable | _VerbVariable


def _compile(template: str) -> tuple[_Segment, ...]:
    segments: list[_Segment] = []
    for part in template.lstrip("/").split("/"):
        if part.startswith("{"):
            name, _, verb = part[1:].partition("}")
            if verb:
                segments.append(("verb", name, verb.removeprefix(":")))
            else:
                segments.append(("var", name))
        else:
            segments.append(("lit", part))
    return tuple(segments)


_Compiled = tuple[tuple[RestRoute, tuple[_Segment, ...]], ...]


def _index(routes: Sequence[RestRoute]) -> dict[int, _Compiled]:
    by_length: dict[int, list[tuple[RestRoute, tuple[_Segment, ...]]]] = {}
    for route in routes:
        segments = _compile(route.template)
        by_length.setdefault(len(segments), []).append((route, segments))
    return {n: tuple(items) for n, items in by_length.items()}


_V1_INDEX: Final = _index([r for r in ROUTES if r.dialect == "1.0"])
_V0_3_INDEX: Final = _index([r for r in ROUTES if r.dialect == "0.3"])
# The custom verbs of the table, as last-segment suffixes.
_VERB_SUFFIXES: Final = tuple(
    ":" + seg[2] for r in ROUTES for seg in _compile(r.template) if seg[0] == "verb"
)


def _decode_segment(raw: str) -> str | None:
    """The percent-decoded segment, or ``None`` if it cannot be a path parameter."""
    try:
        value = unquote(raw, errors="strict")
    except UnicodeDecodeError:
        return None
    if not value or "/" in value:
        return None
    return value


class _Candidate(msgspec.Struct, frozen=True):
    route: RestRoute
    params: dict[str, str]
    # A plain `{id}` that took a last segment ending in a verb (`x:cancel`): it yields to a
    # route with that verb, if the path has one, so `GET /tasks/x:cancel` is a 405.
    verb_like: bool
    has_verb: bool


def _match_segments(
    raw: Sequence[str],
    decoded: Sequence[str | None],
    route: RestRoute,
    pattern: tuple[_Segment, ...],
) -> _Candidate | None:
    params: dict[str, str] = {}
    last = len(pattern) - 1
    verb_like = has_verb = False
    for i, seg in enumerate(pattern):
        if seg[0] == "lit":
            if decoded[i] != seg[1]:
                return None
        elif seg[0] == "var":
            value = decoded[i]
            if value is None:
                return None
            verb_like = verb_like or (i == last and raw[i].endswith(_VERB_SUFFIXES))
            params[seg[1]] = value
        else:
            suffix = ":" + seg[2]
            if not raw[i].endswith(suffix):
                return None
            value = _decode_segment(raw[i][: -len(suffix)])
            if value is None:
                return None
            params[seg[1]] = value
            has_verb = True
    return _Candidate(route, params, verb_like, has_verb)


def match_route(method: str, path: str, *, v0_3: bool = True) -> RouteMatch | RouteMiss:
    """Find the route for a request; never raises.

    ``path`` is the raw (percent-encoded) path below the mount point, without the query.
    ``v0_3=False`` is for servers that do not serve v0.3 REST: ``/v1/...`` then is tenant
    ``v1`` of the v1.0 routes. See the module docstring for the precedence rules.
    """
    # The routes without parameters (``POST /message:send``...), spelled exactly as in the
    # table, are looked up directly; `_STATIC_ROUTES` holds what the full match returns.
    route = _STATIC_ROUTES.get((method, path, v0_3))
    if route is not None:
        return RouteMatch(route, {})
    return _match_route(method, path, v0_3)


def _match_route(method: str, path: str, v0_3: bool) -> RouteMatch | RouteMiss:
    """`match_route` by the precedence rules, segment by segment."""
    if not path.startswith("/"):
        return RouteMiss(404)
    raw = path[1:].split("/")
    first = _decode_segment(raw[0])
    routes = (_V0_3_INDEX if v0_3 and first == _V0_3_PREFIX else _V1_INDEX).get(len(raw))
    if routes is None:
        return RouteMiss(404)  # before decoding every segment of an arbitrarily long path
    decoded = [first, *(_decode_segment(s) for s in raw[1:])]
    candidates = [
        c
        for route, pattern in routes
        if (c := _match_segments(raw, decoded, route, pattern)) is not None
    ]
    if any(c.has_verb for c in candidates):
        candidates = [c for c in candidates if not c.verb_like]
    method = method.upper()
    for c in candidates:
        if c.route.method == method:
            return RouteMatch(c.route, c.params)
    if not candidates:
        return RouteMiss(404)
    allowed = {c.route.method for c in candidates}
    return RouteMiss(405, tuple(m for m in _METHOD_ORDER if m in allowed))


def _static_routes() -> dict[tuple[str, str, bool], RestRoute]:
    """``(method, path, v0_3)`` -> route, for each route without path parameters, as the
    full match finds it (so the shortcut cannot disagree with the precedence rules)."""
    table: dict[tuple[str, str, bool], RestRoute] = {}
    for route in ROUTES:
        if "{" in route.template:
            continue
        for v0_3 in (True, False):
            match = _match_route(route.method, route.template, v0_3)
            if isinstance(match, RouteMatch) and not match.params:
                table.setdefault((route.method, route.template, v0_3), match.route)
    return table


_STATIC_ROUTES: Final = _static_routes()


# ---------------------------------------------------------------------------------------
# Query parameters


class QueryKind(enum.Enum):
    """How a query parameter's text becomes a value (gRPC transcoding, DIGEST §7.1)."""

    STRING = "string"
    INT = "int"
    BOOL = "bool"
    ENUM = "enum"
    TIMESTAMP = "timestamp"


class QueryField(msgspec.Struct, frozen=True):
    """A request field that may be given as a query parameter."""

    name: str
    """The camelCase (ProtoJSON) name; the snake_case spelling is accepted too."""
    kind: QueryKind
    """How its text is parsed."""
    repeated: bool = False
    """A repeated field: repeated parameters and comma lists are concatenated."""
    enum: type[enum.Enum] | None = None
    """For `QueryKind.ENUM`: the enum, declared in proto-number order."""


_INT_TEXT: Final = re.compile(r"[+-]?[0-9]{1,19}")
# `+hh:mm` turned into ` hh:mm` by form decoding of an unencoded `+`.
_SPACE_OFFSET: Final = re.compile(r"(T[0-9:.]+) ([0-9]{2}(?::?[0-9]{2})?)$")
# Python reads at most 6 fractional digits; ProtoJSON writes up to 9.
_FRACTION: Final = re.compile(r"(\.[0-9]{6})[0-9]+")


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def _bad_param(name: str, why: str) -> InvalidParamsError:
    return InvalidParamsError(
        f"{InvalidParamsError.default_message}: query parameter '{name}' {why}",
        field_violations=[(name, why)],
    )


def _parse_scalar(spec: QueryField, name: str, text: str) -> Any:
    kind = spec.kind
    if kind is QueryKind.STRING:
        return text
    if kind is QueryKind.INT:
        if not _INT_TEXT.fullmatch(text):
            raise _bad_param(name, "must be an integer")
        return int(text)
    if kind is QueryKind.BOOL:
        lowered = text.lower()
        if lowered not in ("true", "false"):
            raise _bad_param(name, "must be true or false")
        return lowered == "true"
    if kind is QueryKind.ENUM:
        members = list(spec.enum or ())
        if _INT_TEXT.fullmatch(text):
            number = int(text)
            if 0 <= number < len(members):
                return members[number].value
        else:
            upper = text.upper()
            for member in members:
                if str(member.value) == upper:
                    return member.value
        raise _bad_param(name, "is not a known enum value")
    return _parse_timestamp(name, text)


def _parse_timestamp(name: str, text: str) -> _dt.datetime:
    text = _FRACTION.sub(r"\1", _SPACE_OFFSET.sub(r"\1+\2", text.strip()))
    try:
        value = _dt.datetime.fromisoformat(text)
        if value.tzinfo is None:
            return value.replace(tzinfo=_dt.UTC)
        return value.astimezone(_dt.UTC)
    except (ValueError, OverflowError):
        raise _bad_param(name, "must be an ISO 8601 timestamp") from None


def parse_query(query: Sequence[tuple[str, str]], fields: Sequence[QueryField]) -> dict[str, Any]:
    """Parse decoded query pairs into ``{camelCase name: value}`` for ``fields`` only.

    Values are JSON-ready for :func:`a2a_core.codec.convert` (enum names, ints, bools,
    strings, lists) except timestamps, which are UTC datetimes. Unknown names are ignored;
    see the module docstring for every rule. Raises `InvalidParamsError` naming the
    parameter.
    """
    by_alias: dict[str, QueryField] = {}
    for field_spec in fields:
        by_alias[field_spec.name] = by_alias[_snake(field_spec.name)] = field_spec
    out: dict[str, Any] = {}
    for name, text in query:
        spec = by_alias.get(name)
        if spec is None:
            root = re.split(r"[.\[]", name, maxsplit=1)[0]
            if root != name and root in by_alias:
                raise _bad_param(name, "is nested: query parameters cannot set objects")
            continue
        if not text:
            continue  # an empty value means "not given"
        if spec.repeated:
            items = [_parse_scalar(spec, name, t) for t in text.split(",") if t]
            out.setdefault(spec.name, []).extend(items)
            continue
        if spec.name in out:
            raise _bad_param(name, "is given more than once")
        out[spec.name] = _parse_scalar(spec, name, text)
    return out


_HISTORY: Final = QueryField("historyLength", QueryKind.INT)
_PAGE_SIZE: Final = QueryField("pageSize", QueryKind.INT)
_PAGE_TOKEN: Final = QueryField("pageToken", QueryKind.STRING)
_GET_TASK_QUERY: Final = (_HISTORY,)
_LIST_TASKS_QUERY: Final = (
    QueryField("contextId", QueryKind.STRING),
    QueryField("status", QueryKind.ENUM, enum=v1.TaskState),
    _PAGE_SIZE,
    _PAGE_TOKEN,
    _HISTORY,
    QueryField("statusTimestampAfter", QueryKind.TIMESTAMP),
    QueryField("includeArtifacts", QueryKind.BOOL),
)
_LIST_PUSH_QUERY: Final = (_PAGE_SIZE, _PAGE_TOKEN)


# ---------------------------------------------------------------------------------------
# Request decoding


def _invalid(message: str, field_name: str | None = None) -> InvalidParamsError:
    violations = [FieldViolation(field_name, message)] if field_name else []
    return InvalidParamsError(
        f"{InvalidParamsError.default_message}: {message}", field_violations=violations
    )


# msgspec ends a validation message with the JSON path of the culprit: `... - at `$.a.b``.
_AT_PATH: Final = re.compile(r" - at `\$\.?([^`]*)`$")


def _schema_error(message: str) -> InvalidParamsError:
    """InvalidParams for a codec message, pointing at the field it names (for BadRequest)."""
    at = _AT_PATH.search(message)
    return _invalid(message, at.group(1) if at and at.group(1) else None)


def _decode_body(body: bytes, type_: type[T]) -> T:
    if not body.strip():
        body = b"{}"
    try:
        return codec.decode(body, type_)
    except codec.DecodeError as exc:
        if exc.malformed_json:
            raise JSONParseError(f"{JSONParseError.default_message}: {exc.message}") from None
        raise _schema_error(exc.message) from None
    except OverflowError:
        # A timestamp whose UTC form falls outside datetime's range (year 1 with an offset).
        raise _invalid("a timestamp is out of range") from None


def _convert(values: dict[str, Any], type_: type[T]) -> T:
    try:
        return codec.convert(values, type_)
    except codec.DecodeError as exc:
        raise _schema_error(exc.message) from None


def _same(body_value: str, path_value: str, what: str) -> None:
    if body_value and body_value != path_value:
        raise _invalid(f"{what} in the body does not match the path", what)


def _tenant(match: RouteMatch, body_tenant: str) -> str:
    """The tenant: the path's when the route has one (the body may repeat it), else the body's."""
    path_tenant = match.tenant
    if not path_tenant:
        return body_tenant
    _same(body_tenant, path_tenant, "tenant")
    return path_tenant


class _V1CancelBody(WireStruct, kw_only=True, frozen=True):
    # CancelTaskRequest with the path's members optional.
    tenant: str = ""
    id: str = ""
    metadata: Struct = field(default_factory=dict)


class _V1SubscribeBody(WireStruct, kw_only=True, frozen=True):
    # SubscribeToTaskRequest with the path's members optional.
    tenant: str = ""
    id: str = ""


def _decode_v1(match: RouteMatch, query: Sequence[tuple[str, str]], body: bytes) -> RestRequest:
    op = match.operation
    params = match.params
    if op is Operation.SEND_MESSAGE or op is Operation.SEND_STREAMING_MESSAGE:
        send = _decode_body(body, v1.SendMessageRequest)
        tenant = _tenant(match, send.tenant)
        return send if tenant == send.tenant else msgspec.structs.replace(send, tenant=tenant)
    if op is Operation.GET_TASK:
        values = parse_query(query, _GET_TASK_QUERY)
        return _convert({**values, "tenant": match.tenant, "id": params["id"]}, v1.GetTaskRequest)
    if op is Operation.LIST_TASKS:
        values = parse_query(query, _LIST_TASKS_QUERY)
        return _convert({**values, "tenant": match.tenant}, v1.ListTasksRequest)
    if op is Operation.CANCEL_TASK:
        cancel = _decode_body(body, _V1CancelBody)
        _same(cancel.id, params["id"], "id")
        return v1.CancelTaskRequest(
            tenant=_tenant(match, cancel.tenant), id=params["id"], metadata=cancel.metadata
        )
    if op is Operation.SUBSCRIBE_TO_TASK:
        tenant = match.tenant
        if match.route.method == "POST":
            subscribe = _decode_body(body, _V1SubscribeBody)
            _same(subscribe.id, params["id"], "id")
            tenant = _tenant(match, subscribe.tenant)
        return v1.SubscribeToTaskRequest(tenant=tenant, id=params["id"])
    if op is Operation.CREATE_PUSH_CONFIG:
        config = _decode_body(body, v1.TaskPushNotificationConfig)
        _same(config.task_id, params["task_id"], "taskId")
        return msgspec.structs.replace(
            config, tenant=_tenant(match, config.tenant), task_id=params["task_id"]
        )
    if op is Operation.GET_PUSH_CONFIG:
        return v1.GetTaskPushNotificationConfigRequest(
            tenant=match.tenant, task_id=params["task_id"], id=params["id"]
        )
    if op is Operation.LIST_PUSH_CONFIGS:
        values = parse_query(query, _LIST_PUSH_QUERY)
        values.update(tenant=match.tenant, taskId=params["task_id"])
        return _convert(values, v1.ListTaskPushNotificationConfigsRequest)
    if op is Operation.DELETE_PUSH_CONFIG:
        return v1.DeleteTaskPushNotificationConfigRequest(
            tenant=match.tenant, task_id=params["task_id"], id=params["id"]
        )
    return v1.GetExtendedAgentCardRequest(tenant=match.tenant)


def _same_task_name(name: str, task_id: str, what: str) -> None:
    if name and rest_convert.parse_task_name(name) != task_id:
        raise _invalid(f"{what} in the body does not name the task of the path", what)


def _v0_3_push_config(
    body: rest_types.CreateTaskPushNotificationConfigBody, task_id: str
) -> v1.TaskPushNotificationConfig:
    """Either body form -> the v1.0 config, after checking every name against the path."""
    ids: list[str] = []
    if body.config is not None:  # {parent, configId, config: {name, pushNotificationConfig}}
        _same_task_name(body.parent, task_id, "parent")
        name, webhook = body.config.name, body.config.push_notification_config
        ids.append(body.config_id)
    elif body.push_notification_config is not None:  # {name, pushNotificationConfig}
        name, webhook = body.name, body.push_notification_config
    else:
        raise _invalid(
            "the body needs `config` or `pushNotificationConfig`", "pushNotificationConfig"
        )
    if name:
        parsed = rest_convert.parse_push_config_name(name)
        if parsed is None or parsed[0] != task_id:
            raise _invalid("name in the body does not name a config of the path's task", "name")
        ids.append(parsed[1])
    ids.append(webhook.id)
    distinct = {i for i in ids if i}
    if len(distinct) > 1:
        raise _invalid("the body gives different config ids", "pushNotificationConfig.id")
    config = rest_convert.push_config_to_v1(webhook, task_id=task_id)
    config_id = distinct.pop() if distinct else ""
    return config if config.id == config_id else msgspec.structs.replace(config, id=config_id)


def _decode_v0_3(match: RouteMatch, query: Sequence[tuple[str, str]], body: bytes) -> RestRequest:
    op = match.operation
    params = match.params
    if op is Operation.SEND_MESSAGE or op is Operation.SEND_STREAMING_MESSAGE:
        return rest_convert.send_request_to_v1(_decode_body(body, rest_types.SendMessageRequest))
    if op is Operation.GET_TASK:
        values = parse_query(query, _GET_TASK_QUERY)
        return _convert({**values, "id": params["id"]}, v1.GetTaskRequest)
    if op is Operation.CANCEL_TASK:
        cancel = _decode_body(body, rest_types.CancelTaskRequest)
        _same_task_name(cancel.name, params["id"], "name")
        return v1.CancelTaskRequest(id=params["id"])
    if op is Operation.SUBSCRIBE_TO_TASK:
        if match.route.method == "POST":
            subscribe = _decode_body(body, rest_types.TaskSubscriptionRequest)
            _same_task_name(subscribe.name, params["id"], "name")
        return v1.SubscribeToTaskRequest(id=params["id"])
    if op is Operation.CREATE_PUSH_CONFIG:
        create = _decode_body(body, rest_types.CreateTaskPushNotificationConfigBody)
        return _v0_3_push_config(create, params["task_id"])
    if op is Operation.GET_PUSH_CONFIG:
        return v1.GetTaskPushNotificationConfigRequest(task_id=params["task_id"], id=params["id"])
    if op is Operation.LIST_PUSH_CONFIGS:
        values = parse_query(query, _LIST_PUSH_QUERY)
        values["taskId"] = params["task_id"]
        return _convert(values, v1.ListTaskPushNotificationConfigsRequest)
    if op is Operation.DELETE_PUSH_CONFIG:
        return v1.DeleteTaskPushNotificationConfigRequest(
            task_id=params["task_id"], id=params["id"]
        )
    # GET /v1/card is the v0.3 GetAgentCard, i.e. the (extended) card (DIGEST §1).
    return v1.GetExtendedAgentCardRequest()


def decode_rest_request(
    match: RouteMatch,
    query: Sequence[tuple[str, str]] = (),
    body: bytes = b"",
) -> RestRequest:
    """Build the v1.0 request of ``match.operation`` from the path, query and body.

    ``query`` is the decoded query pairs (`a2a_core.http.HttpRequest.query_params`).
    Raises `InvalidParamsError` (bad parameters, or a body value that contradicts the
    path) or `JSONParseError` (a body that is not JSON); nothing else on any input. The
    ``Content-Type`` is checked separately (`check_request_content_type`).
    """
    if match.dialect == "0.3":
        return _decode_v0_3(match, query, body)
    return _decode_v1(match, query, body)


# ---------------------------------------------------------------------------------------
# Result encoding

_EMPTY_OBJECT: Final = b"{}"
_NOTHING: Final = (type(None),)


def _to_v0_3(operation: Operation, value: Any) -> Any:
    if isinstance(value, v1.SendMessageResponse):
        return rest_convert.send_response_from_v1(value)
    if isinstance(value, v1.Task):
        return rest_convert.task_from_v1(value)
    if isinstance(value, v1.TaskPushNotificationConfig):
        return rest_convert.task_push_config_from_v1(value)
    if isinstance(value, v1.ListTaskPushNotificationConfigsResponse):
        return rest_convert.push_config_list_from_v1(value)
    if isinstance(value, v1.AgentCard):
        return rest_convert.card_from_v1(value)
    raise LocalProtocolError(f"{operation.value} has no v0.3 REST form")


def encode_rest_result(operation: Operation, dialect: Dialect, value: object) -> bytes:
    """The response body of a non-streaming REST call: ``value`` in the route's dialect.

    ``value`` is the v1.0 result of the operation: `SendMessageResponse`, `Task`,
    `ListTasksResponse`, `TaskPushNotificationConfig`, `ListTaskPushNotificationConfigsResponse`,
    `AgentCard`, or ``None`` for a delete (answered ``{}``, ``google.protobuf.Empty``). A
    value of the wrong type, a streaming operation, or ListTasks in v0.3 (which has no such
    route) is the developer's mistake: `LocalProtocolError`.
    """
    spec = OPERATIONS[operation]
    if spec.streaming:
        raise LocalProtocolError(
            f"{operation.value} streams: encode its events with encode_rest_stream_event"
        )
    expected = spec.results
    if expected == _NOTHING:
        if value is not None:
            raise LocalProtocolError(f"{operation.value} returns nothing, not {type(value)}")
        return _EMPTY_OBJECT
    if not isinstance(value, expected):
        raise LocalProtocolError(
            f"{operation.value} returns {expected[0].__name__}, not {type(value).__name__}"
        )
    if dialect == "0.3":
        if operation is Operation.LIST_TASKS:
            raise LocalProtocolError("ListTasks has no v0.3 REST route")
        return codec.encode(_to_v0_3(operation, value))
    return codec.encode(value)


def encode_rest_stream_event(
    dialect: Dialect, event: v1.StreamResponse, *, final: bool | None = None
) -> bytes:
    """The JSON of one SSE event of a REST stream (the caller frames it as ``data:``).

    v1.0: the bare ``StreamResponse``. v0.3: the v0.3 proto ``StreamResponse``, whose status
    updates carry ``final`` (as given, else true for terminal and input-required states).
    """
    if dialect == "0.3":
        return codec.encode(rest_convert.stream_response_from_v1(event, final=final))
    return codec.encode(event)


# ---------------------------------------------------------------------------------------
# Content types and error responses


_ENCODER: Final = msgspec.json.Encoder()


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
    return HttpResponse(status, (("content-type", content_type), *extra), data)


def rest_error_response(
    err: A2AError,
    table: HttpStatusTable | TableName = HttpStatusTable.V1_0_0,
    content_type: str = DEFAULT_CONTENT_TYPE,
    dialect: Dialect = "1.0",
) -> HttpResponse:
    """The REST reply for ``err``: its HTTP status and the AIP-193 ``{"error": ...}`` body.

    Used for both dialects: v0.3 REST never defined an error body (DIGEST §4.3), and the
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
