"""Tasks, messages, parts, artifacts and the events that stream them (v1.0 model)."""

from __future__ import annotations

import datetime as _dt
from typing import Annotated, Any

import msgspec
from msgspec import UNSET, UnsetType, field

from a2a_core.types._base import WireStruct, check_oneof

from ._common import NonEmptyStr, Struct, to_utc
from ._enums import Role, TaskState

__all__ = [
    "Artifact",
    "Message",
    "Part",
    "SendMessageResponse",
    "StreamResponse",
    "Task",
    "TaskArtifactUpdateEvent",
    "TaskStatus",
    "TaskStatusUpdateEvent",
]


class Part(WireStruct, kw_only=True, frozen=True):
    """One piece of content: exactly one of ``text``, ``raw``, ``url`` or ``data``.

    ``data`` is a ``google.protobuf.Value``, so any JSON value (``null`` included) is a set
    member; that is why the oneof members default to ``UNSET`` rather than ``None``.
    """

    __oneof__ = ("text", "raw", "url", "data")

    text: str | UnsetType = UNSET
    """Plain text content."""
    raw: bytes | UnsetType = UNSET
    """File bytes, base64 on the wire."""
    url: str | UnsetType = UNSET
    """A URL pointing at the file content."""
    data: Any | UnsetType = UNSET
    """Structured data: any JSON value."""
    metadata: Struct = field(default_factory=dict)
    """Free-form metadata for this part."""
    filename: str = ""
    """An optional file name (allowed on every kind of part)."""
    media_type: str = ""
    """The media type of the content, e.g. ``text/plain`` or ``image/png``."""

    def __post_init__(self) -> None:
        check_oneof(self)


NonEmptyParts = Annotated[list[Part], msgspec.Meta(min_length=1)]


class Message(WireStruct, kw_only=True, frozen=True):
    """One turn of communication between a client and an agent."""

    message_id: NonEmptyStr
    """Unique id of the message, chosen by its sender."""
    context_id: str = ""
    """The conversation this message belongs to."""
    task_id: str = ""
    """The task this message belongs to, when one exists."""
    role: Role
    """Who sent the message."""
    parts: NonEmptyParts
    """The content (at least one part)."""
    metadata: Struct = field(default_factory=dict)
    """Free-form metadata (extension data is keyed by extension URI)."""
    extensions: list[str] = field(default_factory=list)
    """URIs of the extensions that contributed to this message."""
    reference_task_ids: list[str] = field(default_factory=list)
    """Other tasks this message refers to."""

    def __post_init__(self) -> None:
        if self.role is Role.UNSPECIFIED:
            raise ValueError("Message.role must be ROLE_USER or ROLE_AGENT")

    @property
    def text(self) -> str:
        """The text parts, joined by newlines (``""`` without any): a message's parts are
        separate pieces, as `TaskContext.text` reads them. Other parts are skipped."""
        return _joined(self.parts, "\n")


def _joined(parts: list[Part], separator: str) -> str:
    if len(parts) == 1:  # the usual case: no generator to join
        text = parts[0].text
        return text if isinstance(text, str) else ""
    return separator.join(part.text for part in parts if isinstance(part.text, str))


class TaskStatus(WireStruct, kw_only=True, frozen=True):
    """A task's state, with an optional message and the time it was recorded."""

    state: TaskState
    """The lifecycle state."""
    message: Message | None = None
    """A message that goes with the status (for example, the question of input-required)."""
    timestamp: _dt.datetime | None = None
    """When the status was recorded; normalised to UTC and emitted with ``Z``."""

    def __post_init__(self) -> None:
        if self.timestamp is not None:
            msgspec.structs.force_setattr(self, "timestamp", to_utc(self.timestamp))


class Artifact(WireStruct, kw_only=True, frozen=True):
    """An output of a task: one or more parts with an id unique within the task."""

    artifact_id: NonEmptyStr
    """Unique id of the artifact within its task."""
    name: str = ""
    """A human-readable name."""
    description: str = ""
    """A human-readable description."""
    parts: NonEmptyParts
    """The content (at least one part)."""
    metadata: Struct = field(default_factory=dict)
    """Free-form metadata."""
    extensions: list[str] = field(default_factory=list)
    """URIs of the extensions that contributed to this artifact."""

    @property
    def text(self) -> str:
        """The text parts, joined as they are (``""`` without any). A streamed artifact
        is stored as one part per chunk (``append``), each carrying its own spaces, so the
        whole text is their concatenation, not ``parts[0].text``. Other parts are
        skipped."""
        return _joined(self.parts, "")


class Task(WireStruct, kw_only=True, frozen=True):
    """The unit of work an agent performs for a client."""

    id: NonEmptyStr
    """Server-generated task id."""
    context_id: str = ""
    """The conversation the task belongs to (servers always set it)."""
    status: TaskStatus
    """The current status."""
    artifacts: list[Artifact] = field(default_factory=list)
    """Outputs produced so far."""
    history: list[Message] = field(default_factory=list)
    """The messages exchanged so far, oldest first."""
    metadata: Struct = field(default_factory=dict)
    """Free-form metadata."""


class TaskStatusUpdateEvent(WireStruct, kw_only=True, frozen=True):
    """A streamed change of a task's status (v1.0 has no ``final`` flag: the stream closes)."""

    task_id: NonEmptyStr
    """The task that changed."""
    context_id: NonEmptyStr
    """The task's context."""
    status: TaskStatus
    """The new status."""
    metadata: Struct = field(default_factory=dict)
    """Free-form metadata."""


class TaskArtifactUpdateEvent(WireStruct, kw_only=True, frozen=True):
    """A streamed artifact, or a chunk of one when ``append`` is set."""

    task_id: NonEmptyStr
    """The task the artifact belongs to."""
    context_id: NonEmptyStr
    """The task's context."""
    artifact: Artifact
    """The artifact, or the chunk of it to append."""
    append: bool = False
    """Append these parts to the artifact already sent with the same ``artifactId``."""
    last_chunk: bool = False
    """This is the final chunk of the artifact."""
    metadata: Struct = field(default_factory=dict)
    """Free-form metadata."""


class SendMessageResponse(WireStruct, kw_only=True, frozen=True):
    """The result of SendMessage: exactly one of ``task`` or ``message``."""

    __oneof__ = ("task", "message")

    task: Task | None = None
    """The task the message created or continued."""
    message: Message | None = None
    """A direct reply, when the agent answered without a task."""

    def __post_init__(self) -> None:
        check_oneof(self)


class StreamResponse(WireStruct, kw_only=True, frozen=True):
    """One event of a stream (or one webhook body): exactly one member is set."""

    __oneof__ = ("task", "message", "status_update", "artifact_update")

    task: Task | None = None
    """A task snapshot."""
    message: Message | None = None
    """A message."""
    status_update: TaskStatusUpdateEvent | None = None
    """A status change."""
    artifact_update: TaskArtifactUpdateEvent | None = None
    """An artifact or artifact chunk."""

    def __post_init__(self) -> None:
        check_oneof(self)
