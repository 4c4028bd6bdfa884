"""Extensions in the runtime (L2): declaration, activation and hooks.

An extension declares its :class:`AgentExtension` (merged into the card), is active for a
call when the client asked for its URI (``A2A-Extensions``) and :meth:`Extension.activate`
agrees (asked once per call, when the call has been decoded: that answer sets the reply's
``A2A-Extensions`` header, ``TaskContext.extensions`` and which hooks run; a declined
``required`` extension fails the call with -32008), and may hook the call on the way in
and every reply on the way out: the result of a non-streaming call, and each event of a
stream. Hooks decorate what one caller receives; they never change the stored task, so
callers that did not activate the extension are unaffected.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Sequence
from typing import Any

import msgspec

from a2a_core._protocol.call import Call
from a2a_core.types import AgentExtension, Message, SendMessageResponse, StreamResponse, Task

__all__ = ["Extension", "TimestampExtension"]


class Extension:
    """Base class of a runtime extension; override what you need."""

    def __init__(self, declaration: AgentExtension) -> None:
        self.declaration = declaration

    @property
    def uri(self) -> str:
        """The extension's URI."""
        return self.declaration.uri

    def activate(self, requested: Sequence[str], call: Call) -> bool:
        """Whether to activate for a call that requested ``requested`` (default: if asked).

        Called once per call; ``call.extensions`` are the declared URIs the client asked for.
        """
        return self.uri in requested

    async def on_request(self, call: Call) -> Call:
        """Inspect or adjust a call before it runs (default: unchanged)."""
        return call

    def on_result(self, call: Call, result: Any) -> Any:
        """Decorate the result of a non-streaming call (default: unchanged)."""
        return result

    def on_event(self, call: Call, event: StreamResponse) -> StreamResponse:
        """Decorate one event of a stream (default: unchanged)."""
        return event


class TimestampExtension(Extension):
    """Stamps the messages and tasks a caller receives with the time the server sent them.

    When active, ``metadata[<uri>] = {"timestamp": "<RFC 3339 UTC>"}`` is added to the
    ``Message`` or ``Task`` of each result and stream event (and to status messages of
    status updates). A small, complete example of an extension with both hooks.
    """

    URI = "https://a2a-py.dev/extensions/timestamp/v1"

    def __init__(self, uri: str = URI) -> None:
        super().__init__(
            AgentExtension(
                uri=uri,
                description="Adds a server timestamp to the messages and tasks returned.",
            )
        )

    def _stamp(self) -> dict[str, Any]:
        now = _dt.datetime.now(_dt.UTC).isoformat(timespec="milliseconds")
        return {self.uri: {"timestamp": now.replace("+00:00", "Z")}}

    def _stamped(self, value: Any) -> Any:
        if isinstance(value, Message | Task):
            return msgspec.structs.replace(value, metadata={**value.metadata, **self._stamp()})
        return value

    def on_result(self, call: Call, result: Any) -> Any:
        if isinstance(result, SendMessageResponse):
            return SendMessageResponse(
                task=self._stamped(result.task), message=self._stamped(result.message)
            )
        return self._stamped(result)

    def on_event(self, call: Call, event: StreamResponse) -> StreamResponse:
        if event.task is not None:
            return StreamResponse(task=self._stamped(event.task))
        if event.message is not None:
            return StreamResponse(message=self._stamped(event.message))
        if event.status_update is not None and event.status_update.status.message is not None:
            status = event.status_update.status
            stamped = msgspec.structs.replace(status, message=self._stamped(status.message))
            return StreamResponse(
                status_update=msgspec.structs.replace(event.status_update, status=stamped)
            )
        return event
