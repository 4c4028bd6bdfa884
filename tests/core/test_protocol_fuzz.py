"""The fuzz invariant of ServerProtocol: any request gets a well-formed reply, never an exception.

Hypothesis draws methods (including odd ones), paths (the real routes, mutations of them and
random text), query strings, headers (random ones plus the meaningful ones with meaningful and
random values) and bodies (random bytes, random JSON, and valid requests of every JSON-RPC
method and REST route with one or more mutations). For each, against several configurations:

- `receive_request` returns an `HttpResponse` or a `Call` and raises nothing;
- a response has a status from the allowed set, lower-case header names without line breaks,
  an empty body for 204, 304 and HEAD of the card, otherwise a body that parses as JSON;
- a JSON-RPC reply is an error whose code is in the error table and whose ``id`` is null or
  the request's own id;
- a REST error is an AIP-193 body whose ``code`` is the status;
- no body carries a traceback or a Python repr;
- a `Call` can be answered: `reply_error` gives a reply that obeys the same rules, and a
  streaming call opens a stream (a non-streaming one is refused with LocalProtocolError).

The number of examples is the sum of the ``max_examples`` below (``FUZZ_EXAMPLES``).
"""

from __future__ import annotations

import copy
import json
from http import HTTPStatus
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from a2a_core import errors
from a2a_core import types as t
from a2a_core.call import Call
from a2a_core.errors import LocalProtocolError, TaskNotFoundError
from a2a_core.http import Headers, HttpRequest, HttpResponse
from a2a_core.protocol import ServerProtocol
from a2a_core.refusal import Refusal
from a2a_core.testing import json_values
from helpers.protocol import (
    BARE_CARD,
    REST_REQUESTS,
    V03_PARAMS,
    V1_PARAMS,
    envelope,
    make_protocol,
)

# --- configurations --------------------------------------------------------------------------

REQUIRED_EXT = t.AgentExtension(uri="urn:ext:required", required=True)
OPTIONAL_EXT = t.AgentExtension(uri="urn:ext:optional")

PROTOCOLS: dict[str, ServerProtocol] = {
    "default": make_protocol(),
    "strict-1.0-bare": make_protocol(
        BARE_CARD,
        versions=("1.0",),
        strict_versions=True,
        extensions=(OPTIONAL_EXT,),
        max_body_size=2048,
        extended_card_configured=False,
    ),
    "prefixed-0.3": make_protocol(
        versions=("0.3",),
        jsonrpc_path="/rpc",
        rest_path="/rest",
        card_path="/card.json",
        extensions=(REQUIRED_EXT, OPTIONAL_EXT),
        notifications="ignore",
        max_json_depth=8,
        error_table="v1.0.1",
    ),
    "accept-notifications": make_protocol(
        notifications="accept",
        extended_card_configured=False,
        rest_content_type="application/a2a+json",
        legacy_card_fields=True,
    ),
}

# --- the invariant ---------------------------------------------------------------------------

ALLOWED_STATUSES = {200, 204, 304, 400, 404, 405, 415}
JSONRPC_CODES = {cls.code for cls in errors.ERROR_CLASSES}
FORBIDDEN = (b"Traceback", b"<a2a_core", b"object at 0x", b"msgspec.", b'File "')
CARD_PATHS = {"/.well-known/agent-card.json", "/card.json"}


def _request_id(body: bytes) -> tuple[bool, Any]:
    """(whether the body has a usable JSON-RPC id, that id)."""
    try:
        doc = json.loads(body)
    except ValueError:
        return False, None
    if not isinstance(doc, dict) or "id" not in doc:
        return False, None
    id_ = doc["id"]
    if id_ is None or type(id_) in (str, int):
        return True, id_
    return False, None


