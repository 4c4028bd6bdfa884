"""REST results: a v1.0 result or stream event as the body in the route's dialect (L1)."""

from __future__ import annotations

from typing import Final

from a2a_core import types as v1
from a2a_core._protocol import codec
from a2a_core._protocol.errors import (
    LocalProtocolError,
)
from a2a_core._protocol.operations import OPERATIONS, Dialect, Operation
from a2a_core.compat.v0_3 import rest_convert

# ---------------------------------------------------------------------------------------
# Result encoding

_EMPTY_OBJECT: Final = b"{}"
_NOTHING: Final = (type(None),)


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
        convert = spec.v0_3_rest_result
        if convert is None:
            raise LocalProtocolError(f"{operation.value} has no v0.3 REST route")
        return codec.encode(convert(value))
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
