"""The v0.3 JSON-RPC dialect: its wire shapes and their conversions to and from v1.0.

v1.0 is the one model the library works with; a v0.3 request is decoded into the structs of
:mod:`.types` and converted to v1.0 at once, and every v1.0 result going back to a v0.3
caller is converted at the last moment (:mod:`.convert`). What does not survive the trip
either way is listed in the docstring of :mod:`.convert` and in ``docs/wire-dialects.md``.
"""

from . import convert, types
from .convert import card_v0_3_fields
from .types import (
    ALL_STRUCTS,
    AgentCard,
    Artifact,
    DataPart,
    FileContent,
    FilePart,
    Message,
    MessageSendParams,
    Part,
    Role,
    SendMessageResult,
    StreamResult,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
    TextPart,
)

__all__ = [
    "ALL_STRUCTS",
    "AgentCard",
    "Artifact",
    "DataPart",
    "FileContent",
    "FilePart",
    "Message",
    "MessageSendParams",
    "Part",
    "Role",
    "SendMessageResult",
    "StreamResult",
    "Task",
    "TaskArtifactUpdateEvent",
    "TaskState",
    "TaskStatus",
    "TaskStatusUpdateEvent",
    "TextPart",
    "card_v0_3_fields",
    "convert",
    "types",
]
