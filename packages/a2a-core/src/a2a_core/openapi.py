"""The A2A endpoints a server serves, as OpenAPI 3.1 path items (pure).

``openapi_paths(protocol, card, prefix)`` describes what the protocol serves under
``prefix``, from the same tables the server routes with, so that an application's OpenAPI
document (FastAPI's, through `a2a_starlette.A2AStarlette.mount`) lists the A2A routes
truthfully:

- the agent card (``GET``), the JSON-RPC endpoint (``POST``, the envelope and its methods),
  and each v1.0 HTTP+JSON route of the operations the card enables (streaming, push
  notifications, the extended card), with its path and query parameters;
- request and response bodies as the v1.0 wire types' JSON Schema (camelCase names, enums
  as their names), generated from the types by msgspec, under ``components/schemas`` with an
  ``A2A`` prefix (``A2ATask``), so they cannot collide with an application's own;
- streams as ``text/event-stream`` whose events are ``StreamResponse`` values.

What it leaves out, said in the descriptions: the ``/{tenant}/...`` copies of every route
and the v0.3 routes (``/v1/...``), which the server also serves, and the lenient inputs the
decoders accept beside the canonical form (snake_case names, integer enums).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

import msgspec

from a2a_core._protocol.operations import OPERATIONS, Operation
from a2a_core._protocol.rest.query import QueryField, QueryKind
from a2a_core._protocol.rest.requests import V1_BODIES, V1_QUERIES
from a2a_core._protocol.rest.routes import ROUTES
from a2a_core._protocol.server import ServerProtocol
from a2a_core.types import AgentCard, StreamResponse

__all__ = ["COMPONENT_PREFIX", "openapi_paths"]

#: The prefix of every component schema name: ``A2ATask``, ``A2AMessage``...
COMPONENT_PREFIX: Final = "A2A"
_REF: Final = "#/components/schemas/" + COMPONENT_PREFIX + "{name}"
_TAG: Final = "A2A"
_SPEC: Final = "the A2A specification"

_QUERY_TYPES: Final = {
    QueryKind.STRING: {"type": "string"},
    QueryKind.INT: {"type": "integer"},
    QueryKind.BOOL: {"type": "boolean"},
    QueryKind.TIMESTAMP: {"type": "string", "format": "date-time"},
}


def openapi_paths(protocol: ServerProtocol, card: AgentCard, prefix: str = "") -> dict[str, Any]:
    """``{"paths": ..., "components": {"schemas": ...}}`` for the endpoints ``protocol``
    serves under ``prefix`` (``"/a2a"``), the operations gated by ``card``'s capabilities
    left out when the card does not enable them; merge both into an OpenAPI 3.1 document."""
    base = prefix.rstrip("/")
    types: list[Any] = [AgentCard, StreamResponse]
    operations: list[tuple[str, str, dict[str, Any]]] = []
    if protocol.card_path is not None:
        operations.append(("GET", base + protocol.card_path, _card_operation()))
    if protocol.jsonrpc_path is not None:
        served = [op for op in Operation if _enabled(op, card)]
        operations.append(("POST", base + protocol.jsonrpc_path, _jsonrpc_operation(served)))
    if protocol.rest_path is not None:
        rest_base = base + protocol.rest_path.rstrip("/")
        for route in ROUTES:
            if route.dialect != "1.0" or route.template.startswith("/{tenant}"):
                continue
            if not _enabled(route.operation, card):
                continue
            operation = _rest_operation(route.method, route.template, route.operation, types)
            operations.append((route.method, rest_base + route.template, operation))
    refs, schemas = msgspec.json.schema_components(types, ref_template=_REF)
    by_type = dict(zip(types, refs, strict=True))
    paths: dict[str, dict[str, Any]] = {}
    for method, path, operation in operations:
        paths.setdefault(path, {})[method.lower()] = _resolve(operation, by_type)
    components = {COMPONENT_PREFIX + name: schema for name, schema in schemas.items()}
    return {"paths": paths, "components": {"schemas": components}}


def _enabled(operation: Operation, card: AgentCard) -> bool:
    gate = OPERATIONS[operation].gate
    capabilities = card.capabilities
    if gate == "streaming":
        return bool(capabilities.streaming)
    if gate == "push_notifications":
        return bool(capabilities.push_notifications)
    if gate == "extended_agent_card":
        return bool(capabilities.extended_agent_card)
    return True


class _Schema:
    """A type to be replaced by its schema reference once every type is known."""

    def __init__(self, kind: Any) -> None:
        self.kind = kind


def _json(kind: Any) -> dict[str, Any]:
    return {"application/json": {"schema": _Schema(kind)}}


def _card_operation() -> dict[str, Any]:
    return {
        "tags": [_TAG],
        "summary": "The agent card",
        "description": "Who the agent is and how to call it; cached with ETag and "
        "Last-Modified (conditional requests answer 304).",
        "operationId": "a2a_agent_card",
        "responses": {"200": {"description": "The agent card", "content": _json(AgentCard)}},
    }


def _jsonrpc_operation(methods: list[Operation]) -> dict[str, Any]:
    names = [op.value for op in methods]
    envelope = {
        "type": "object",
        "required": ["jsonrpc", "method"],
        "properties": {
            "jsonrpc": {"const": "2.0"},
            "id": {"type": ["string", "integer", "null"]},
            "method": {"enum": names},
            "params": {"type": "object", "description": "The method's request (A2A v1.0)."},
        },
    }
    return {
        "tags": [_TAG],
        "summary": "A2A over JSON-RPC 2.0",
        "description": "One JSON-RPC request per POST, with the header `A2A-Version: 1.0` "
        "(or 0.3, whose method names differ). Errors are JSON-RPC error objects with HTTP "
        f"200. Streaming methods answer with `text/event-stream`. See {_SPEC}.",
        "operationId": "a2a_jsonrpc",
        "requestBody": {"required": True, "content": {"application/json": {"schema": envelope}}},
        "responses": {
            "200": {
                "description": "The JSON-RPC response, or the event stream of a streaming method",
                "content": {
                    "application/json": {"schema": {"type": "object"}},
                    "text/event-stream": {"schema": {"type": "string"}},
                },
            }
        },
    }


def _rest_operation(
    method: str, template: str, operation: Operation, types: list[Any]
) -> dict[str, Any]:
    spec = OPERATIONS[operation]
    parameters: list[dict[str, Any]] = [
        {"name": name, "in": "path", "required": True, "schema": {"type": "string"}}
        for name in _path_names(template)
    ]
    parameters += [_query_parameter(field) for field in V1_QUERIES.get(operation, ())]
    described: dict[str, Any] = {
        "tags": [_TAG],
        "summary": operation.value,
        "description": f"The HTTP+JSON binding of {operation.value} (A2A v1.0; also served "
        f"under `/{{tenant}}`, and as v0.3 under `/v1`). See {_SPEC}.",
        "operationId": f"a2a_{operation.value}_{method.lower()}",
    }
    if parameters:
        described["parameters"] = parameters
    body = V1_BODIES.get(operation) if method == "POST" else None
    if body is not None:
        types.append(body)
        described["requestBody"] = {"required": False, "content": _json(body)}
    if spec.streaming:
        described["responses"] = {
            "200": {
                "description": "A stream of `StreamResponse` events (SSE `data:` lines)",
                "content": {"text/event-stream": {"schema": _Schema(StreamResponse)}},
            }
        }
    elif spec.results and spec.results[0] is not type(None):
        types.append(spec.results[0])
        described["responses"] = {
            "200": {"description": spec.results[0].__name__, "content": _json(spec.results[0])}
        }
    else:
        empty = {"application/json": {"schema": {"type": "object", "maxProperties": 0}}}
        done = {"description": "Done (an empty object)", "content": empty}
        described["responses"] = {"200": done}
    described["responses"]["default"] = {
        "description": 'An A2A error (AIP-193: `{"error": {code, status, message, details}}`)',
        "content": {"application/json": {"schema": {"type": "object"}}},
    }
    return described


def _path_names(template: str) -> list[str]:
    names = []
    for part in template.split("/"):
        if part.startswith("{"):
            names.append(part[1 : part.index("}")])
    return names


def _query_parameter(field: QueryField) -> dict[str, Any]:
    if field.kind is QueryKind.ENUM and field.enum is not None:
        schema: dict[str, Any] = {"enum": [member.value for member in field.enum]}
    else:
        schema = dict(_QUERY_TYPES[field.kind])
    if field.repeated:
        schema = {"type": "array", "items": schema}
    return {"name": field.name, "in": "query", "required": False, "schema": schema}


def _resolve(value: Any, refs: Mapping[Any, Any]) -> Any:
    """``value`` with every `_Schema` replaced by its type's reference."""
    if isinstance(value, _Schema):
        return refs[value.kind]
    if isinstance(value, dict):
        return {key: _resolve(item, refs) for key, item in value.items()}
    if isinstance(value, list):
        return [_resolve(item, refs) for item in value]
    return value
