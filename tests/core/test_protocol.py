"""ServerProtocol as a whole, driven only through `HttpRequest` values.

The per-method goldens live in test_protocol_jsonrpc.py and test_protocol_rest.py, the fuzz
invariant in test_protocol_fuzz.py. Here: routing (card, 404, 405), the agent card through
`receive_request` (caching, base URLs, the configuration error), every error code that
`receive_request` can answer with (exact bytes), the order of the checks (a request that
fails two checks gets the earlier one), the metadata layers and identity, the ``A2A-Version``
echo, notifications, and the developer mistakes that raise `LocalProtocolError`.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from typing import Any

import pytest

from a2a_core import types as t
from a2a_core.call import Call
from a2a_core.codec import json_depth_exceeds
from a2a_core.errors import LocalProtocolError, MissingBaseUrlError, TaskNotFoundError
from a2a_core.http import Headers, HttpRequest, HttpResponse, content_length_exceeds
from a2a_core.jsonrpc import Operation
from a2a_core.protocol import DEFAULT_MAX_BODY_SIZE, ProtocolOptions, ServerProtocol
from helpers.protocol import (
    BARE_CARD,
    BASE,
    LAST_MODIFIED_TEXT,
    PUSH_CONFIG,
    TASK,
    V03_PARAMS,
    V1_PARAMS,
    as_call,
    as_response,
    body_of,
    envelope,
    http,
    make_protocol,
    rpc,
)

PROTOCOL = make_protocol()
CARD_PATH = "/.well-known/agent-card.json"
JSON = ("content-type", "application/json")


def jbytes(doc: Any) -> bytes:
    """Compact JSON, as the protocol writes it (key order kept)."""
    return json.dumps(doc, separators=(",", ":"), ensure_ascii=False).encode()


def info(reason: str, **metadata: str) -> dict[str, Any]:
    """A v1.0 ErrorInfo detail."""
    detail: dict[str, Any] = {
        "@type": "type.googleapis.com/google.rpc.ErrorInfo",
        "reason": reason,
        "domain": "a2a-protocol.org",
    }
    if metadata:
        detail["metadata"] = metadata
    return detail


def rpc_error(id_: Any, code: int, message: str, *details: dict[str, Any]) -> dict[str, Any]:
    """A JSON-RPC error reply; v1.0 form when details are given, else the v0.3 form."""
    error: dict[str, Any] = {"code": code, "message": message}
    if details:
        error["data"] = list(details)
    return {"jsonrpc": "2.0", "id": id_, "error": error}


def aip193(code: int, status: str, message: str, *details: dict[str, Any]) -> dict[str, Any]:
    """A REST error body."""
    return {"error": {"code": code, "status": status, "message": message, "details": list(details)}}


def v03_rest(jsonrpc_code: int, body: dict[str, Any]) -> dict[str, Any]:
    """A REST error body on a v0.3 route: the JSON-RPC code and message at the top too."""
    return {**body, "code": jsonrpc_code, "message": body["error"]["message"]}


# --- routing ----------------------------------------------------------------------------------


def test_unknown_paths_outside_rest_are_404() -> None:
    protocol = make_protocol(jsonrpc_path="/rpc", rest_path=None)
    for path in ("/nope", "/", "", "/rpc/", "/RPC", CARD_PATH + "/x"):
        response = as_response(protocol.receive_request(http("GET", path)))
        assert response.status == 404
        assert response.headers == (JSON,)
        assert response.body == b'{"error":{"code":404,"status":"NOT_FOUND","message":"Not found"}}'


def test_other_methods_on_the_jsonrpc_path_are_405_with_allow() -> None:
    for method in ("GET", "HEAD", "PUT", "DELETE", "post"):
        response = as_response(PROTOCOL.receive_request(http(method, "/")))
        assert response.status == 405
        assert response.headers == (JSON, ("allow", "POST"))
        assert response.body == (
            b'{"error":{"code":405,"status":"METHOD_NOT_ALLOWED","message":"Method not allowed"}}'
        )


def test_an_empty_path_is_the_mount_root() -> None:
    assert isinstance(
        PROTOCOL.receive_request(rpc(envelope("GetTask", {"id": "t"}), path="")), Call
    )


def test_rest_route_misses() -> None:
    not_found = as_response(PROTOCOL.receive_request(http("GET", "/no/such/route/here")))
    assert not_found.status == 404
    assert not_found.body == jbytes(
        aip193(404, "NOT_FOUND", "No such REST route", info("METHOD_NOT_FOUND"))
    )
    wrong_method = as_response(PROTOCOL.receive_request(http("PUT", "/tasks/t-1")))
    assert wrong_method.status == 405
    assert wrong_method.headers == (JSON, ("allow", "GET"))
    assert wrong_method.body == jbytes(
        aip193(
            405,
            "UNIMPLEMENTED",
            "Method not allowed; this path allows GET",
            info("METHOD_NOT_FOUND"),
        )
    )
    subscribe = as_response(PROTOCOL.receive_request(http("DELETE", "/tasks/t-1:subscribe")))
    assert subscribe.header("allow") == "GET, POST"


def test_paths_are_normalised_once_at_configuration() -> None:
    protocol = make_protocol(jsonrpc_path="a2a/rpc/", rest_path="/rest/", card_path="card.json")
    assert (protocol.jsonrpc_path, protocol.rest_path, protocol.card_path) == (
        "/a2a/rpc",
        "/rest",
        "/card.json",
    )
    assert isinstance(
        protocol.receive_request(rpc(envelope("GetTask", {"id": "t"}), path="/a2a/rpc")), Call
    )
    assert as_response(protocol.receive_request(http("GET", "/card.json"))).status == 200


# --- the agent card through receive_request ---------------------------------------------------

CARD_BODY = jbytes(
    {
        "name": "Echo",
        "description": "Repeats what it hears.",
        # JSON-RPC at the mount root keeps its trailing slash (the URL a client POSTs to);
        # REST at the mount root is the base URL itself (clients append "/message:send").
        "supportedInterfaces": [
            {"url": BASE + "/", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
            {"url": BASE, "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"},
            {"url": BASE + "/", "protocolBinding": "JSONRPC", "protocolVersion": "0.3"},
            {"url": BASE, "protocolBinding": "HTTP+JSON", "protocolVersion": "0.3"},
        ],
        "version": "1.0.0",
        "capabilities": {"streaming": True, "pushNotifications": True, "extendedAgentCard": True},
        "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain"],
        "skills": [{"id": "echo", "name": "Echo", "description": "Echoes", "tags": ["echo"]}],
    }
)
ETAG = '"' + hashlib.sha256(CARD_BODY).hexdigest() + '"'
VALIDATORS = (
    ("etag", ETAG),
    ("last-modified", LAST_MODIFIED_TEXT),
    ("cache-control", "public, max-age=300"),
)


def test_card_get() -> None:
    response = as_response(PROTOCOL.receive_request(http("GET", CARD_PATH)))
    assert response.status == 200
    assert response.headers == (JSON, *VALIDATORS)
    assert response.body == CARD_BODY


def test_card_head_has_the_headers_and_length_of_get_without_a_body() -> None:
    response = as_response(PROTOCOL.receive_request(http("HEAD", CARD_PATH)))
    assert response.status == 200
    assert response.headers == (JSON, *VALIDATORS, ("content-length", str(len(CARD_BODY))))
    assert response.body == b""


@pytest.mark.parametrize(
    "headers",
    [
        [("If-None-Match", ETAG)],
        [("If-None-Match", f'"other", W/{ETAG}')],
        [("If-None-Match", "*")],
        [("If-Modified-Since", LAST_MODIFIED_TEXT)],
        [("If-Modified-Since", "Fri, 03 Jan 2025 00:00:00 GMT")],
    ],
    ids=["etag", "weak-etag-in-list", "star", "ims-equal", "ims-later"],
)
@pytest.mark.parametrize("method", ["GET", "HEAD"])
def test_card_304(method: str, headers: list[tuple[str, str]]) -> None:
    response = as_response(PROTOCOL.receive_request(http(method, CARD_PATH, b"", *headers)))
    assert response.status == 304
    assert response.headers == VALIDATORS
    assert response.body == b""


@pytest.mark.parametrize(
    "headers",
    [
        [("If-None-Match", '"other"')],
        [("If-Modified-Since", "Thu, 02 Jan 2025 03:04:04 GMT")],
        [("If-Modified-Since", "yesterday")],
        # If-None-Match decides when present, even if If-Modified-Since would match.
        [("If-None-Match", '"other"'), ("If-Modified-Since", LAST_MODIFIED_TEXT)],
    ],
    ids=["other-etag", "ims-earlier", "ims-garbage", "inm-wins"],
)
def test_card_conditional_misses_get_the_card(headers: list[tuple[str, str]]) -> None:
    response = as_response(PROTOCOL.receive_request(http("GET", CARD_PATH, b"", *headers)))
    assert response.status == 200
    assert response.body == CARD_BODY


@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE", "OPTIONS"])
def test_card_other_methods_are_405(method: str) -> None:
    response = as_response(PROTOCOL.receive_request(http(method, CARD_PATH, b"{}")))
    assert response.status == 405
    assert response.header("allow") == "GET, HEAD"
    assert body_of(response)["error"]["code"] == 405


def test_card_urls_keep_the_path_prefix_of_the_base_url() -> None:
    protocol = make_protocol(
        base_url="https://h.example/a2a/", jsonrpc_path="/rpc", rest_path="/rest"
    )
    card = body_of(as_response(protocol.receive_request(http("GET", CARD_PATH))))
    assert [
        (i["url"], i["protocolBinding"], i["protocolVersion"]) for i in card["supportedInterfaces"]
    ] == [
        ("https://h.example/a2a/rpc", "JSONRPC", "1.0"),
        ("https://h.example/a2a/rest", "HTTP+JSON", "1.0"),
        ("https://h.example/a2a/rpc", "JSONRPC", "0.3"),
        ("https://h.example/a2a/rest", "HTTP+JSON", "0.3"),
    ]


def test_card_lists_only_what_is_served() -> None:
    protocol = make_protocol(versions=("1.0",), rest_path=None)
    card = body_of(as_response(protocol.receive_request(http("GET", CARD_PATH))))
    assert card["supportedInterfaces"] == [
        {"url": BASE + "/", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
    ]
    rest_only = make_protocol(versions=("1.0",), jsonrpc_path=None)
    card = body_of(as_response(rest_only.receive_request(http("GET", CARD_PATH))))
    assert card["supportedInterfaces"] == [
        {"url": BASE, "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"}
    ]


def test_card_per_request_base_url_overrides_the_configured_one() -> None:
    other = "https://other.example/x"
    response = as_response(PROTOCOL.receive_request(http("GET", CARD_PATH, base_url=other)))
    interfaces = body_of(response)["supportedInterfaces"]
    assert {i["url"] for i in interfaces if i["protocolBinding"] == "JSONRPC"} == {other + "/"}
    assert {i["url"] for i in interfaces if i["protocolBinding"] == "HTTP+JSON"} == {other}
    assert response.header("etag") != ETAG
    # The configured base URL is still what other requests get.
    assert as_response(PROTOCOL.receive_request(http("GET", CARD_PATH))).body == CARD_BODY


def test_card_without_any_base_url_is_a_configuration_error() -> None:
    protocol = make_protocol(base_url=None)
    with pytest.raises(MissingBaseUrlError, match="base_url"):
        protocol.receive_request(http("GET", CARD_PATH))
    # A per-request base URL is enough, and RPCs never need one.
    response = as_response(protocol.receive_request(http("GET", CARD_PATH, base_url="https://h/a")))
    interfaces = body_of(response)["supportedInterfaces"]
    assert [(i["protocolBinding"], i["url"]) for i in interfaces[:2]] == [
        ("JSONRPC", "https://h/a/"),
        ("HTTP+JSON", "https://h/a"),
    ]
    call = as_call(protocol.receive_request(rpc(envelope("GetTask", {"id": "t"}))))
    assert call.base_url is None


def test_card_extensions_and_legacy_fields() -> None:
    ext = t.AgentExtension(uri="urn:ext:a", description="A", required=True)
    protocol = make_protocol(extensions=(ext,), legacy_card_fields=True)
    card = body_of(as_response(protocol.receive_request(http("GET", CARD_PATH))))
    assert card["capabilities"]["extensions"] == [
        {"uri": "urn:ext:a", "description": "A", "required": True}
    ]
    # The v0.3 fields follow the published interfaces: ``url`` is the preferred (JSON-RPC)
    # one, with its trailing slash; the REST interface stays the base URL itself.
    assert card["url"] == BASE + "/"
    assert card["protocolVersion"] == "0.3.0"
    assert card["preferredTransport"] == "JSONRPC"
    assert card["additionalInterfaces"] == [
        {"url": BASE + "/", "transport": "JSONRPC"},
        {"url": BASE, "transport": "HTTP+JSON"},
    ]
    # The pure v1.0 card (the default) carries none of the v0.3 fields.
    assert "url" not in body_of(as_response(PROTOCOL.receive_request(http("GET", CARD_PATH))))


def test_card_path_can_be_moved_or_disabled() -> None:
    moved = make_protocol(card_path="/card.json", rest_path=None)
    assert body_of(as_response(moved.receive_request(http("GET", "/card.json"))))["name"] == "Echo"
    assert as_response(moved.receive_request(http("GET", CARD_PATH))).status == 404
    disabled = make_protocol(card_path=None, rest_path=None)
    assert as_response(disabled.receive_request(http("GET", CARD_PATH))).status == 404


def test_card_cache_control_is_configurable() -> None:
    protocol = make_protocol(card_cache_control="no-store")
    response = as_response(protocol.receive_request(http("GET", CARD_PATH)))
    assert response.header("cache-control") == "no-store"


# --- every error code receive_request can answer with -------------------------------------------

REQUIRED = t.AgentExtension(uri="urn:ext:req", required=True)
OPTIONAL = t.AgentExtension(uri="urn:ext:opt")
V1 = ("A2A-Version", "1.0")
DEEP = b"[" * 65 + b"]" * 65
SEND_BARE = {"message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "x"}]}}

# (id, protocol options, request, status, headers, body)
ERROR_CASES: list[
    tuple[str, dict[str, Any], HttpRequest, int, tuple[tuple[str, str], ...], Any]
] = [
    # --- JSON-RPC
    (
        "-32700 v0.3 form without a version",
        {},
        rpc(b'{"jsonrpc":'),
        200,
        (JSON, ("a2a-version", "0.3")),
        rpc_error(None, -32700, "Invalid JSON payload"),
    ),
    (
        "-32700 v1.0 form with A2A-Version 1.0",
        {},
        rpc(b'{"jsonrpc":', V1),
        200,
        (JSON, ("a2a-version", "1.0")),
        rpc_error(None, -32700, "Invalid JSON payload", info("JSON_PARSE")),
    ),
    (
        "-32700 invalid UTF-8",
        {},
        rpc(b'{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"id":"\xff"}}'),
        200,
        (JSON, ("a2a-version", "0.3")),
        rpc_error(None, -32700, "Invalid JSON payload: not valid UTF-8"),
    ),
    (
        "-32600 batch",
        {},
        rpc(b'[{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"t"}}]', V1),
        200,
        (JSON, ("a2a-version", "1.0")),
        rpc_error(
            None,
            -32600,
            "Request payload validation error: batch requests are not supported",
            info("INVALID_REQUEST"),
        ),
    ),
    (
        "-32600 envelope, in the method's dialect",
        {},
        rpc({"jsonrpc": "1.0", "id": 5, "method": "GetTask"}),
        200,
        (JSON, ("a2a-version", "1.0")),
        rpc_error(
            5,
            -32600,
            "Request payload validation error: 'jsonrpc' must be exactly \"2.0\"",
            info("INVALID_REQUEST"),
        ),
    ),
    (
        "-32600 params not an object",
        {},
        rpc({"jsonrpc": "2.0", "id": "x", "method": "tasks/get", "params": ["t"]}),
        200,
        (JSON, ("a2a-version", "0.3")),
        rpc_error("x", -32600, "Request payload validation error: 'params' must be an object"),
    ),
    (
        "-32600 notification",
        {},
        rpc({"jsonrpc": "2.0", "method": "tasks/get", "params": {"id": "t"}}),
        200,
        (JSON, ("a2a-version", "0.3")),
        rpc_error(
            None,
            -32600,
            "Request payload validation error: notifications (requests without 'id') are not "
            "supported",
        ),
    ),
    (
        "-32600 body too large",
        {"max_body_size": 64},
        rpc(envelope("GetTask", {"id": "x" * 64}), V1),
        200,
        (JSON, ("a2a-version", "1.0")),
        rpc_error(
            None, -32600, "Request body exceeds the limit of 64 bytes", info("INVALID_REQUEST")
        ),
    ),
    (
        "-32600 JSON nested too deep",
        {},
        rpc(b'{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"id":"t","m":' + DEEP + b"}}"),
        200,
        (JSON, ("a2a-version", "0.3")),
        rpc_error(None, -32600, "JSON nesting exceeds the limit of 64 levels"),
    ),
    (
        "-32601 unknown method",
        {},
        rpc(envelope("tasks/list", {}, id=3)),
        200,
        (JSON, ("a2a-version", "0.3")),
        rpc_error(3, -32601, "Method not found: tasks/list"),
    ),
    (
        "-32601 a v0.3 method when only 1.0 is served",
        {"versions": ("1.0",)},
        rpc(envelope("tasks/get", {"id": "t"}), V1),
        200,
        (JSON, ("a2a-version", "1.0")),
        rpc_error(1, -32601, "Method not found: tasks/get", info("METHOD_NOT_FOUND")),
    ),
    (
        "-32601 a long name is cut short",
        {},
        rpc(envelope("x" * 100, {}), V1),
        200,
        (JSON, ("a2a-version", "1.0")),
        rpc_error(1, -32601, "Method not found: " + "x" * 64 + "...", info("METHOD_NOT_FOUND")),
    ),
    (
        "-32602 v1.0",
        {},
        rpc(
            envelope(
                "SendMessage", {"message": {"messageId": "m", "role": "ROLE_USER", "parts": []}}
            )
        ),
        200,
        (JSON, ("a2a-version", "1.0")),
        rpc_error(
            1,
            -32602,
            "Invalid parameters: Expected `array` of length >= 1 - at `$.message.parts`",
            info("INVALID_PARAMS"),
        ),
    ),
    (
        "-32602 v0.3",
        {},
        rpc(
            envelope(
                "message/send",
                {"message": {"kind": "message", "messageId": "m", "role": "bot", "parts": []}},
            )
        ),
        200,
        (JSON, ("a2a-version", "0.3")),
        rpc_error(1, -32602, "Invalid parameters: Invalid enum value 'bot' - at `$.message.role`"),
    ),
    (
        "-32003 push configs without the capability",
        {"card": BARE_CARD},
        rpc(
            envelope(
                "CreateTaskPushNotificationConfig", V1_PARAMS["CreateTaskPushNotificationConfig"]
            )
        ),
        200,
        (JSON, ("a2a-version", "1.0")),
        rpc_error(
            1, -32003, "Push Notification is not supported", info("PUSH_NOTIFICATION_NOT_SUPPORTED")
        ),
    ),
    (
        "-32003 v0.3",
        {"card": BARE_CARD},
        rpc(
            envelope(
                "tasks/pushNotificationConfig/get", V03_PARAMS["tasks/pushNotificationConfig/get"]
            )
        ),
        200,
        (JSON, ("a2a-version", "0.3")),
        rpc_error(1, -32003, "Push Notification is not supported"),
    ),
    (
        "-32004 streaming without the capability",
        {"card": BARE_CARD},
        rpc(envelope("message/stream", V03_PARAMS["message/stream"])),
        200,
        (JSON, ("a2a-version", "0.3")),
        rpc_error(1, -32004, "Streaming is not supported by this agent"),
    ),
    (
        "-32004 subscribe without the capability",
        {"card": BARE_CARD},
        rpc(envelope("SubscribeToTask", {"id": "t"})),
        200,
        (JSON, ("a2a-version", "1.0")),
        rpc_error(
            1, -32004, "Streaming is not supported by this agent", info("UNSUPPORTED_OPERATION")
        ),
    ),
    (
        "-32004 extended card without the capability",
        {"card": BARE_CARD},
        rpc(envelope("GetExtendedAgentCard")),
        200,
        (JSON, ("a2a-version", "1.0")),
        rpc_error(
            1, -32004, "This agent has no extended agent card", info("UNSUPPORTED_OPERATION")
        ),
    ),
    (
        "-32007 extended card declared, not configured",
        {"extended_card_configured": False},
        rpc(envelope("agent/getAuthenticatedExtendedCard")),
        200,
        (JSON, ("a2a-version", "0.3")),
        rpc_error(1, -32007, "Authenticated Extended Card is not configured"),
    ),
    (
        "-32008 required extension not requested",
        {"extensions": (REQUIRED, OPTIONAL)},
        rpc(envelope("GetTask", {"id": "t"}), ("A2A-Extensions", "urn:ext:opt")),
        200,
        (JSON,),
        rpc_error(
            1,  # read from the body, though refused before it (JSON-RPC 2.0 §5)
            -32008,
            "Required extension(s) not requested: urn:ext:req",
            info("EXTENSION_SUPPORT_REQUIRED", requiredExtensions="urn:ext:req"),
        ),
    ),
    (
        "-32009 header",
        {},
        rpc(envelope("GetTask", {"id": "t"}), ("A2A-Version", "2.0")),
        200,
        (JSON,),
        rpc_error(
            1,  # read from the body, though refused before it (JSON-RPC 2.0 §5)
            -32009,
            "A2A-Version '2.0' is not supported; supported: 0.3, 1.0",
            info("VERSION_NOT_SUPPORTED", requestedVersion="2.0", supportedVersions="0.3,1.0"),
        ),
    ),
    (
        "-32009 query parameter",
        {"versions": ("1.0",)},
        http("POST", "/", envelope("GetTask", {"id": "t"}), query="A2A-Version=0.3"),
        200,
        (JSON,),
        rpc_error(
            1,  # read from the body, though refused before it (JSON-RPC 2.0 §5)
            -32009,
            "A2A-Version '0.3' is not supported; supported: 1.0",
            info("VERSION_NOT_SUPPORTED", requestedVersion="0.3", supportedVersions="1.0"),
        ),
    ),
    (
        "-32009 strict: no header is 0.3",
        {"strict_versions": True},
        rpc(envelope("GetTask", {"id": "t"})),
        200,
        (JSON, ("a2a-version", "0.3")),
        rpc_error(
            1,
            -32009,
            "Method GetTask belongs to A2A 1.0, but the request negotiated 0.3 (no A2A-Version "
            "header means 0.3)",
            info("VERSION_NOT_SUPPORTED"),
        ),
    ),
    (
        "-32009 strict: a v0.3 method under A2A-Version 1.0",
        {"strict_versions": True},
        rpc(envelope("tasks/get", {"id": "t"}), V1),
        200,
        (JSON, ("a2a-version", "1.0")),
        rpc_error(1, -32009, "Method tasks/get belongs to A2A 0.3, but the request negotiated 1.0"),
    ),
    # --- REST
    (
        "REST 400 JSON parse",
        {},
        http("POST", "/message:send", b'{"message":'),
        400,
        (JSON, ("a2a-version", "1.0")),
        aip193(
            400,
            "INVALID_ARGUMENT",
            "Invalid JSON payload: Input data was truncated",
            info("JSON_PARSE"),
        ),
    ),
    (
        "REST 400 body too large",
        {"max_body_size": 10},
        http("POST", "/v1/message:send", SEND_BARE),
        400,
        (JSON, ("a2a-version", "0.3")),
        v03_rest(
            -32600,
            aip193(
                400,
                "INVALID_ARGUMENT",
                "Request body exceeds the limit of 10 bytes",
                info("INVALID_REQUEST"),
            ),
        ),
    ),
    (
        "REST 400 nested too deep",
        {},
        http("POST", "/message:send", b'{"metadata":' + DEEP + b"}"),
        400,
        (JSON, ("a2a-version", "1.0")),
        aip193(
            400,
            "INVALID_ARGUMENT",
            "JSON nesting exceeds the limit of 64 levels",
            info("INVALID_REQUEST"),
        ),
    ),
    (
        "REST 400 bad body",
        {},
        http("POST", "/message:send", {}),
        400,
        (JSON, ("a2a-version", "1.0")),
        aip193(
            400,
            "INVALID_ARGUMENT",
            "Invalid parameters: Object missing required field `message`",
            info("INVALID_PARAMS"),
        ),
    ),
    (
        "REST 400 bad query",
        {},
        http("GET", "/tasks", query="pageSize=abc"),
        400,
        (JSON, ("a2a-version", "1.0")),
        aip193(
            400,
            "INVALID_ARGUMENT",
            "Invalid parameters: query parameter 'pageSize' must be an integer",
            info("INVALID_PARAMS"),
            {
                "@type": "type.googleapis.com/google.rpc.BadRequest",
                "fieldViolations": [{"field": "pageSize", "description": "must be an integer"}],
            },
        ),
    ),
    (
        "REST 404 a route of a version not served",
        {"versions": ("0.3",)},
        http("GET", "/tasks/t"),
        404,
        (JSON, ("a2a-version", "1.0")),
        aip193(
            404, "NOT_FOUND", "This route's A2A version is not served", info("METHOD_NOT_FOUND")
        ),
    ),
    (
        "REST 415 content type",
        {},
        http("POST", "/message:send", SEND_BARE, ("Content-Type", "text/plain")),
        415,
        (JSON, ("a2a-version", "1.0")),
        aip193(
            415,
            "INVALID_ARGUMENT",
            "Incompatible content types: the request body must be application/json or "
            "application/a2a+json",
            info("CONTENT_TYPE_NOT_SUPPORTED"),
        ),
    ),
    (
        "REST -32003",
        {"card": BARE_CARD},
        http("GET", "/tasks/t/pushNotificationConfigs"),
        400,
        (JSON, ("a2a-version", "1.0")),
        aip193(
            400,
            "UNIMPLEMENTED",
            "Push Notification is not supported",
            info("PUSH_NOTIFICATION_NOT_SUPPORTED"),
        ),
    ),
    (
        "REST -32004 streaming",
        {"card": BARE_CARD},
        http("POST", "/message:stream", SEND_BARE),
        400,
        (JSON, ("a2a-version", "1.0")),
        aip193(
            400,
            "UNIMPLEMENTED",
            "Streaming is not supported by this agent",
            info("UNSUPPORTED_OPERATION"),
        ),
    ),
    (
        "REST -32004 extended card",
        {"card": BARE_CARD},
        http("GET", "/v1/card"),
        400,
        (JSON, ("a2a-version", "0.3")),
        v03_rest(
            -32004,
            aip193(
                400,
                "UNIMPLEMENTED",
                "This agent has no extended agent card",
                info("UNSUPPORTED_OPERATION"),
            ),
        ),
    ),
    (
        "REST -32007",
        {"extended_card_configured": False},
        http("GET", "/acme/extendedAgentCard"),
        400,
        (JSON, ("a2a-version", "1.0")),
        aip193(
            400,
            "FAILED_PRECONDITION",
            "Authenticated Extended Card is not configured",
            info("EXTENDED_AGENT_CARD_NOT_CONFIGURED"),
        ),
    ),
    (
        "REST -32008",
        {"extensions": (REQUIRED,)},
        http("GET", "/tasks/t"),
        400,
        (JSON,),
        aip193(
            400,
            "FAILED_PRECONDITION",
            "Required extension(s) not requested: urn:ext:req",
            info("EXTENSION_SUPPORT_REQUIRED", requiredExtensions="urn:ext:req"),
        ),
    ),
    (
        "REST -32009 header",
        {},
        http("GET", "/tasks/t", b"", ("A2A-Version", "9")),
        400,
        (JSON,),
        aip193(
            400,
            "UNIMPLEMENTED",
            "A2A-Version '9' is not supported; supported: 0.3, 1.0",
            info("VERSION_NOT_SUPPORTED", requestedVersion="9", supportedVersions="0.3,1.0"),
        ),
    ),
    (
        "REST -32009 strict",
        {"strict_versions": True},
        http("GET", "/v1/tasks/t", b"", V1),
        400,
        (JSON, ("a2a-version", "1.0")),
        v03_rest(
            -32009,
            aip193(
                400,
                "UNIMPLEMENTED",
                "This route belongs to A2A 0.3, but the request negotiated 1.0",
                info("VERSION_NOT_SUPPORTED"),
            ),
        ),
    ),
    (
        "REST -32009 in the v1.0.1 table",
        {"error_table": "v1.0.1"},
        http("GET", "/tasks/t", b"", ("A2A-Version", "0.1"), query=""),
        400,
        (JSON,),
        aip193(
            400,
            "FAILED_PRECONDITION",
            "A2A-Version '0.1' is not supported; supported: 0.3, 1.0",
            info("VERSION_NOT_SUPPORTED", requestedVersion="0.1", supportedVersions="0.3,1.0"),
        ),
    ),
]


@pytest.mark.parametrize(
    ("options", "request_", "status", "headers", "body"),
    [case[1:] for case in ERROR_CASES],
    ids=[case[0] for case in ERROR_CASES],
)
def test_error_golden(
    options: dict[str, Any],
    request_: HttpRequest,
    status: int,
    headers: tuple[tuple[str, str], ...],
    body: Any,
) -> None:
    response = as_response(make_protocol(**options).receive_request(request_))
    assert response.status == status
    assert response.headers == headers
    assert response.body == jbytes(body)


def test_every_error_code_is_reachable_through_receive_request() -> None:
    from a2a_core import errors

    codes = {case[5]["error"]["code"] for case in ERROR_CASES if "jsonrpc" in case[5]}
    # Internal, task, agent, shutdown and capacity errors are the runtime's to raise, never
    # receive_request's.
    # Authentication refusals (-32041, -32043) come before receive_request, from the server's
    # verifiers through `reply_auth_failure` (tests/adapters/test_contract_auth.py).
    runtime_only = {-32603, -32001, -32002, -32006, -32050, -32099, -32041, -32043}
    # -32005 is answered over REST only (a JSON-RPC body is read as JSON whatever its type).
    rest_only = {-32005}
    assert codes == {c.code for c in errors.ERROR_CLASSES} - runtime_only - rest_only


@pytest.mark.parametrize("size", [63, 64])
def test_the_body_limit_is_inclusive(size: int) -> None:
    body = jbytes(envelope("GetTask", {"id": "x"}))
    body += b" " * (size - len(body))
    assert len(body) == size
    assert isinstance(make_protocol(max_body_size=64).receive_request(rpc(body)), Call)


# An adapter leaves unread a body whose Content-Length is over the limit, and passes an empty
# one: the reply must be the one the body itself would have had, on every binding and dialect.
UNREAD_CASES = [
    ("JSON-RPC v1.0", "POST", "/", envelope("GetTask", {"id": "x"}), (V1,)),
    ("JSON-RPC v0.3", "POST", "/", envelope("tasks/get", {"id": "x"}), ()),
    ("REST v1.0", "POST", "/message:send", SEND_BARE, (V1,)),
    ("REST v0.3", "POST", "/v1/tasks/x:cancel", {"name": "tasks/x"}, ()),
    ("REST GET", "GET", "/tasks/x", b"", (V1,)),
]


@pytest.mark.parametrize(
    ("method", "path", "doc", "headers"),
    [case[1:] for case in UNREAD_CASES],
    ids=[case[0] for case in UNREAD_CASES],
)
def test_a_declared_oversized_body_gets_the_reply_of_an_oversized_body(
    method: str, path: str, doc: Any, headers: tuple[tuple[str, str], ...]
) -> None:
    small = make_protocol(max_body_size=256)
    read = http(method, path, b" " * 257, *headers)  # the adapter read one byte more
    unread = http(method, path, b"", *headers, ("Content-Length", "100000"))
    expected = as_response(small.receive_request(read))
    assert b"exceeds the limit of 256 bytes" in expected.body
    assert as_response(small.receive_request(unread)) == expected
    # The same request, declared at the limit, is not refused for its size.
    fits = small.receive_request(http(method, path, doc, *headers, ("Content-Length", "256")))
    assert isinstance(fits, Call)


@pytest.mark.parametrize(
    ("value", "exceeds"),
    [
        ("64", False),
        ("65", True),
        (" 65\t", True),  # optional whitespace around the value
        ("0000000000000000000000064", False),  # leading zeros
        ("9" * 30, True),
        ("1" * 5000, True),  # beyond int()'s digit limit: still an answer, no ValueError
        # Not a length (the HTTP server answers 400 itself): declares nothing.
        ("-1", False),
        ("+65", False),
        ("65, 65", False),
        ("65, 70", False),
        ("0x41", False),
        ("6 5", False),
        ("", False),
        ("\u0661\u0660\u0660", False),  # Arabic-Indic digits: isdigit(), but not a length
        ("\xb2\xb2\xb2", False),  # superscript twos, latin-1
    ],
)
def test_content_length_exceeds(value: str, exceeds: bool) -> None:
    assert content_length_exceeds(Headers([("Content-Length", value)]), 64) is exceeds
    raw = Headers([(b"content-length", value.encode("utf-8"))])  # the ASGI form
    assert content_length_exceeds(raw, 64) is exceeds


def test_content_length_exceeds_without_the_header() -> None:
    assert not content_length_exceeds(Headers(), 0)
    assert not content_length_exceeds(Headers([("Content-Type", "application/json")]), 0)


def test_the_depth_limit_is_inclusive() -> None:
    ok = (
        b'{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"id":"t","m":'
        + b"[" * 62
        + b"]" * 62
        + b"}}"
    )
    assert isinstance(PROTOCOL.receive_request(rpc(ok)), Call)  # 64 levels in all
    too_deep = ok.replace(b"[" * 62, b"[" * 63).replace(b"]" * 62, b"]" * 63)
    assert body_of(as_response(PROTOCOL.receive_request(rpc(too_deep))))["error"]["code"] == -32600


def test_default_limits() -> None:
    assert PROTOCOL.max_body_size == DEFAULT_MAX_BODY_SIZE == 8 * 1024 * 1024
    assert PROTOCOL.max_json_depth == 64


# --- the order of the checks --------------------------------------------------------------------

# Each request fails two checks; the earlier one in the order of checks (spec-decisions R1) must win:
# route -> version -> required extensions -> activation -> body size -> nesting -> JSON ->
# envelope -> method -> params -> capability.
ORDER_CASES: list[tuple[str, dict[str, Any], HttpRequest, int]] = [
    (
        "version before required extensions",
        {"extensions": (REQUIRED,)},
        rpc(envelope("GetTask", {"id": "t"}), ("A2A-Version", "7")),
        -32009,
    ),
    (
        "required extensions before body size",
        {"extensions": (REQUIRED,), "max_body_size": 8},
        rpc(envelope("GetTask", {"id": "t"})),
        -32008,
    ),
    ("body size before JSON", {"max_body_size": 8}, rpc(b'{"jsonrpc": oops'), -32600),
    ("nesting before JSON", {}, rpc(b"[" * 65 + b"oops"), -32600),
    ("JSON before envelope", {}, rpc(b'{"jsonrpc":"1.0","id":1,'), -32700),
    ("envelope before method", {}, rpc({"jsonrpc": "1.0", "id": 1, "method": "Nope"}), -32600),
    (
        "method before params",
        {"versions": ("1.0",)},
        rpc(envelope("tasks/get", {"id": 5}), V1),
        -32601,
    ),
    (
        "strict version before params",
        {"strict_versions": True},
        rpc(envelope("GetTask", {"id": 5})),
        -32009,
    ),
    (
        "params before capability",
        {"card": BARE_CARD},
        rpc(envelope("CreateTaskPushNotificationConfig", {"taskId": "t"})),
        -32602,
    ),
]


@pytest.mark.parametrize(
    ("options", "request_", "code"),
    [case[1:] for case in ORDER_CASES],
    ids=[case[0] for case in ORDER_CASES],
)
def test_the_earlier_check_wins(options: dict[str, Any], request_: HttpRequest, code: int) -> None:
    response = as_response(make_protocol(**options).receive_request(request_))
    assert body_of(response)["error"]["code"] == code


# Same on REST: route -> version -> extensions -> dialect -> body -> content type -> params ->
# capability.
REST_ORDER_CASES: list[tuple[str, dict[str, Any], HttpRequest, int, str]] = [
    (
        "route before version",
        {},
        http("PATCH", "/tasks/t", b"", ("A2A-Version", "7")),
        405,
        "METHOD_NOT_FOUND",
    ),
    (
        "version before extensions",
        {"extensions": (REQUIRED,)},
        http("GET", "/tasks/t", b"", ("A2A-Version", "7")),
        400,
        "VERSION_NOT_SUPPORTED",
    ),
    (
        "extensions before body size",
        {"extensions": (REQUIRED,), "max_body_size": 4},
        http("POST", "/message:send", SEND_BARE),
        400,
        "EXTENSION_SUPPORT_REQUIRED",
    ),
    (
        "body size before content type",
        {"max_body_size": 4},
        http("POST", "/message:send", SEND_BARE, ("Content-Type", "text/plain")),
        400,
        "INVALID_REQUEST",
    ),
    (
        "content type before JSON",
        {},
        http("POST", "/message:send", b"oops", ("Content-Type", "text/plain")),
        415,
        "CONTENT_TYPE_NOT_SUPPORTED",
    ),
    (
        "params before capability",
        {"card": BARE_CARD},
        http("POST", "/message:stream", {}),
        400,
        "INVALID_PARAMS",
    ),
]


@pytest.mark.parametrize(
    ("options", "request_", "status", "reason"),
    [case[1:] for case in REST_ORDER_CASES],
    ids=[case[0] for case in REST_ORDER_CASES],
)
def test_the_earlier_check_wins_on_rest(
    options: dict[str, Any], request_: HttpRequest, status: int, reason: str
) -> None:
    response = as_response(make_protocol(**options).receive_request(request_))
    assert response.status == status
    assert body_of(response)["error"]["details"][0]["reason"] == reason


def test_extension_headers_only_once_the_call_exists() -> None:
    # Errors after version negotiation carry the version; an extension is active only for a
    # call, so a request refused before it became one (bad params) echoes none, and one
    # refused for a missing required extension (before the version is echoed) carries
    # neither.
    protocol = make_protocol(extensions=(REQUIRED, OPTIONAL))
    headers = (
        ("A2A-Extensions", "urn:ext:req"),
        ("X-A2A-Extensions", "urn:ext:opt, urn:ext:other"),
    )
    bad_params = as_response(protocol.receive_request(rpc(envelope("GetTask", {}), *headers)))
    assert bad_params.headers == (JSON, ("a2a-version", "1.0"))
    missing = as_response(protocol.receive_request(rpc(envelope("GetTask", {}))))
    assert missing.headers == (JSON,)
    call = as_call(protocol.receive_request(rpc(envelope("GetTask", {"id": "t"}), *headers)))
    assert call.extensions == ("urn:ext:req", "urn:ext:opt")
    assert protocol.reply_error(call, TaskNotFoundError()).headers == (
        JSON,
        ("a2a-version", "1.0"),
        ("a2a-extensions", "urn:ext:req, urn:ext:opt"),
        ("x-a2a-extensions", "urn:ext:req, urn:ext:opt"),
    )


# --- extensions on calls ------------------------------------------------------------------------


def test_activated_extensions_are_on_the_call_and_echoed_under_both_names() -> None:
    protocol = make_protocol(extensions=(REQUIRED, OPTIONAL))
    call = as_call(
        protocol.receive_request(
            http(
                "GET",
                "/tasks/t",
                b"",
                ("A2A-Extensions", "urn:ext:unknown, urn:ext:opt"),
                ("A2A-Extensions", "urn:ext:req"),
            )
        )
    )
    assert call.requested_extensions == ("urn:ext:unknown", "urn:ext:opt", "urn:ext:req")
    assert call.extensions == ("urn:ext:opt", "urn:ext:req")
    reply = protocol.reply_result(call, TASK)
    assert reply.headers == (
        JSON,
        ("a2a-version", "1.0"),
        ("a2a-extensions", "urn:ext:opt, urn:ext:req"),
        ("x-a2a-extensions", "urn:ext:opt, urn:ext:req"),
    )


def test_no_extension_header_when_nothing_is_activated() -> None:
    protocol = make_protocol(extensions=(OPTIONAL,))
    call = as_call(
        protocol.receive_request(rpc(envelope("GetTask", {"id": "t"}), ("A2A-Extensions", "urn:x")))
    )
    assert call.extensions == ()
    assert call.response_headers == (("a2a-version", "1.0"),)


# --- metadata, identity, tenant -------------------------------------------------------------------


def test_metadata_merges_in_three_layers_and_reserved_keys_come_from_the_server() -> None:
    protocol = make_protocol(metadata={"env": "prod", "k": "server", "s": 1})
    params = {
        **V1_PARAMS["SendMessage"],
        "tenant": "acme",
        "metadata": {"k": "call", "c": 3, "a2a.auth": "mallory", "a2a.tenant": "other"},
    }
    call = as_call(
        protocol.receive_request(
            rpc(
                envelope("SendMessage", params),
                metadata={"k": "request", "r": 2},
                identity={"user": "alice"},
            )
        )
    )
    assert call.metadata == {
        "env": "prod",
        "k": "call",
        "s": 1,
        "r": 2,
        "c": 3,
        "a2a.auth": {"user": "alice"},
        "a2a.tenant": "acme",
    }
    assert call.identity == {"user": "alice"}
    assert call.tenant == "acme"


def test_reserved_keys_are_dropped_without_an_identity_or_tenant() -> None:
    protocol = make_protocol(metadata={"a2a.tenant": "from-config"})
    call = as_call(
        protocol.receive_request(
            http(
                "POST",
                "/tasks/t-1:cancel",
                {"metadata": {"a2a.auth": "forged", "a2a.tenant": "forged", "ok": True}},
                metadata={"a2a.auth": "set-by-middleware-without-identity"},
            )
        )
    )
    assert call.metadata == {"ok": True}
    assert call.identity is None


def test_rest_tenant_and_identity_reach_the_call() -> None:
    call = as_call(PROTOCOL.receive_request(http("GET", "/acme/tasks", identity="bob")))
    assert (call.tenant, call.identity) == ("acme", "bob")
    assert call.metadata == {"a2a.auth": "bob", "a2a.tenant": "acme"}


def test_per_request_base_url_reaches_the_call() -> None:
    request = rpc(envelope("GetTask", {"id": "t"}), base_url="https://other.example/x")
    assert as_call(PROTOCOL.receive_request(request)).base_url == "https://other.example/x"
    assert as_call(PROTOCOL.receive_request(rpc(envelope("GetTask", {"id": "t"})))).base_url == BASE


# --- A2A-Version echo -------------------------------------------------------------------------

# (request, call version, call dialect)
VERSION_CASES: list[tuple[str, HttpRequest, str, str]] = [
    ("header 1.0", rpc(envelope("GetTask", {"id": "t"}), V1), "1.0", "1.0"),
    (
        "patch digit dropped",
        rpc(envelope("GetTask", {"id": "t"}), ("A2A-Version", "1.0.7")),
        "1.0",
        "1.0",
    ),
    ("major only", rpc(envelope("GetTask", {"id": "t"}), ("a2a-version", " 1 ")), "1.0", "1.0"),
    (
        "query parameter",
        http("POST", "/", envelope("GetTask", {"id": "t"}), query="A2A-Version=1.0"),
        "1.0",
        "1.0",
    ),
    (
        "header wins over query",
        http(
            "POST",
            "/",
            envelope("GetTask", {"id": "t"}),
            ("A2A-Version", "0.3"),
            query="a2a-version=1.0",
        ),
        "0.3",
        "1.0",
    ),
    ("no header, v1.0 method", rpc(envelope("GetTask", {"id": "t"})), "1.0", "1.0"),
    (
        "empty header, v1.0 method",
        rpc(envelope("GetTask", {"id": "t"}), ("A2A-Version", "")),
        "1.0",
        "1.0",
    ),
    ("no header, v0.3 method", rpc(envelope("tasks/get", {"id": "t"})), "0.3", "0.3"),
    ("header 1.0, v0.3 method", rpc(envelope("tasks/get", {"id": "t"}), V1), "1.0", "0.3"),
    ("no header, v1.0 route", http("GET", "/tasks/t"), "1.0", "1.0"),
    ("no header, v0.3 route", http("GET", "/v1/tasks/t"), "0.3", "0.3"),
    ("header 0.3, v1.0 route", http("GET", "/tasks/t", b"", ("A2A-Version", "0.3")), "0.3", "1.0"),
]


@pytest.mark.parametrize(
    ("request_", "version", "dialect"),
    [case[1:] for case in VERSION_CASES],
    ids=[case[0] for case in VERSION_CASES],
)
def test_a2a_version_is_echoed(request_: HttpRequest, version: str, dialect: str) -> None:
    call = as_call(PROTOCOL.receive_request(request_))
    assert (call.version, call.dialect) == (version, dialect)
    assert call.response_headers[0] == ("a2a-version", version)
    reply = PROTOCOL.reply_result(call, TASK)
    assert reply.header("a2a-version") == version
    assert PROTOCOL.reply_error(call, TaskNotFoundError()).header("a2a-version") == version


def test_strict_versions_serve_the_matching_dialect() -> None:
    protocol = make_protocol(strict_versions=True)
    v1 = as_call(protocol.receive_request(rpc(envelope("GetTask", {"id": "t"}), V1)))
    v03 = as_call(protocol.receive_request(rpc(envelope("tasks/get", {"id": "t"}))))
    assert (v1.version, v1.dialect, v03.version, v03.dialect) == ("1.0", "1.0", "0.3", "0.3")


# --- notifications ----------------------------------------------------------------------------

NOTIFICATION = {"jsonrpc": "2.0", "method": "GetTask", "params": {"id": "t"}}


def test_ignored_notifications_get_an_empty_204() -> None:
    response = as_response(make_protocol(notifications="ignore").receive_request(rpc(NOTIFICATION)))
    assert response.status == 204
    assert response.headers == (("a2a-version", "1.0"),)
    assert response.body == b""


def test_accepted_notifications_run_and_are_never_answered() -> None:
    protocol = make_protocol(notifications="accept")
    call = as_call(protocol.receive_request(rpc(NOTIFICATION)))
    assert call.notification is True
    assert call.request_id is None
    assert call.request == t.GetTaskRequest(id="t")
    for reply in (
        protocol.reply_result(call, TASK),
        protocol.reply_error(call, TaskNotFoundError()),
    ):
        assert reply.status == 204
        assert reply.headers == (("a2a-version", "1.0"),)
        assert reply.body == b""
    # A developer mistake is still one, notification or not.
    with pytest.raises(LocalProtocolError):
        protocol.reply_result(call, PUSH_CONFIG)


@pytest.mark.parametrize(
    "body",
    [
        {"jsonrpc": "2.0", "method": "Nope", "params": {}},
        {"jsonrpc": "2.0", "method": "GetTask", "params": {}},
        {"jsonrpc": "2.0", "method": "SubscribeToTask", "params": {"id": "t"}},
        {"jsonrpc": "2.0", "method": "message/stream", "params": V03_PARAMS["message/stream"]},
    ],
    ids=["unknown method", "bad params", "stream", "v0.3 stream"],
)
def test_accepted_notifications_that_cannot_run_get_an_empty_204(body: dict[str, Any]) -> None:
    response = as_response(make_protocol(notifications="accept").receive_request(rpc(body)))
    assert response.status == 204
    assert response.body == b""


def test_requests_with_ids_are_unaffected_by_the_notification_policy() -> None:
    call = as_call(
        make_protocol(notifications="accept").receive_request(rpc(envelope("GetTask", {"id": "t"})))
    )
    assert call.notification is False
    assert PROTOCOL.reply_result(call, TASK).status == 200


# --- developer mistakes -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("request_", "wrong"),
    [
        (rpc(envelope("GetTask", {"id": "t"})), PUSH_CONFIG),
        (rpc(envelope("tasks/get", {"id": "t"})), None),
        (rpc(envelope("DeleteTaskPushNotificationConfig", {"taskId": "t", "id": "p"})), {}),
        (rpc(envelope("SendMessage", V1_PARAMS["SendMessage"])), TASK),
        (http("GET", "/tasks/t"), {"id": "t"}),
        (http("GET", "/v1/card"), TASK),
    ],
    ids=[
        "task-as-config",
        "none-as-task",
        "dict-as-empty",
        "task-as-send",
        "dict-rest",
        "v03-rest",
    ],
)
def test_reply_result_refuses_a_result_of_the_wrong_type(
    request_: HttpRequest, wrong: object
) -> None:
    call = as_call(PROTOCOL.receive_request(request_))
    with pytest.raises(LocalProtocolError, match="cannot reply with"):
        PROTOCOL.reply_result(call, wrong)


@pytest.mark.parametrize(
    "request_",
    [rpc(envelope("GetTask", {"id": "t"})), http("GET", "/tasks/t"), http("GET", "/v1/tasks/t")],
    ids=["jsonrpc", "rest", "rest-v0.3"],
)
def test_open_event_stream_refuses_a_non_streaming_call(request_: HttpRequest) -> None:
    call = as_call(PROTOCOL.receive_request(request_))
    assert call.streaming is False
    with pytest.raises(LocalProtocolError, match="not a streaming operation"):
        PROTOCOL.open_event_stream(call)


def test_stream_headers_carry_the_call_headers() -> None:
    protocol = make_protocol(extensions=(OPTIONAL,))
    call = as_call(
        protocol.receive_request(
            http("POST", "/tasks/t:subscribe", b"", ("A2A-Extensions", "urn:ext:opt"))
        )
    )
    assert call.operation is Operation.SUBSCRIBE_TO_TASK
    assert protocol.stream_headers(call) == (
        ("content-type", "text/event-stream"),
        ("cache-control", "no-cache"),
        ("x-accel-buffering", "no"),
        ("a2a-version", "1.0"),
        ("a2a-extensions", "urn:ext:opt"),
        ("x-a2a-extensions", "urn:ext:opt"),
    )


def test_the_protocol_is_reusable_and_keeps_no_per_request_state() -> None:
    # The same request twice gives equal outcomes; a failed request leaves nothing behind.
    request = rpc(envelope("GetTask", {"id": "t"}), V1)
    first = PROTOCOL.receive_request(request)
    PROTOCOL.receive_request(rpc(b"garbage"))
    assert PROTOCOL.receive_request(request) == first


def test_a_response_is_a_plain_value() -> None:
    response = as_response(PROTOCOL.receive_request(http("GET", "/nope/nope/nope/nope")))
    assert response == HttpResponse(response.status, response.headers, response.body)
    assert response.header("Content-Type") == "application/json"
    assert response.header("x-missing") is None


def test_a_protocol_needs_a_valid_card() -> None:
    with pytest.raises(LocalProtocolError):
        ServerProtocol(
            t.AgentCard(
                name="x",
                description="x",
                supported_interfaces=[],
                version="1",
                capabilities=t.AgentCapabilities(),
                default_input_modes=[],
                default_output_modes=[],
                skills=[],
            ),
            last_modified=dt.datetime(2025, 1, 1, tzinfo=dt.UTC),
            options=ProtocolOptions(jsonrpc_path=None, rest_path=None),
        )


# --- json_depth_exceeds ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "limit", "exceeds"),
    [
        (b"", 0, False),
        (b"[]", 0, True),
        (b"[]", 1, False),
        (b'{"a":[{"b":[]}]}', 4, False),
        (b'{"a":[{"b":[]}]}', 3, True),
        (b'["[[[[", "{{{{"]', 1, False),  # brackets inside strings do not count
        (b'["\\"[[[[", 1]', 1, False),  # nor after an escaped quote
        (b"[]" * 100, 1, False),  # siblings are not nesting
        # Closers before openers only occur past the point where a JSON parser has already
        # failed, so they may lower the count: the parser never reaches the openers.
        (b"]][[[", 2, False),
        (b"[[[[" + b"\xff" * 3, 3, True),
    ],
)
def test_json_depth_exceeds(body: bytes, limit: int, exceeds: bool) -> None:
    assert json_depth_exceeds(body, limit) is exceeds