def check_response(request: HttpRequest, response: HttpResponse) -> None:
    """Everything a reply to any request must satisfy."""
    assert response.status in ALLOWED_STATUSES, response
    for name, value in response.headers:
        assert name == name.lower(), name
        assert "\r" not in value, (name, value)
        assert "\n" not in value, (name, value)
    for marker in FORBIDDEN:
        assert marker not in response.body, response.body
    if response.status in (204, 304):
        assert response.body == b""
        return
    if not response.body:
        # Only HEAD of the card has a 200 without a body.
        assert request.method == "HEAD", response
        assert response.status == 200, response
        assert response.header("content-length") is not None
        return
    assert response.header("content-type") is not None
    doc = json.loads(response.body)
    assert isinstance(doc, dict)
    if "jsonrpc" in doc:
        assert response.status == 200
        assert doc["jsonrpc"] == "2.0"
        assert set(doc) == {"jsonrpc", "id", "error"}, doc
        assert doc["error"]["code"] in JSONRPC_CODES, doc
        assert isinstance(doc["error"]["message"], str)
        has_id, id_ = _request_id(request.body)
        assert doc["id"] is None or (has_id and doc["id"] == id_ and type(doc["id"]) is type(id_))
        event(f"jsonrpc error {doc['error']['code']}")
    elif "error" in doc:
        assert doc["error"]["code"] == response.status, doc
        assert isinstance(doc["error"]["message"], str)
        event(f"http error {response.status}")
    else:
        # A success outside any RPC: only the card is answered without a Call.
        assert response.status == 200, doc
        assert request.method in ("GET", "HEAD"), doc
        assert "name" in doc
        assert "supportedInterfaces" in doc
        event("card")


def check_call(protocol: ServerProtocol, request: HttpRequest, call: Call) -> None:
    """A Call can be answered with an error, and streams exactly when it should."""
    event(f"call {call.binding} {call.dialect} {call.operation.value}")
    assert call.binding in ("jsonrpc", "rest")
    assert call.dialect in protocol.versions
    assert ("a2a-version", call.version) in call.response_headers
    assert call.identity is request.identity
    # Reserved metadata comes from the server only, whatever the body said.
    if request.identity is None:
        assert "a2a.auth" not in call.metadata
    else:
        assert call.metadata["a2a.auth"] is request.identity
    assert call.metadata.get("a2a.tenant", "") == call.tenant
    reply = protocol.reply_error(call, TaskNotFoundError())
    check_response(request, reply)
    if call.notification:
        # Executed, never answered, never streamed.
        assert reply.status == 204
        assert not call.streaming
    else:
        assert reply.status in (200, 404)
    if call.streaming:
        stream = protocol.open_event_stream(call)
        assert stream.encode_error(TaskNotFoundError()).startswith(b"data: ")
    else:
        with pytest.raises(LocalProtocolError):
            protocol.open_event_stream(call)


#: Every reason a refusal may carry: the error table's and HTTP's own. A finite set, so
#: that a hostile client cannot grow an observer's metric attributes.
REFUSAL_REASONS = (
    {cls.reason for cls in errors.ERROR_CLASSES}
    | {status.name for status in HTTPStatus}
    | {"UNKNOWN", "HTTP_ERROR"}
)


def check_refusal(protocol: ServerProtocol, request: HttpRequest, response: HttpResponse) -> None:
    """What an observer hears of a response given instead of a call (its ``refusal``)."""
    refusal = response.refusal
    path = request.path or "/"
    if path == protocol.card_path or protocol.card_publisher.matches_jwks_path(path):
        assert refusal is None
        return
    is_rpc_error = path == protocol.jsonrpc_path and response.status == 200
    if response.status >= 400 or is_rpc_error:
        assert isinstance(refusal, Refusal), (response.status, response.body)
        assert refusal.reason in REFUSAL_REASONS
        assert refusal.status == response.status
        if refusal.binding == "jsonrpc" and refusal.code is not None:
            assert json.loads(response.body)["error"]["code"] == refusal.code
    else:
        assert refusal is None


def check(protocol_name: str, request: HttpRequest) -> None:
    protocol = PROTOCOLS[protocol_name]
    outcome = protocol.receive_request(request)
    if isinstance(outcome, Call):
        check_call(protocol, request, outcome)
    else:
        assert isinstance(outcome, HttpResponse), outcome
        check_response(request, outcome)
        check_refusal(protocol, request, outcome)


