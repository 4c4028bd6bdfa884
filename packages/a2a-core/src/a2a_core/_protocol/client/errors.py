"""What a call can end in besides its result: the client's errors (L1, pure).

`AgentError` is the agent's own answer (an A2A error, in any binding and dialect); the others
say that no answer was had: the reply was not A2A (`InvalidReplyError`), the card offers
nothing this client speaks (`NoUsableInterfaceError`), the operation is not in the
interface's dialect (`NotInDialectError`). The async client adds its transport failures
(``a2a_core.client.TransportError``).

`AgentError` is deliberately *not* an `a2a_core.errors.A2AError`: a server answers every
``A2AError`` its agent raises to its own caller, so an agent that calls another agent and lets
that agent's "task not found" escape would tell its caller that *its* task was not found.
The typed class of the table is still at hand: ``err.error_type``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from a2a_core._protocol.errors import ERROR_CLASSES, A2AError, error_class_for_code

__all__ = [
    "AgentError",
    "ClientError",
    "InvalidReplyError",
    "NoUsableInterfaceError",
    "NotInDialectError",
]

_BY_REASON: Final[dict[str, type[A2AError]]] = {cls.reason: cls for cls in ERROR_CLASSES}
#: How much of an unexpected reply an error message quotes.
_EXCERPT: Final = 200


class ClientError(Exception):
    """Base of everything the client raises instead of a result."""


class AgentError(ClientError):
    """The agent answered the call with an A2A error.

    ``code`` is the JSON-RPC code (on REST: the one the body names, else the one of
    ``reason`` in the error table, else ``None``); ``reason`` the ErrorInfo reason
    (``TASK_NOT_FOUND``), or the table's reason for ``code`` when the reply carried none;
    ``http_status`` the HTTP status of the reply (200 for JSON-RPC errors, which HTTP does
    not see; ``None`` on gRPC); ``grpc_status`` the status's code name on gRPC
    (``NOT_FOUND``); ``metadata`` the ErrorInfo's string map; ``data`` the raw
    ``error.data``.
    """

    code: int | None
    reason: str | None
    message: str
    http_status: int | None
    grpc_status: str | None
    metadata: dict[str, str]
    data: object | None

    def __init__(
        self,
        message: str,
        *,
        code: int | None = None,
        reason: str | None = None,
        http_status: int | None = None,
        metadata: Mapping[str, str] | None = None,
        data: object | None = None,
    ) -> None:
        known = _known_class(code, reason)
        self.code = code if code is not None else (known.code if known else None)
        self.reason = reason if reason else (known.reason if known else None)
        self.message = message
        self.http_status = http_status
        self.grpc_status = None
        self.metadata = dict(metadata) if metadata else {}
        self.data = data
        super().__init__(message)

    @property
    def error_type(self) -> type[A2AError] | None:
        """The error table's class for this error (`TaskNotFoundError`...), or ``None`` for
        a code and reason the table does not know (a peer's own)."""
        return _known_class(self.code, self.reason)

    def __str__(self) -> str:
        label = self.reason or (str(self.code) if self.code is not None else None)
        if label is None:
            label = f"HTTP {self.http_status}" if self.http_status is not None else "error"
        return f"{label}: {self.message}" if self.message else label

    def __repr__(self) -> str:
        return f"AgentError(code={self.code!r}, reason={self.reason!r}, message={self.message!r})"


def _known_class(code: int | None, reason: str | None) -> type[A2AError] | None:
    if code is not None:
        known = error_class_for_code(code)
        if known is not None:
            return known
    return _BY_REASON.get(reason) if reason else None


class InvalidReplyError(ClientError):
    """The reply is not an A2A reply: not JSON, the wrong shape, an unexpected status or
    content type. ``status`` is the HTTP status; the message quotes the start of the body."""

    status: int | None

    def __init__(self, message: str, *, status: int | None = None, body: bytes = b"") -> None:
        self.status = status
        if body:
            excerpt = body[:_EXCERPT].decode("utf-8", "replace")
            more = "..." if len(body) > _EXCERPT else ""
            message = f"{message} (body: {excerpt!r}{more})"
        super().__init__(message)


class NoUsableInterfaceError(ClientError):
    """The card lists no interface in a binding and version this client speaks (or that the
    caller asked for)."""


class NotInDialectError(ClientError):
    """The operation does not exist in the interface's dialect (ListTasks in v0.3)."""
