"""Deep JSON is refused the same way on every interpreter, through real bytes.

msgspec's decoder has no depth limit of its own: it stops only at the interpreter's recursion
guard, near 1000 levels on 3.11 and 3.12 but near 10000 on 3.13. Without a limit of our own
a body 2000 levels deep would be -32700 on 3.11 and silently accepted on 3.13. These tests
use depths between the two (`BETWEEN`), so they fail on an interpreter-dependent guard.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from a2a_core import codec
from a2a_core import types as t
from a2a_core.codec import NESTING_LIMIT, json_depth_exceeds
from a2a_core.jsonrpc import JsonRpcFailure, JsonRpcRequest, decode_request
from helpers.protocol import as_response, body_of, http, make_protocol, rpc

#: Deeper than 3.11's and 3.12's recursion guard lets msgspec go, shallower than 3.13's.
BETWEEN = 2000
V1 = ("A2A-Version", "1.0")
JSON = ("content-type", "application/json")
SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def nest(depth: int, inner: bytes = b"") -> bytes:
    """``depth`` levels of arrays around ``inner``."""
    return b"[" * depth + inner + b"]" * depth


def reference_depth(body: bytes) -> int:
    """Deepest nesting a JSON decoder reaches in ``body``, byte by byte: brackets inside
    strings do not count, and a backslash outside a string ends the reading (a decoder
    fails there)."""
    depth = deepest = 0
    in_string = escaped = False
    for byte in body:
        char = chr(byte)
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char == "\\":
            break
        elif char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth -= 1
    return deepest


# --- the scan -----------------------------------------------------------------------------------

# Strings full of the characters the scan must see through.
tricky_text = st.text(alphabet=st.sampled_from('[]{}"\\/:, a\u00e9\U0001f600\n'), max_size=8)
finite = st.floats(allow_nan=False, allow_infinity=False)
scalars = st.none() | st.booleans() | st.integers() | finite | tricky_text


def _extend(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.lists(children, max_size=4) | st.dictionaries(tricky_text, children, max_size=4)


json_values = st.recursive(scalars, _extend, max_leaves=20)


@st.composite
def documents(draw: st.DrawFn) -> tuple[bytes, int]:
    """A valid JSON document and its depth: random values, some wrapped in long chains (which
    the scan measures differently from bushy trees), in either encoding of non-ASCII text."""
    ensure_ascii = draw(st.booleans())

    def encode(value: Any) -> tuple[bytes, int]:
        if isinstance(value, list):
            parts = [encode(v) for v in value]
            chain = draw(st.sampled_from([0, 0, 0, 1, 7, 40, 300]))
            inner = b"[" + b",".join(p for p, _ in parts) + b"]"
            depth = 1 + max((d for _, d in parts), default=0)
            return nest(chain, inner), depth + chain
        if isinstance(value, dict):
            members = [(_text(k, ensure_ascii), encode(v)) for k, v in value.items()]
            inner = b"{" + b",".join(k + b":" + p for k, (p, _) in members) + b"}"
            return inner, 1 + max((d for _, (_, d) in members), default=0)
        return _text(value, ensure_ascii), 0

    return encode(draw(json_values))


def _text(value: Any, ensure_ascii: bool) -> bytes:
    return json.dumps(value, ensure_ascii=ensure_ascii).encode()


@SETTINGS
@given(documents(), st.integers(-1, 2))
def test_the_scan_is_exact_on_valid_json(document: tuple[bytes, int], offset: int) -> None:
    body, depth = document
    assert reference_depth(body) == depth
    limit = max(depth + offset, 0)
    assert json_depth_exceeds(body, limit) is (depth > limit)


@SETTINGS
@given(st.binary() | st.lists(st.sampled_from(list(b'[]{}"\\ ,:a')), max_size=300).map(bytes))
def test_the_scan_never_underestimates_what_a_decoder_reads(body: bytes) -> None:
    # Any bytes: a decoder reading them (until it fails) never goes deeper than the scan
    # allows. The scan may refuse more than that, only for malformed input.
    depth = reference_depth(body)
    for limit in {0, 1, max(depth - 1, 0), depth, depth + 1}:
        if depth > limit:
            assert json_depth_exceeds(body, limit)


@pytest.mark.parametrize(
    ("body", "limit", "exceeds"),
    [
        (nest(300), 300, False),  # one long chain: measured after the first slow peel
        (nest(301), 300, True),
        (b"[" + b",".join([nest(60)] * 500) + b"]", 61, False),  # a comb of long teeth
        (b"[" + b",".join([nest(60)] * 499 + [nest(61)]) + b"]", 61, True),  # one tooth longer
        (b"[" + b",".join([b"[]"] * 5000) + b"]", 2, False),  # bushy: peeled to nothing
        (b"[" * 100_000, 64, True),  # never closed
        (b"]" * 100 + b"[" * 100, 64, False),  # closers first: a decoder fails at once
        (b'["' + b"\\\\" * 50 + b'", ' + nest(70) + b"]", 71, False),  # escaped backslashes
        (b'["' + b"\\\\" * 50 + b'", ' + nest(70) + b"]", 70, True),
        (b'["\\\\\\"' + nest(70) + b'"]', 1, False),  # escaped backslash, then escaped quote
        (b'{"k' + b"[" * 100 + b'": 1, "v": ' + nest(3) + b"}", 4, False),  # brackets in a key
        (b'"' + b"[" * 100, 0, False),  # an unterminated string hides what follows
    ],
)
def test_the_scan_on_shapes(body: bytes, limit: int, exceeds: bool) -> None:
    assert json_depth_exceeds(body, limit) is exceeds
    assert (reference_depth(body) > limit) is exceeds  # the table agrees with a decoder


# --- the envelope decoder ---------------------------------------------------------------------------

HEAD = b'{"jsonrpc":"2.0","id":1,"method":"GetTask"'
TOO_DEEP = "Invalid JSON payload: nesting too deep"


def _at_stack_depth(frames: int, body: bytes) -> JsonRpcRequest | JsonRpcFailure:
    return decode_request(body) if frames == 0 else _at_stack_depth(frames - 1, body)


def test_the_limit_is_far_below_the_interpreters_guard() -> None:
    # Accepted at the limit even from deep in a caller's stack: 3.11 counts msgspec's levels
    # and Python frames against one recursion limit (1000 by default).
    body = HEAD + b',"params":{"id":"t","x":' + nest(NESTING_LIMIT - 2) + b"}}"
    assert isinstance(_at_stack_depth(400, body), JsonRpcRequest)


@pytest.mark.parametrize(
    "body",
    [
        pytest.param(nest(BETWEEN), id="top-level"),
        pytest.param(HEAD + b',"params":{"id":"t","x":' + nest(BETWEEN) + b"}}", id="in-params"),
        pytest.param(HEAD + b',"params":' + nest(BETWEEN) + b"}", id="params"),
        pytest.param(HEAD + b',"unknown":' + nest(BETWEEN) + b"}", id="unknown-member"),
        pytest.param(b'{"id":true,"x":' + nest(BETWEEN) + b"}", id="bad-envelope"),
        pytest.param(
            HEAD + b',"x":' + b'{"a":' * BETWEEN + b"1" + b"}" * BETWEEN + b"}", id="objects"
        ),
    ],
)
def test_deep_bodies_are_parse_errors(body: bytes) -> None:
    decoded = decode_request(body)
    assert isinstance(decoded, JsonRpcFailure)
    assert decoded.error.code == -32700
    assert decoded.error.message == TOO_DEEP
    assert decoded.id is None


def test_the_envelope_limit_is_inclusive() -> None:
    # The envelope and params objects are two levels: NESTING_LIMIT in all is accepted.
    inner = NESTING_LIMIT - 2
    ok = HEAD + b',"params":{"id":"t","x":' + nest(inner) + b"}}"
    decoded = decode_request(ok)
    assert isinstance(decoded, JsonRpcRequest)
    assert codec.decode(decoded.params, t.GetTaskRequest) == t.GetTaskRequest(id="t")
    too_deep = decode_request(HEAD + b',"params":{"id":"t","x":' + nest(inner + 1) + b"}}")
    assert isinstance(too_deep, JsonRpcFailure)
    assert too_deep.error.message == TOO_DEEP


# --- the codec ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "data",
    [
        pytest.param(b'{"id":"t","x":' + nest(BETWEEN) + b"}", id="fast-path"),
        pytest.param(b'{"id":"t","snake_case":' + nest(BETWEEN) + b"}", id="lenient-path"),
        pytest.param('{"id":"t","x":' + "[" * BETWEEN + "]" * BETWEEN + "}", id="text"),
        pytest.param(bytearray(b'{"id":"t","x":' + nest(BETWEEN) + b"}"), id="bytearray"),
        pytest.param(memoryview(b'{"id":"t","x":' + nest(BETWEEN) + b"}"), id="memoryview"),
    ],
)
def test_the_codec_refuses_deep_documents(data: Any) -> None:
    with pytest.raises(codec.DecodeError) as caught:
        codec.decode(data, t.GetTaskRequest)
    assert caught.value.message == "JSON nesting too deep"
    assert caught.value.malformed_json is True


@pytest.mark.parametrize("snake", [False, True], ids=["fast-path", "lenient-path"])
def test_the_codec_limit_is_inclusive(snake: bool) -> None:
    key = b"snake_case" if snake else b"x"
    ok = b'{"id":"t","' + key + b'":' + nest(NESTING_LIMIT - 1) + b"}"
    assert codec.decode(ok, t.GetTaskRequest) == t.GetTaskRequest(id="t")
    too_deep = b'{"id":"t","' + key + b'":' + nest(NESTING_LIMIT) + b"}"
    with pytest.raises(codec.DecodeError, match="JSON nesting too deep"):
        codec.decode(too_deep, t.GetTaskRequest)


# --- ServerProtocol, with its own limit raised past the decoders' ------------------------------

#: A protocol whose ``max_json_depth`` lets deep bodies through to the decoders.
LAX = make_protocol(max_json_depth=100_000)
DEEP_METADATA = b'"metadata":{"m":' + nest(BETWEEN) + b"}"
V1_MESSAGE = b'"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"x"}]}'
V03_REST_MESSAGE = b'"message":{"messageId":"m","role":"ROLE_USER","content":[{"text":"x"}]}'


@pytest.mark.parametrize(
    "request_body",
    [
        pytest.param(HEAD + b',"params":{"id":"t",' + DEEP_METADATA + b"}}", id="v1.0"),
        pytest.param(
            b'{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{'
            + V1_MESSAGE
            + b","
            + DEEP_METADATA
            + b"}}",
            id="v1.0-send",
        ),
        pytest.param(
            b'{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"id":"t",'
            + DEEP_METADATA
            + b"}}",
            id="v0.3",
        ),
    ],
)
def test_jsonrpc_deep_bodies_are_parse_errors_past_the_protocol_limit(
    request_body: bytes,
) -> None:
    reply = body_of(as_response(LAX.receive_request(rpc(request_body))))
    assert reply["id"] is None
    assert reply["error"]["code"] == -32700
    assert reply["error"]["message"] == TOO_DEEP


@pytest.mark.parametrize(
    ("path", "request_body", "headers"),
    [
        ("/message:send", b"{" + V1_MESSAGE + b"," + DEEP_METADATA + b"}", (V1, JSON)),
        ("/tasks/t:cancel", b"{" + DEEP_METADATA + b"}", (V1, JSON)),
        ("/v1/message:send", b"{" + V03_REST_MESSAGE + b"," + DEEP_METADATA + b"}", (JSON,)),
    ],
    ids=["v1.0-send", "v1.0-cancel", "v0.3-send"],
)
def test_rest_deep_bodies_are_parse_errors_past_the_protocol_limit(
    path: str, request_body: bytes, headers: tuple[tuple[str, str], ...]
) -> None:
    response = as_response(LAX.receive_request(http("POST", path, request_body, *headers)))
    assert response.status == 400
    error = body_of(response)["error"]
    assert error["status"] == "INVALID_ARGUMENT"
    assert error["message"] == "Invalid JSON payload: JSON nesting too deep"
    assert error["details"][0]["reason"] == "JSON_PARSE"


def test_the_protocol_limit_still_answers_first() -> None:
    # Within the decoders' limit, ServerProtocol's own (64 by default) decides: -32600.
    body = HEAD + b',"params":{"id":"t","m":' + nest(100) + b"}}"
    reply = body_of(as_response(make_protocol().receive_request(rpc(body, V1))))
    assert reply["error"]["code"] == -32600
    assert reply["error"]["message"] == "JSON nesting exceeds the limit of 64 levels"