# --- strategies ------------------------------------------------------------------------------

ROUTE_PATHS = sorted(
    {path for _, path, _, _ in REST_REQUESTS}
    | {"/acme" + path for _, path, _, _ in REST_REQUESTS if not path.startswith("/v1/")}
    | {"/", "/rpc", "/rest", "/rest/message:send", "/rest/v1/card", "/rest/tasks/t-1"}
    | CARD_PATHS
)
METHODS = st.sampled_from(
    ["GET", "POST", "HEAD", "PUT", "DELETE", "PATCH", "OPTIONS", "TRACE", "get", "Post", "", "BREW"]
)
NOISE = st.sampled_from(
    ["%", "%2F", "%3A", "%00", "%ff", "%C3%A9", ":", "::", ":cancel", ":subscribe", "/", "//",
     ".", "..", "?", "#", " ", "\x00", "é", "😀", "{id}", "tasks", "v1"]
)  # fmt: skip


@st.composite
def mutated_paths(draw: st.DrawFn) -> str:
    path = draw(st.sampled_from(ROUTE_PATHS))
    for _ in range(draw(st.integers(1, 3))):
        op = draw(st.sampled_from(["insert", "delete", "upper", "trailing", "double", "segment"]))
        pos = draw(st.integers(0, len(path)))
        if op == "insert":
            path = path[:pos] + draw(NOISE | st.text(max_size=3)) + path[pos:]
        elif op == "delete" and path:
            path = path[:pos] + path[pos + 1 :]
        elif op == "upper":
            path = path.upper()
        elif op == "trailing":
            path += "/"
        elif op == "double":
            path = path.replace("/", "//", 1)
        else:
            path = path + "/" + draw(NOISE | st.text(max_size=5))
    return path


PATHS = st.one_of(
    st.sampled_from(ROUTE_PATHS),
    mutated_paths(),
    st.text(max_size=30),
    st.text(max_size=20).map(lambda s: "/" + s),
)

VERSIONS = st.sampled_from(
    ["1.0", "0.3", "1", "1.0.1", "v1.0", " 1.0 ", "2.0", "0.2", "", "abc", "1.0,0.3", "99999.1"]
)
EXTENSION_VALUES = st.sampled_from(
    ["urn:ext:required", "urn:ext:optional", "urn:ext:required, urn:ext:optional", "urn:x", ",,",
     " urn:ext:optional ,urn:ext:optional", ""]
)  # fmt: skip
CONTENT_TYPES = st.sampled_from(
    ["application/json", "application/a2a+json", "application/json; charset=utf-8",
     "text/plain", "application/x-www-form-urlencoded", "application/+json", "", "json",
     "APPLICATION/JSON", "application/problem+json"]
)  # fmt: skip
CONTENT_LENGTHS = st.sampled_from(
    ["0", "10", "2048", "2049", "8388609", " 5 ", "-1", "+5", "1, 2", "abc", "", "0x10",
     "9" * 30, "1" * 5000, "\u0661"]
)  # fmt: skip
ETAGS = st.sampled_from(['"x"', "*", 'W/"x"', "garbage", '"', ""])
DATES = st.sampled_from(
    ["Thu, 02 Jan 2025 03:04:05 GMT", "Wed, 01 Jan 2025 00:00:00 GMT",
     "Fri, 31 Dec 9999 23:59:59 GMT", "not a date", "", "Mon, 32 Foo 2025 99:99:99 GMT"]
)  # fmt: skip
MEANINGFUL_HEADERS = st.one_of(
    st.tuples(st.sampled_from(["A2A-Version", "a2a-version"]), VERSIONS | st.text(max_size=8)),
    st.tuples(
        st.sampled_from(["A2A-Extensions", "X-A2A-Extensions"]),
        EXTENSION_VALUES | st.text(max_size=12),
    ),
    st.tuples(st.just("Content-Type"), CONTENT_TYPES | st.text(max_size=12)),
    st.tuples(st.just("Content-Length"), CONTENT_LENGTHS | st.text(max_size=12)),
    st.tuples(st.just("If-None-Match"), ETAGS | st.text(max_size=12)),
    st.tuples(st.just("If-Modified-Since"), DATES | st.text(max_size=12)),
)
HEADER_TEXT = st.text(st.characters(min_codepoint=0, max_codepoint=0xFF), max_size=16)
HEADERS = st.lists(MEANINGFUL_HEADERS | st.tuples(HEADER_TEXT, HEADER_TEXT), max_size=5)

