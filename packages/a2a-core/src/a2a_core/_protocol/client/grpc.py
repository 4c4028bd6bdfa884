"""Reading a gRPC reply: the status and message to the v1.0 result or an `AgentError` (L1).

The gRPC transport (``a2a_grpc``) hands over what its channel received: the message bytes
and the call's `GrpcStatus` (code, message, ``grpc-status-details-bin``). The agent's A2A
errors come back as `AgentError` with the reason of the status's ``ErrorInfo``, as on the
other bindings; a status without one is still the agent's answer, named by its code.
"""

from __future__ import annotations

from typing import Any, Final

from a2a_core._protocol.client.errors import AgentError, InvalidReplyError
from a2a_core._protocol.client.streams import ReceivedEvent
from a2a_core._protocol.codec import DecodeError
from a2a_core._protocol.grpc import codec as grpc_codec
from a2a_core._protocol.grpc.binding import GrpcStatus, parse_status_details
from a2a_core._protocol.operations import OPERATIONS, Operation
from a2a_core._protocol.sse import CLOSING_STATES, ends_stream
from a2a_core.types import StreamResponse, TaskState

__all__ = ["grpc_error", "read_grpc_event", "read_grpc_reply"]

_NOTHING: Final = type(None)


def grpc_error(status: GrpcStatus) -> AgentError:
    """The `AgentError` a non-OK status reports: the ``ErrorInfo`` reason and metadata from
    its details when they hold one (the JSON-RPC ``code`` of that reason in the error
    table), else the status's code name as the reason."""
    reason: str | None = None
    metadata: dict[str, str] = {}
    if status.details:
        try:
            details = parse_status_details(status.details)
        except DecodeError:
            details = None
        if details is not None and details.reason:
            reason, metadata = details.reason, dict(details.metadata)
    error = AgentError(status.message, reason=reason, metadata=metadata)
    error.grpc_status = status.name
    if reason is None:
        error.reason = status.name
    return error


def read_grpc_reply(operation: Operation, status: GrpcStatus, message: bytes) -> Any:
    """The v1.0 result of ``operation`` from its reply (``None`` for a delete), or the
    `AgentError` of a non-OK status, raised. A message that is not the operation's result
    is `InvalidReplyError`."""
    if status.code:
        raise grpc_error(status)
    result = OPERATIONS[operation].results[0]
    try:
        return grpc_codec.decode(message, None if result is _NOTHING else result)
    except DecodeError as exc:
        raise InvalidReplyError(f"the reply is not a {result.__name__}: {exc.message}") from None


def read_grpc_event(
    message: bytes, closing_states: frozenset[TaskState] = CLOSING_STATES
) -> ReceivedEvent:
    """One message of a gRPC stream as a `ReceivedEvent` (no event ids on gRPC); ``last``
    by the stream's closing states. `InvalidReplyError` for bytes that are no event."""
    try:
        event = grpc_codec.decode(message, StreamResponse)
    except DecodeError as exc:
        raise InvalidReplyError(
            f"a stream message is not a StreamResponse: {exc.message}"
        ) from None
    return ReceivedEvent(event, None, ends_stream(event, closing_states))
