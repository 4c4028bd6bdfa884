"""Properties of the client's protocol, on values drawn by a2a_core.testing.

- Every v1.0 request the client builds, in either binding, decodes on our server's
  `ServerProtocol` to the same request.
- Every result our server can encode reads back to the same value.
- Any bytes, as a reply or as a stream, give a result, `AgentError` or `InvalidReplyError`:
  never an exception from deep inside a decoder.
"""

from __future__ import annotations

import contextlib
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from a2a_core import types as t
from a2a_core.call import Call
from a2a_core.client import (
    AgentError,
    Endpoint,
    InvalidReplyError,
    StreamDecoder,
    build_request,
    parse_card,
    read_reply,
)
from a2a_core.compat.v0_3 import convert as v03c
from a2a_core.compat.v0_3 import rest_convert
from a2a_core.http import HttpRequest
from a2a_core.operations import OPERATIONS, Operation
from a2a_core.testing import strategy_for
from helpers.protocol import make_protocol

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
URL = "https://agent.example/a2a"
OPERATIONS_V1 = sorted(OPERATIONS, key=lambda op: op.value)
# Tenants a REST path cannot carry unambiguously: `v1` names the v0.3 routes, and a tenant
# equal to a route's first segment is read as that route (docs/spec-decisions.md, F11).
_REST_RESERVED = {"v1", "tasks", "message:send", "message:stream", "extendedAgentCard"}


def _for_rest(request: Any) -> Any:
    """``request`` with its path values made ones a REST path carries: single non-empty
    segments (no ``/``, a 404 by design) and a tenant no route's first segment shadows."""
    changes: dict[str, str] = {}
    tenant = getattr(request, "tenant", "")
    if tenant in _REST_RESERVED or ":" in tenant or "/" in tenant:
        changes["tenant"] = "acme"
    for name in ("id", "task_id"):
        value = getattr(request, name, None)
        if value is not None and (not value or "/" in value):
            changes[name] = value.replace("/", "_") or "x"
    return msgspec.structs.replace(request, **changes) if changes else request


def _served(request: HttpRequest) -> HttpRequest:
    return HttpRequest(
        request.method,
        request.path,
        query=request.query,
        headers=request.headers,
        body=request.body,
    )


@pytest.mark.parametrize("operation", OPERATIONS_V1, ids=lambda op: op.value)
@pytest.mark.parametrize("binding", ["jsonrpc", "rest"])
@SETTINGS
@given(data=st.data())
def test_every_v1_request_decodes_on_our_server_unchanged(
    operation: Operation, binding: str, data: st.DataObject
) -> None:
    spec = OPERATIONS[operation]
    request = data.draw(strategy_for(spec.params))
    if binding == "rest":
        request = _for_rest(request)
    endpoint = Endpoint(URL, binding, "1.0")  # type: ignore[arg-type]
    outcome = make_protocol().receive_request(_served(build_request(operation, request, endpoint)))
    assert isinstance(outcome, Call), outcome.body  # type: ignore[union-attr]
    assert outcome.operation is operation
    assert outcome.request == request


_ONE_SHOT = [op for op in OPERATIONS_V1 if not OPERATIONS[op].streaming]


@pytest.mark.parametrize("operation", _ONE_SHOT, ids=lambda op: op.value)
@pytest.mark.parametrize("binding", ["jsonrpc", "rest"])
@SETTINGS
@given(data=st.data())
def test_every_result_our_server_encodes_reads_back(
    operation: Operation, binding: str, data: st.DataObject
) -> None:
    spec = OPERATIONS[operation]
    result_type = spec.results[0]
    result = None if result_type is type(None) else data.draw(strategy_for(result_type))
    protocol = make_protocol()
    endpoint = Endpoint(URL, binding, "1.0")  # type: ignore[arg-type]
    request = data.draw(strategy_for(spec.params))
    if binding == "rest":
        request = _for_rest(request)
    call = protocol.receive_request(_served(build_request(operation, request, endpoint)))
    assert isinstance(call, Call)
    reply = protocol.reply_result(call, result)
    assert read_reply(operation, endpoint, reply.status, reply.body) == result