QUERY_NAMES = st.sampled_from(
    ["A2A-Version", "a2a-version", "historyLength", "history_length", "pageSize", "pageToken",
     "status", "contextId", "statusTimestampAfter", "includeArtifacts", "tenant", "status.x",
     "pageSize[0]"]
)  # fmt: skip
QUERY_VALUES = st.sampled_from(
    ["1.0", "0.3", "-1", "0", "101", "1e3", "TASK_STATE_WORKING", "3", "99", "true", "TRUE",
     "maybe", "2025-01-02T03:04:05Z", "2025-01-02T03:04:05 01:00", "0001-01-01T00:00:00+01:00",
     "%", "%ff", "a,b", ""]
)  # fmt: skip
QUERIES = st.one_of(
    st.lists(st.tuples(QUERY_NAMES, QUERY_VALUES | st.text(max_size=6)), max_size=4).map(
        lambda pairs: "&".join(f"{k}={v}" for k, v in pairs)
    ),
    st.text(max_size=20),
)

# Mutations of valid JSON documents.
ODD_VALUES = st.sampled_from(
    [
        None,
        True,
        0,
        -1,
        2**31,
        2**63,
        1.5,
        "",
        "x",
        "ROLE_AGENT",
        "TASK_STATE_CANCELED",
        "user",
        "ROLE_UNSPECIFIED",
        "TASK_STATE_UNSPECIFIED",
        7,
        [],
        {},
        [None],
        {"kind": "text"},
        {"text": "a", "url": "b"},
        "2025-13-45T99:00:00Z",
        "not base64!",
    ]
).map(copy.deepcopy)  # fmt: skip  (drawn containers are mutated later: never share them)


