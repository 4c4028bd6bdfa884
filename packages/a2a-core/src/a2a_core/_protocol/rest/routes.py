"""The REST route table and the matching of a method and path to a route (L1, pure).

The v1.0 routes (also under ``/{tenant}``) and the v0.3 ``/v1/...`` routes, each naming its
operation; whether a route streams comes from the operations table.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final, Literal
from urllib.parse import unquote

import msgspec

from a2a_core._protocol.operations import OPERATIONS, Dialect, Operation

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
    # The proto says GET, the spec text and both TCKs POST: serve both (spec-decisions A3).
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

# v0.3: no list-tasks route (spec-decisions A4); the create route's proto path typo (`task/*`)
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
