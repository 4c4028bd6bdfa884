"""Branches of L1 modules that their own suites leave out, each through the public API.

Found by measuring branch coverage of the core (docs/development.md). Each test says which
rule it pins; none exists only to run a line.
"""

from __future__ import annotations

from typing import Annotated

import msgspec
import pytest

from a2a_core import codec
from a2a_core import types as t
from a2a_core.agent_card import AgentCardPublisher, CardOptions, ServedInterface, build_card
from a2a_core.compat.v0_3 import convert as v03c
from a2a_core.compat.v0_3 import rest_convert
from a2a_core.compat.v0_3 import types as v03
from a2a_core.sse import EventStream
from helpers.protocol import (
    BASE,
    CARD,
    LAST_MODIFIED,
    as_call,
    as_response,
    envelope,
    http,
    make_protocol,
    rpc,
)

# --- codec: what the lenient path and its guards accept --------------------------------------


def test_decode_accepts_text() -> None:
    assert codec.decode('{"id":"t"}', t.GetTaskRequest) == t.GetTaskRequest(id="t")


def test_text_that_is_not_utf8_is_malformed_json_not_a_crash() -> None:
    with pytest.raises(codec.DecodeError) as caught:
        codec.decode('{"id":"\ud800"}', t.GetTaskRequest)
    assert caught.value.malformed_json is True
    assert caught.value.message == "JSON is malformed: invalid UTF-8"


def test_invalid_utf8_inside_a_string_is_malformed_json() -> None:
    with pytest.raises(codec.DecodeError) as caught:
        codec.decode(b'{"id":"\xff"}', t.GetTaskRequest)
    assert caught.value.malformed_json is True
    assert "\\xff" not in caught.value.message  # the bytes themselves are never echoed


DEEP = "[" * 5000 + "]" * 5000


@pytest.mark.parametrize(
    "document",
    [
        '{"id":"t","x":' + DEEP + "}",  # typed fast path
        '{"id":"t","snake_case":' + DEEP + "}",  # lenient path (a snake_case key)
    ],
    ids=["fast", "lenient"],
)
def test_nesting_beyond_the_recursion_limit_is_malformed_json(document: str) -> None:
    # ServerProtocol stops such bodies earlier (max_json_depth); the codec holds on its own.
    with pytest.raises(codec.DecodeError) as caught:
        codec.decode(document, t.GetTaskRequest)
    assert caught.value.message == "JSON nesting too deep"
    assert caught.value.malformed_json is True


class _Node(msgspec.Struct):
    children: list[_Node] = []


def test_converting_a_too_deep_object_is_a_schema_error() -> None:
    # The v1.0 model has no recursive type; a recursive one given to codec.convert still gets
    # an answer rather than a RecursionError.
    deep: dict[str, object] = {}
    for _ in range(5000):
        deep = {"children": [deep]}
    with pytest.raises(codec.DecodeError) as caught:
        codec.convert(deep, _Node)
    assert caught.value.message == "JSON nesting too deep"
    assert caught.value.malformed_json is False


class _Annotated(msgspec.Struct):
    count: Annotated[int | None, msgspec.Meta(description="a described field")] = None
    either: int | str = 0


def test_lenient_path_reads_through_annotations_and_plain_unions() -> None:
    # Meta-annotated fields keep the lenient rules (an int64 given as a string, null = unset);
    # an untagged union is left to msgspec as is.
    assert codec.convert({"count": "7", "either": "x"}, _Annotated) == _Annotated(7, "x")
    assert codec.convert({"count": None}, _Annotated) == _Annotated(None)


def test_bytes_that_are_not_text_are_a_schema_error() -> None:
    with pytest.raises(codec.DecodeError) as caught:
        codec.decode(b'{"raw": 5, "media_type": "x"}', t.Part)
    assert caught.value.malformed_json is False
    assert "`$.raw`" in caught.value.message


def test_malformed_json_on_the_lenient_path() -> None:
    with pytest.raises(codec.DecodeError) as caught:
        codec.decode(b'{"task_id": ', t.GetTaskPushNotificationConfigRequest)
    assert caught.value.malformed_json is True


@pytest.mark.parametrize(
    "part",
    [
        '{"kind":["data"],"data":{}}',  # an unhashable tag (once a TypeError)
        '{"kind":{"k":1},"text":"x"}',
        '"just text"',  # not an object at all
        '{"text":"two contents","data":{}}',  # no kind, and no one kind it could be
    ],
)
def test_bad_v03_parts_are_schema_errors_on_the_lenient_path(part: str) -> None:
    # message_id (snake_case) sends the document down the lenient path.
    document = (
        '{"message":{"kind":"message","message_id":"m","role":"user","parts":[' + part + "]}}"
    )
    with pytest.raises(codec.DecodeError) as caught:
        codec.decode(document, v03.MessageSendParams)
    assert caught.value.malformed_json is False
    assert "$.message.parts[0]" in caught.value.message


