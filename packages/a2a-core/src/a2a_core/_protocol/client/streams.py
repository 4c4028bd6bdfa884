"""Reading a stream: SSE bytes to v1.0 events, with their ids and where the stream ends (L1).

`StreamDecoder` is fed the body of a streaming reply as it arrives and returns each complete
event as a `ReceivedEvent`: the v1.0 `StreamResponse` (converted from v0.3 when the interface
speaks it), the SSE ``id`` the server gave it (what ``Last-Event-ID`` resumes from), and
whether it is the stream's last (`ends_stream`, or v0.3's ``final: true``). An error event
raises `AgentError`; a frame that is not an event of the binding raises
`InvalidReplyError`. Comments (keep-alives) and frames without data are skipped.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

import msgspec

from a2a_core._protocol import codec
from a2a_core._protocol.client.cards import Endpoint
from a2a_core._protocol.client.errors import AgentError, InvalidReplyError
from a2a_core._protocol.client.replies import (
    _ENVELOPE,
    _ErrorObject,
    _jsonrpc_error,
    _rest_error,
)
from a2a_core._protocol.operations import Operation
from a2a_core._protocol.sse import (
    CLOSING_STATES,
    SUBSCRIPTION_CLOSING_STATES,
    SseParser,
    ends_stream,
)
from a2a_core.compat.v0_3 import convert as v03c
from a2a_core.compat.v0_3 import rest_convert
from a2a_core.compat.v0_3 import rest_types as v03rest
from a2a_core.compat.v0_3 import types as v03
from a2a_core.types import StreamResponse, TaskState

__all__ = ["ReceivedEvent", "StreamDecoder"]

_ANY: Final = msgspec.json.Decoder()


class _V1Reply(msgspec.Struct):
    """A v1.0 JSON-RPC stream frame, typed all the way down (the fast path)."""

    result: StreamResponse | None = None
    error: _ErrorObject | None = None


_V1_REPLY: Final = msgspec.json.Decoder(_V1Reply)
_V1_EVENT: Final = msgspec.json.Decoder(StreamResponse)


@dataclass(frozen=True, slots=True)
class ReceivedEvent:
    """One event of a stream, as the client received it."""

    event: StreamResponse
    """The event, in the v1.0 model."""
    event_id: str | None
    """The SSE ``id`` of its frame (``None`` when the server sent none)."""
    last: bool
    """Whether it ends its stream: a message, or a task or status update in a closing state
    (v0.3: also a status update marked ``final``)."""

    @property
    def task_id(self) -> str | None:
        """The task the event is about (``None`` for a message): what a client resumes a
        cut stream by."""
        event = self.event
        if event.task is not None:
            return event.task.id
        if event.status_update is not None:
            return event.status_update.task_id
        if event.artifact_update is not None:
            return event.artifact_update.task_id
        return None


class StreamDecoder:
    """Turns the bytes of one streaming reply into `ReceivedEvent` values."""

    __slots__ = ("_closing", "_endpoint", "_error", "_parser", "finished", "last_event_id")

    def __init__(
        self,
        operation: Operation,
        endpoint: Endpoint,
        *,
        closing_states: frozenset[TaskState] | None = None,
    ) -> None:
        """``closing_states``: where the stream ends, when not where ``operation``'s does (a
        send stream resumed by a subscription still ends on input-required)."""
        self._endpoint = endpoint
        if closing_states is None:
            closing_states = (
                SUBSCRIPTION_CLOSING_STATES
                if operation is Operation.SUBSCRIBE_TO_TASK
                else CLOSING_STATES
            )
        self._closing = closing_states
        self._parser = SseParser()
        # An error event that followed events in the same chunk: raised at the next call,
        # once those events have been handed over (none is lost to the error).
        self._error: Exception | None = None
        #: The id of the last event received with one (what a reconnect resumes from).
        self.last_event_id: str | None = None
        #: Whether the stream's last event was received.
        self.finished = False

    def feed(self, chunk: bytes) -> list[ReceivedEvent]:
        """The events that ``chunk`` completes. An error event raises `AgentError`, a frame
        that is not an event `InvalidReplyError`; the events before it in the same chunk
        are returned first, and the error raised at the next call."""
        self._raise_pending()
        return self._events(self._parser.feed(chunk))

    def close(self) -> list[ReceivedEvent]:
        """The end of the body: an unterminated last frame is dropped, as browsers do."""
        self._raise_pending()
        return self._events(self._parser.close())

    def _raise_pending(self) -> None:
        error, self._error = self._error, None
        if error is not None:
            raise error

    def _events(self, frames: list[Any]) -> list[ReceivedEvent]:
        events: list[ReceivedEvent] = []
        for frame in frames:
            if frame.data is None or not frame.data.strip():
                continue
            try:
                event, final = self._decode(frame.data)
            except (AgentError, InvalidReplyError) as exc:
                if not events:
                    raise
                self._error = exc
                return events
            last = final or ends_stream(event, self._closing)
            if frame.id:
                self.last_event_id = frame.id
            self.finished = self.finished or last
            events.append(ReceivedEvent(event, frame.id or None, last))
        return events

    def _decode(self, text: str) -> tuple[StreamResponse, bool]:
        # The fast path: a v1.0 event (or JSON-RPC error) decoded in one typed pass. Anything
        # else, or anything it refuses, takes the lenient path, which also says what is wrong.
        endpoint = self._endpoint
        if endpoint.dialect == "1.0":
            try:
                if endpoint.binding != "jsonrpc":
                    return _V1_EVENT.decode(text), False
                reply = _V1_REPLY.decode(text)
            except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
                pass
            else:
                if reply.error is not None:
                    raise _jsonrpc_error(reply.error, 200)
                if reply.result is not None:
                    return reply.result, False
        return self._decode_leniently(text.encode())

    def _decode_leniently(self, data: bytes) -> tuple[StreamResponse, bool]:
        endpoint = self._endpoint
        try:
            if endpoint.binding == "jsonrpc":
                try:
                    envelope = _ENVELOPE.decode(data)
                except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
                    raise InvalidReplyError(
                        "a stream event is not a JSON-RPC response", body=data
                    ) from None
                if envelope.error is not None:
                    raise _jsonrpc_error(envelope.error, 200)
                if not len(envelope.result):
                    raise InvalidReplyError("a stream event has no result", body=data)
                raw = bytes(envelope.result)
                if endpoint.dialect == "1.0":
                    return codec.decode(raw, StreamResponse), False
                legacy = codec.decode(raw, v03.StreamResult)
                final = isinstance(legacy, v03.TaskStatusUpdateEvent) and bool(legacy.final)
                return v03c.stream_event_to_v1(legacy), final
            fields = _ANY.decode(data)
            if isinstance(fields, dict) and "error" in fields:
                error = _rest_error(fields, 200)
                if error is not None:
                    raise error
            if endpoint.dialect == "1.0":
                return codec.decode(data, StreamResponse), False
            rest_event = codec.decode(data, v03rest.StreamResponse)
            update = rest_event.status_update
            final = update is not None and bool(getattr(update, "final", False))
            return rest_convert.stream_response_to_v1(rest_event), final
        except codec.DecodeError as exc:
            raise InvalidReplyError(
                f"a stream event is not valid: {exc.message}", body=data
            ) from None
        except (msgspec.DecodeError, RecursionError):
            raise InvalidReplyError("a stream event is not JSON", body=data) from None
        except (ValueError, TypeError, OverflowError) as exc:
            raise InvalidReplyError(f"a stream event is not valid: {exc}") from None