ENDPOINTS = st.builds(
    Endpoint,
    st.just(URL),
    st.sampled_from(["jsonrpc", "rest"]),
    st.sampled_from(["1.0", "0.3"]),
)
JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(
            st.sampled_from(
                ["jsonrpc", "id", "result", "error", "code", "message", "data", "task", "status"]
            ),
            inner,
            max_size=4,
        )
    ),
    max_leaves=12,
)
BODIES = st.binary(max_size=200) | JSONISH.map(msgspec.json.encode)


@SETTINGS
@given(
    operation=st.sampled_from(_ONE_SHOT),
    endpoint=ENDPOINTS,
    status=st.sampled_from([200, 201, 400, 401, 404, 409, 500, 503]),
    body=BODIES,
)
def test_any_reply_gives_a_result_or_a_clear_error(
    operation: Operation, endpoint: Endpoint, status: int, body: bytes
) -> None:
    with contextlib.suppress(AgentError, InvalidReplyError):
        read_reply(operation, endpoint, status, body)


@SETTINGS
@given(
    endpoint=ENDPOINTS,
    operation=st.sampled_from([Operation.SEND_STREAMING_MESSAGE, Operation.SUBSCRIBE_TO_TASK]),
    chunks=st.lists(
        st.binary(max_size=60)
        | BODIES.map(lambda body: b"id: 1\ndata: " + body.replace(b"\n", b" ") + b"\n\n"),
        max_size=5,
    ),
)
def test_any_stream_gives_events_or_a_clear_error(
    endpoint: Endpoint, operation: Operation, chunks: list[bytes]
) -> None:
    decoder = StreamDecoder(operation, endpoint)
    with contextlib.suppress(AgentError, InvalidReplyError):
        for chunk in chunks:
            decoder.feed(chunk)
        decoder.close()


@SETTINGS
@given(body=BODIES)
def test_any_card_body_gives_a_card_or_a_clear_error(body: bytes) -> None:
    with contextlib.suppress(InvalidReplyError):
        parse_card(body)


STREAM_OPERATIONS = [Operation.SEND_STREAMING_MESSAGE, Operation.SUBSCRIBE_TO_TASK]


@pytest.mark.parametrize("binding", ["jsonrpc", "rest"])
@pytest.mark.parametrize("dialect", ["1.0", "0.3"])
@SETTINGS
@given(data=st.data())
def test_every_stream_event_our_server_encodes_reads_back(
    binding: str, dialect: str, data: st.DataObject
) -> None:
    operation = data.draw(st.sampled_from(STREAM_OPERATIONS))
    endpoint = Endpoint(URL, binding, dialect)  # type: ignore[arg-type]
    request = t.SubscribeToTaskRequest(id="task-1")
    if operation is Operation.SEND_STREAMING_MESSAGE:
        request = t.SendMessageRequest(message=data.draw(strategy_for(t.Message)))  # type: ignore[assignment]
    call = make_protocol().receive_request(_served(build_request(operation, request, endpoint)))
    assert isinstance(call, Call), call.body  # type: ignore[union-attr]
    stream = make_protocol().open_event_stream(call)
    events = data.draw(st.lists(strategy_for(t.StreamResponse), min_size=1, max_size=4))
    frames = b""
    sent = []
    for seq, event in enumerate(events, start=1):
        if stream.finished:
            break
        frames += stream.encode(event, seq)
        sent.append(event)
    decoder = StreamDecoder(operation, endpoint)
    received = decoder.feed(frames) + decoder.close()
    assert [r.event_id for r in received] == [str(i) for i in range(1, len(sent) + 1)]
    if dialect == "1.0":
        assert [r.event for r in received] == sent
    else:  # what the v0.3 shapes can carry of each event, read back in the v1.0 model
        there, back = (
            (v03c.stream_event_from_v1, v03c.stream_event_to_v1)
            if binding == "jsonrpc"
            else (rest_convert.stream_response_from_v1, rest_convert.stream_response_to_v1)
        )
        assert [r.event for r in received] == [back(there(event)) for event in sent]
    assert received[-1].last == stream.finished
