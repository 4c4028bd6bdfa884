"""What an observer hears of a request refused before it became a call: the reply's
`HttpResponse.refusal` (`a2a_core.refusal`), driven with request bytes."""

from __future__ import annotations

import pytest

from a2a_core.errors import UnauthenticatedError
from a2a_core.refusal import Refusal
from helpers.protocol import as_response, envelope, http, make_protocol, rpc

PROTOCOL = make_protocol(jsonrpc_path="/rpc", rest_path="/rest", max_body_size=1024)
V1 = ("a2a-version", "1.0")
JSON = ("content-type", "application/json")


@pytest.mark.parametrize(
    ("request_", "expected"),
    [
        (rpc(b"{not json", V1, path="/rpc"), Refusal("jsonrpc", "JSON_PARSE", 200, -32700)),
        (
            rpc(envelope("NoSuchMethod"), V1, path="/rpc"),
            Refusal("jsonrpc", "METHOD_NOT_FOUND", 200, -32601),
        ),
        (
            rpc(envelope("SendMessage", {"message": 5}), V1, path="/rpc"),
            Refusal("jsonrpc", "INVALID_PARAMS", 200, -32602),
        ),
        (
            rpc(envelope("GetTask", {"id": "t"}), ("a2a-version", "9.9"), path="/rpc"),
            Refusal("jsonrpc", "VERSION_NOT_SUPPORTED", 200, -32009),
        ),
        (
            rpc(b"[" * 2000, V1, path="/rpc"),
            Refusal("jsonrpc", "INVALID_REQUEST", 200, -32600),
        ),
        (http("GET", "/rpc"), Refusal("jsonrpc", "METHOD_NOT_ALLOWED", 405)),
        (http("GET", "/rest/no/such/route", b"", V1), Refusal("rest", "METHOD_NOT_FOUND", 404)),
        (
            http("POST", "/rest/message:send", b"{}", V1, JSON),
            Refusal("rest", "INVALID_PARAMS", 400),
        ),
        (http("GET", "/elsewhere"), Refusal("http", "NOT_FOUND", 404)),
    ],
    ids=[
        "parse-error",
        "unknown-method",
        "invalid-params",
        "unsupported-version",
        "body-over-limit",
        "get-on-jsonrpc",
        "unknown-rest-route",
        "invalid-rest-body",
        "unknown-path",
    ],
)
def test_a_refused_request_is_told_with_its_reason(request_: object, expected: Refusal) -> None:
    response = as_response(PROTOCOL.receive_request(request_))  # type: ignore[arg-type]
    assert response.refusal == expected


def test_refused_credentials_are_a_refusal_on_both_bindings() -> None:
    for path, binding, code in (("/rpc", "jsonrpc", -31401), ("/rest/tasks/t-1", "rest", None)):
        request = http("POST", path, b"{}", V1, JSON)
        response = PROTOCOL.reply_auth_failure(request, UnauthenticatedError(), ["Bearer"])
        refusal = response.refusal
        assert refusal is not None
        assert (refusal.binding, refusal.reason, refusal.status) == (
            binding,
            "UNAUTHENTICATED",
            401,
        )
        if code is None:
            assert refusal.code is None


def test_what_is_not_a_refusal() -> None:
    card = http("GET", "/.well-known/agent-card.json")
    assert as_response(PROTOCOL.receive_request(card)).refusal is None
    notifications = make_protocol(notifications="ignore")
    silent = rpc({"jsonrpc": "2.0", "method": "NoSuchMethod"}, V1)
    response = as_response(notifications.receive_request(silent))
    assert response.status == 204
    assert response.refusal is None


def test_reasons_never_come_from_the_request() -> None:
    # What a client sends that looks like a reason (a method named like one, a REST path
    # segment, a body's own "reason") never becomes one: the reasons are the error table's.
    named = rpc(envelope("ANY_TEXT_A_CLIENT_SENT"), V1, path="/rpc")
    assert as_response(PROTOCOL.receive_request(named)).refusal == Refusal(
        "jsonrpc", "METHOD_NOT_FOUND", 200, -32601
    )
    invented = b'{"error": {"details": [{"reason": "ANY TEXT A CLIENT SENT"}]}}'
    body = http("POST", "/rest/message:send", invented, V1, JSON)
    assert as_response(PROTOCOL.receive_request(body)).refusal == Refusal(
        "rest", "INVALID_PARAMS", 400
    )
    segment = http("GET", "/rest/ANY_TEXT_A_CLIENT_SENT", b"", V1)
    assert as_response(PROTOCOL.receive_request(segment)).refusal == Refusal(
        "rest", "METHOD_NOT_FOUND", 404
    )
