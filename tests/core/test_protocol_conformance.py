"""L1 behaviours the conformance kits and the official clients probe, through bytes.

- A request ``Content-Type`` that is not JSON is refused by one check shared by both
  bindings (spec-decisions A12): -32005 as a normal JSON-RPC error (HTTP 200, ``id`` null, the
  body not parsed), 415 on REST.
- Extension activation is decided once, when the call exists (``extension_activation``): the
  call's ``extensions`` and the ``A2A-Extensions`` reply headers come from that decision, and
  a required extension that is declined fails the call with -32008.
- The v0.3 REST routes (``/v1/...``) answer errors with the JSON-RPC ``code`` and
  ``message`` at the top level as well as the AIP-193 body; the v1.0 routes keep AIP-193 only.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from a2a_core.call import Call
from a2a_core.errors import TaskNotFoundError
from a2a_core.jsonrpc import Operation
from a2a_core.types import AgentExtension
from helpers.protocol import (
    as_call,
    as_response,
    body_of,
    envelope,
    http,
    make_protocol,
    rpc,
)

PROTOCOL = make_protocol()
V1 = ("A2A-Version", "1.0")
GET_TASK = envelope("GetTask", {"id": "t-1"}, id=7)
SEND_V1 = {"message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "x"}]}}
SEND_V03_REST = {"message": {"messageId": "m", "role": "ROLE_USER", "content": [{"text": "x"}]}}

# --- request content type on JSON-RPC ----------------------------------------------------------

REFUSED = [
    "text/plain",
    "text/plain; charset=utf-8",
    "application/xml",
    "application/x-www-form-urlencoded",
    "multipart/form-data; boundary=x",
    "application/json-seq",
    "application/+json",
    "text/json",
    "*/*",
]
ACCEPTED = [
    "application/json",
    "application/json; charset=utf-8",
    "APPLICATION/JSON",
    "application/a2a+json",
    "application/a2a+json;charset=UTF-8",
    "application/vnd.example+json; v=2",
    "",
]


@pytest.mark.parametrize("content_type", REFUSED)
@pytest.mark.parametrize(
    ("version", "data_is_list"), [(("A2A-Version", "1.0"), True), (("A2A-Version", "0.3"), False)]
)
def test_jsonrpc_refuses_a_body_that_is_not_json(
    content_type: str, version: tuple[str, str], data_is_list: bool
) -> None:
    response = as_response(
        PROTOCOL.receive_request(rpc(GET_TASK, ("Content-Type", content_type), version))
    )
    assert response.status == 200
    assert ("content-type", "application/json") in response.headers
    body = body_of(response)
    assert body["id"] == 7  # read from the body, which the refusal did not need (JSON-RPC §5)
    assert body["error"]["code"] == -32005
    assert "application/json" in body["error"]["message"]
    # The error in the negotiated dialect: v1.0 data is the ErrorInfo list.
    assert isinstance(body["error"].get("data"), list) is data_is_list


@pytest.mark.parametrize("content_type", REFUSED)
def test_the_content_type_is_checked_before_the_body_is_parsed(content_type: str) -> None:
    for junk in (b"", b"{oops", b"\xff\xfe", b"[]"):
        body = body_of(
            as_response(PROTOCOL.receive_request(rpc(junk, ("Content-Type", content_type), V1)))
        )
        assert body["error"]["code"] == -32005, junk


@pytest.mark.parametrize("content_type", ACCEPTED)
def test_jsonrpc_accepts_json_media_types(content_type: str) -> None:
    call = as_call(PROTOCOL.receive_request(rpc(GET_TASK, ("Content-Type", content_type), V1)))
    assert call.operation is Operation.GET_TASK
    assert call.request_id == 7


def test_jsonrpc_without_a_content_type_is_read_as_json() -> None:
    call = as_call(PROTOCOL.receive_request(rpc(GET_TASK, V1)))
    assert call.operation is Operation.GET_TASK


def test_size_is_checked_before_the_content_type_on_both_bindings() -> None:
    small = make_protocol(max_body_size=10)
    plain = ("Content-Type", "text/plain")
    rpc_reply = body_of(as_response(small.receive_request(rpc(GET_TASK, plain, V1))))
    assert rpc_reply["error"]["code"] == -32600
    rest_reply = as_response(small.receive_request(http("POST", "/message:send", SEND_V1, plain)))
    assert rest_reply.status == 400


def test_both_bindings_refuse_the_same_content_types() -> None:
    for content_type in [*REFUSED, *ACCEPTED]:
        header = ("Content-Type", content_type)
        rpc_reply = PROTOCOL.receive_request(rpc(GET_TASK, header, V1))
        rest_reply = PROTOCOL.receive_request(http("POST", "/message:send", SEND_V1, header, V1))
        rpc_refused = (
            not isinstance(rpc_reply, Call) and body_of(rpc_reply)["error"]["code"] == -32005
        )
        rest_refused = not isinstance(rest_reply, Call) and rest_reply.status == 415
        assert rpc_refused is rest_refused is (content_type in REFUSED), content_type


@given(st.text(max_size=40))
def test_any_content_type_gives_a_call_or_a_32005(content_type: str) -> None:
    try:
        header = ("Content-Type", content_type.encode("latin-1").decode("latin-1"))
    except UnicodeEncodeError:
        return
    outcome = PROTOCOL.receive_request(rpc(GET_TASK, header, V1))
    if not isinstance(outcome, Call):
        assert outcome.status == 200
        assert body_of(outcome)["error"]["code"] == -32005


# --- extension activation, decided once --------------------------------------------------------

REQUIRED = AgentExtension(uri="urn:ext:req", required=True)
OPTIONAL = AgentExtension(uri="urn:ext:opt")
DECLINE = "urn:ext:decline"


def choosy(call: Call) -> list[str]:
    """An activation policy: every candidate, unless the client asked for DECLINE too."""
    return [] if DECLINE in call.requested_extensions else list(call.extensions)


def only_optional_declined(call: Call) -> list[str]:
    return [uri for uri in call.extensions if uri != OPTIONAL.uri]


#: A GetTask in each binding and dialect.
GETS: dict[str, Any] = {
    "jsonrpc-1.0": lambda *h: rpc(envelope("GetTask", {"id": "t"}), *h),
    "jsonrpc-0.3": lambda *h: rpc(envelope("tasks/get", {"id": "t"}), *h),
    "rest-1.0": lambda *h: http("GET", "/tasks/t", b"", *h),
    "rest-0.3": lambda *h: http("GET", "/v1/tasks/t", b"", *h),
}


@pytest.mark.parametrize("route", list(GETS))
def test_activated_extensions_drive_the_call_and_the_headers(route: str) -> None:
    protocol = make_protocol(extensions=(OPTIONAL,), extension_activation=choosy)
    call = as_call(protocol.receive_request(GETS[route](("A2A-Extensions", "urn:ext:opt"))))
    assert call.extensions == ("urn:ext:opt",)
    assert ("a2a-extensions", "urn:ext:opt") in call.response_headers
    assert ("x-a2a-extensions", "urn:ext:opt") in call.response_headers
    assert ("a2a-extensions", "urn:ext:opt") in protocol.reply_error(
        call, TaskNotFoundError()
    ).headers


@pytest.mark.parametrize("route", list(GETS))
def test_a_declined_extension_is_neither_on_the_call_nor_echoed(route: str) -> None:
    protocol = make_protocol(extensions=(OPTIONAL,), extension_activation=choosy)
    request = GETS[route](("A2A-Extensions", f"urn:ext:opt, {DECLINE}"))
    call = as_call(protocol.receive_request(request))
    assert call.extensions == ()
    assert call.requested_extensions == ("urn:ext:opt", DECLINE)
    names = [name for name, _ in call.response_headers]
    assert "a2a-extensions" not in names and "x-a2a-extensions" not in names


@pytest.mark.parametrize("route", list(GETS))
def test_only_the_activated_ones_are_echoed(route: str) -> None:
    protocol = make_protocol(
        extensions=(REQUIRED, OPTIONAL), extension_activation=only_optional_declined
    )
    call = as_call(
        protocol.receive_request(GETS[route](("A2A-Extensions", "urn:ext:opt, urn:ext:req")))
    )
    assert call.extensions == ("urn:ext:req",)
    assert ("a2a-extensions", "urn:ext:req") in call.response_headers


@pytest.mark.parametrize("route", list(GETS))
def test_a_required_extension_declined_is_32008(route: str) -> None:
    protocol = make_protocol(extensions=(REQUIRED, OPTIONAL), extension_activation=choosy)
    response = as_response(
        protocol.receive_request(GETS[route](("A2A-Extensions", f"urn:ext:req, {DECLINE}")))
    )
    assert "a2a-extensions" not in [name for name, _ in response.headers]
    body = body_of(response)
    if route.startswith("jsonrpc"):
        assert response.status == 200
        assert body["error"]["code"] == -32008
        assert "urn:ext:req" in body["error"]["message"]
    else:
        assert response.status == 400
        assert body["error"]["details"][0]["reason"] == "EXTENSION_SUPPORT_REQUIRED"
        assert body["error"]["details"][0]["metadata"] == {"requiredExtensions": "urn:ext:req"}


def test_without_a_policy_every_candidate_is_activated() -> None:
    protocol = make_protocol(extensions=(REQUIRED, OPTIONAL))
    call = as_call(
        protocol.receive_request(
            GETS["jsonrpc-1.0"](
                ("A2A-Extensions", "urn:x, urn:ext:opt"), ("A2A-Extensions", "urn:ext:req")
            )
        )
    )
    assert call.extensions == ("urn:ext:opt", "urn:ext:req")


def test_the_policy_cannot_activate_what_was_not_offered() -> None:
    protocol = make_protocol(
        extensions=(OPTIONAL,), extension_activation=lambda call: ["urn:ext:opt", "urn:other"]
    )
    call = as_call(protocol.receive_request(GETS["rest-1.0"]()))  # nothing requested
    assert call.extensions == ()
    asked = as_call(protocol.receive_request(GETS["rest-1.0"](("A2A-Extensions", "urn:ext:opt"))))
    assert asked.extensions == ("urn:ext:opt",)


# --- v0.3 REST errors that v0.3 clients can type -----------------------------------------------


@pytest.mark.parametrize(
    ("request_", "status", "code"),
    [
        (http("GET", "/v1/tasks/t", b"", ("A2A-Version", "9.9")), 400, -32009),
        (http("POST", "/v1/message:send", b"{oops"), 400, -32700),
        (http("POST", "/v1/message:send", {"message": {"content": "x"}}), 400, -32602),
        (
            http("POST", "/v1/message:send", SEND_V03_REST, ("Content-Type", "text/plain")),
            415,
            -32005,
        ),
        (http("GET", "/v1/nope"), 404, -32601),
        (http("DELETE", "/v1/message:send"), 405, -32601),
    ],
)
def test_v03_rest_errors_carry_the_jsonrpc_code_at_the_top(
    request_: Any, status: int, code: int
) -> None:
    response = as_response(PROTOCOL.receive_request(request_))
    assert response.status == status
    body = body_of(response)
    assert body["code"] == code
    assert body["message"] == body["error"]["message"]
    assert body["error"]["code"] == status  # the AIP-193 body is unchanged
    assert body["error"]["details"][0]["@type"].endswith("google.rpc.ErrorInfo")


def test_v03_rest_reply_error_carries_the_code_and_v1_does_not() -> None:
    legacy = as_call(PROTOCOL.receive_request(http("GET", "/v1/tasks/t")))
    current = as_call(PROTOCOL.receive_request(http("GET", "/tasks/t", b"", V1)))
    legacy_body = body_of(PROTOCOL.reply_error(legacy, TaskNotFoundError()))
    current_body = body_of(PROTOCOL.reply_error(current, TaskNotFoundError()))
    assert legacy_body["code"] == -32001 and legacy_body["message"] == "Task not found"
    assert legacy_body["error"] == current_body["error"]
    assert set(current_body) == {"error"}


@pytest.mark.parametrize(
    "request_",
    [
        http("GET", "/tasks/t", b"", ("A2A-Version", "9.9")),
        http("POST", "/message:send", b"{oops"),
        http("GET", "/nope"),
        http("DELETE", "/message:send"),
    ],
)
def test_v1_rest_errors_stay_aip193_only(request_: Any) -> None:
    assert set(body_of(as_response(PROTOCOL.receive_request(request_)))) == {"error"}