# --- agent card --------------------------------------------------------------------------------


def test_build_card_puts_an_odd_version_last() -> None:
    # The publisher refuses such a version at startup; build_card alone stays total.
    card = build_card(
        CARD,
        [ServedInterface("JSONRPC", "latest"), ServedInterface("JSONRPC", "0.3")],
        base_url=BASE,
    )
    assert [i.protocol_version for i in card.supported_interfaces] == ["0.3", "latest"]


def test_publisher_reports_its_base_url_without_trailing_slashes() -> None:
    options = CardOptions(last_modified=LAST_MODIFIED)
    served = [ServedInterface("JSONRPC", "1.0")]
    publisher = AgentCardPublisher(
        CARD, options=options, interfaces=served, base_url="https://h/a//"
    )
    assert publisher.base_url == "https://h/a"
    bare = AgentCardPublisher(CARD, options=options, interfaces=served, base_url="/")
    assert bare.base_url is None


# --- v0.3 conversions the server reaches ---------------------------------------------------------

FLOWS = {
    "cc": t.OAuthFlows(
        client_credentials=t.ClientCredentialsOAuthFlow(
            token_url="https://auth/token", refresh_url="https://auth/r", scopes={"a": "A"}
        )
    ),
    "implicit": t.OAuthFlows(
        implicit=t.ImplicitOAuthFlow(authorization_url="https://auth/authorize", scopes={"b": "B"})
    ),
    "password": t.OAuthFlows(password=t.PasswordOAuthFlow(token_url="https://auth/token")),
}
OAUTH_CARD = msgspec.structs.replace(
    CARD,
    supported_interfaces=[
        t.AgentInterface(url=BASE, protocol_binding="HTTP+JSON", protocol_version="0.3.1")
    ],
    security_schemes={
        name: t.SecurityScheme(oauth2_security_scheme=t.OAuth2SecurityScheme(flows=flows))
        for name, flows in FLOWS.items()
    },
)


def test_v03_rest_extended_card_with_every_oauth_flow() -> None:
    protocol = make_protocol()
    call = as_call(protocol.receive_request(http("GET", "/v1/card")))
    card = msgspec.json.decode(protocol.reply_result(call, OAUTH_CARD).body)
    assert card["securitySchemes"] == {
        "cc": {
            "oauth2SecurityScheme": {
                "flows": {
                    "clientCredentials": {
                        "tokenUrl": "https://auth/token",
                        "refreshUrl": "https://auth/r",
                        "scopes": {"a": "A"},
                    }
                }
            }
        },
        "implicit": {
            "oauth2SecurityScheme": {
                "flows": {
                    "implicit": {"authorizationUrl": "https://auth/authorize", "scopes": {"b": "B"}}
                }
            }
        },
        "password": {
            "oauth2SecurityScheme": {"flows": {"password": {"tokenUrl": "https://auth/token"}}}
        },
    }
    # A patch digit in a 0.x interface is kept as given.
    assert card["protocolVersion"] == "0.3.1"
    # And the v0.3 REST card reads back as the same v1.0 schemes.
    back = rest_convert.card_to_v1(rest_convert.card_from_v1(OAUTH_CARD))
    assert back.security_schemes == OAUTH_CARD.security_schemes


def test_v03_jsonrpc_card_keeps_a_full_0x_version() -> None:
    assert v03c.card_from_v1(OAUTH_CARD).protocol_version == "0.3.1"


# --- jsonrpc, sse ---------------------------------------------------------------------------------


def test_a_repeated_member_whose_first_copy_is_wrong_is_an_invalid_request() -> None:
    # The envelope decoder sees the bad first copy; a dict keeps the good last one.
    body = b'{"jsonrpc":"2.0","id":4,"method":7,"method":"GetTask","params":{"id":"t"}}'
    response = as_response(make_protocol().receive_request(rpc(body)))
    assert response.body == (
        b'{"jsonrpc":"2.0","id":4,"error":{"code":-32600,"message":"Request payload validation '
        b'error","data":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":'
        b'"INVALID_REQUEST","domain":"a2a-protocol.org"}]}}'
    )


def test_event_stream_repr_says_where_it_stands() -> None:
    protocol = make_protocol()
    stream = protocol.open_event_stream(
        as_call(protocol.receive_request(rpc(envelope("SubscribeToTask", {"id": "t"}, id="s"))))
    )
    assert repr(stream) == "<EventStream jsonrpc 1.0 id='s' open>"
    stream.encode(
        t.StreamResponse(
            message=t.Message(message_id="m", role=t.Role.AGENT, parts=[t.Part(text="x")])
        )
    )
    assert repr(stream) == "<EventStream jsonrpc 1.0 id='s' finished>"
    assert isinstance(stream, EventStream)