def _paths_in(doc: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path to a value inside ``doc`` (the root included)."""
    found = [prefix]
    if isinstance(doc, dict):
        for key, value in doc.items():
            found += _paths_in(value, (*prefix, key))
    elif isinstance(doc, list):
        for index, value in enumerate(doc):
            found += _paths_in(value, (*prefix, index))
    return found


def _get(doc: Any, path: tuple[Any, ...]) -> Any:
    for key in path:
        doc = doc[key]
    return doc


def _retype(value: Any) -> Any:
    if isinstance(value, str):
        return [value] if value else 0
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, list):
        return {str(i): v for i, v in enumerate(value)}
    if isinstance(value, dict):
        return list(value.values())
    return {}


@st.composite
def mutated_documents(draw: st.DrawFn, doc: Any) -> Any:
    """``doc`` (a deep copy) with one to three mutations at random places."""
    doc = json.loads(json.dumps(doc))
    for _ in range(draw(st.integers(1, 3))):
        path = draw(st.sampled_from(_paths_in(doc)))
        op = draw(st.sampled_from(["delete", "replace", "retype", "nest", "add", "json"]))
        if op == "nest":
            depth = draw(st.integers(1, 80))
            new: Any = _get(doc, path)
            for _ in range(depth):
                new = draw(st.sampled_from([[new], {"a": new}]))
        elif op == "replace":
            new = draw(ODD_VALUES)
        elif op == "retype":
            new = _retype(_get(doc, path))
        elif op == "json":
            new = draw(json_values())
        elif op == "add":
            target = _get(doc, path)
            if isinstance(target, dict):
                target[draw(st.sampled_from(["id", "kind", "tenant", "extra", "a2a.auth"]))] = draw(
                    ODD_VALUES
                )
            continue
        else:  # delete
            if not path:
                continue
            parent = _get(doc, path[:-1])
            del parent[path[-1]]
            continue
        if not path:
            doc = new
        else:
            _get(doc, path[:-1])[path[-1]] = new
    return doc


RPC_DOCS = st.sampled_from(
    [envelope(m, p, id=7) for m, p in {**V1_PARAMS, **V03_PARAMS}.items()]
    + [envelope(m, p, id="s-7") for m, p in V1_PARAMS.items()]
)


def _encode(doc: Any) -> bytes:
    return json.dumps(doc, separators=(",", ":")).encode()


RANDOM_BODIES = st.one_of(
    st.binary(max_size=64),
    json_values().map(_encode),
    st.sampled_from([b"", b"{", b"[]", b"[{}]", b"null", b"{}", b"\xff\xfe", b'{"a":1,"a":2}']),
)

# --- the properties --------------------------------------------------------------------------

SETTINGS = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
#: How many examples the fuzz invariant runs, in total, in CI.
FUZZ_EXAMPLES = 600 + 700 + 700 + 300


@settings(SETTINGS, max_examples=600)
@given(
    protocol=st.sampled_from(sorted(PROTOCOLS)),
    method=METHODS,
    path=PATHS,
    query=QUERIES,
    headers=HEADERS,
    body=RANDOM_BODIES,
)
def test_any_request_gets_a_well_formed_reply(
    protocol: str, method: str, path: str, query: str, headers: list[tuple[str, str]], body: bytes
) -> None:
    check(protocol, HttpRequest(method, path, query, Headers(headers), body))


@settings(SETTINGS, max_examples=700)
@given(
    protocol=st.sampled_from(sorted(PROTOCOLS)),
    doc=RPC_DOCS.flatmap(mutated_documents),
    path=st.sampled_from(["/", "/rpc"]),
    headers=HEADERS,
    identity=st.none() | st.just("alice"),
)
def test_mutated_jsonrpc_requests_get_a_well_formed_reply(
    protocol: str, doc: Any, path: str, headers: list[tuple[str, str]], identity: str | None
) -> None:
    request = HttpRequest("POST", path, "", Headers(headers), _encode(doc), identity=identity)
    check(protocol, request)


@st.composite
def mutated_rest_requests(draw: st.DrawFn) -> tuple[str, str, str, bytes]:
    method, path, query, body = draw(st.sampled_from(REST_REQUESTS))
    if draw(st.booleans()) and not path.startswith("/v1/"):
        path = "/" + draw(st.sampled_from(["acme", "t%2Fx", "v1", "tasks", "%ff"])) + path
    if draw(st.booleans()):
        path = "/rest" + path
    what = draw(st.sampled_from(["body", "query", "path", "method", "all"]))
    raw = b"" if body is None else _encode(body)
    if what in ("body", "all"):
        raw = _encode(draw(mutated_documents(body if body is not None else {})))
    if what in ("query", "all"):
        query = draw(QUERIES)
    if what in ("path", "all"):
        path = draw(mutated_paths()) if draw(st.booleans()) else path + draw(NOISE)
    if what in ("method", "all"):
        method = draw(METHODS)
    return method, path, query, raw


@settings(SETTINGS, max_examples=700)
@given(
    protocol=st.sampled_from(sorted(PROTOCOLS)),
    request=mutated_rest_requests(),
    headers=HEADERS,
)
def test_mutated_rest_requests_get_a_well_formed_reply(
    protocol: str, request: tuple[str, str, str, bytes], headers: list[tuple[str, str]]
) -> None:
    method, path, query, body = request
    check(protocol, HttpRequest(method, path, query, Headers(headers), body))


@settings(SETTINGS, max_examples=300)
@given(
    protocol=st.sampled_from(sorted(PROTOCOLS)),
    method=METHODS,
    path=st.sampled_from(sorted(CARD_PATHS)),
    headers=st.lists(MEANINGFUL_HEADERS, max_size=4),
    identity=st.none() | st.text(max_size=5),
)
def test_card_requests_get_a_well_formed_reply(
    protocol: str, method: str, path: str, headers: list[tuple[str, str]], identity: str | None
) -> None:
    check(protocol, HttpRequest(method, path, "", Headers(headers), b"", identity=identity))
