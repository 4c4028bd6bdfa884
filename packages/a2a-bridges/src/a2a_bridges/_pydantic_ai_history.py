"""Where the pydantic-ai bridge keeps conversations: a byte store, bounded by default, and
the trimming that keeps one conversation's history within its own bound.

Histories are kept serialized (``ModelMessagesTypeAdapter.dump_json``): their size in memory
is then their size in bytes, which is what the bounds count.
"""

from __future__ import annotations

import dataclasses
from collections import OrderedDict
from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from pydantic_ai.messages import (
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelRequest,
    SystemPromptPart,
    UserPromptPart,
)

__all__ = ["ConversationStore", "InMemoryConversationStore", "dump_history", "load_history"]

MIB = 1 << 20
#: What an entry costs besides its key and value (the dict slot, the objects): counted so
#: that many tiny entries cannot slip under the byte bound.
ENTRY_OVERHEAD = 256


@runtime_checkable
class ConversationStore(Protocol):
    """Bytes by key: the bridge's conversation histories (keyed by caller and context id) and
    the runs waiting on the user (keyed by task id).

    Implement it over a database or a cache to keep conversations across restarts or share
    them between replicas. A store may forget an entry at any time (to stay within its
    bounds): the bridge then starts that conversation afresh.
    """

    async def get(self, key: str) -> bytes | None:
        """The value stored under ``key``, or ``None``."""
        ...

    async def put(self, key: str, value: bytes) -> None:
        """Store ``value`` under ``key``, replacing what was there."""
        ...

    async def delete(self, key: str) -> None:
        """Forget ``key`` (no error when it is unknown)."""
        ...


class InMemoryConversationStore:
    """A `ConversationStore` in this process's memory, bounded in bytes.

    At most ``max_bytes`` in all (keys, values and a fixed overhead per entry are counted):
    past that the least recently used entries are evicted, so a client opening many
    conversations cannot grow memory without bound. A value larger than ``max_entry_bytes``
    is not kept (the key is forgotten). Defaults: 64 MiB in all, 2 MiB per entry.
    """

    def __init__(self, *, max_bytes: int = 64 * MIB, max_entry_bytes: int = 2 * MIB) -> None:
        if max_bytes <= 0 or max_entry_bytes <= 0:
            raise ValueError("max_bytes and max_entry_bytes must be positive")
        self.max_bytes = max_bytes
        self.max_entry_bytes = max_entry_bytes
        self._entries: OrderedDict[str, bytes] = OrderedDict()
        self._size = 0

    @property
    def size(self) -> int:
        """The bytes counted against ``max_bytes`` now."""
        return self._size

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, key: object) -> bool:
        return key in self._entries

    async def get(self, key: str) -> bytes | None:
        """The value kept under ``key`` (``None`` when unknown or evicted); it becomes the
        most recently used."""
        value = self._entries.get(key)
        if value is not None:
            self._entries.move_to_end(key)
        return value

    async def put(self, key: str, value: bytes) -> None:
        """Keep ``value`` under ``key``, evicting the least recently used entries past
        ``max_bytes``; a value over ``max_entry_bytes`` is not kept (``key`` is forgotten)."""
        self._remove(key)
        if len(value) > self.max_entry_bytes:
            return
        self._entries[key] = value
        self._size += _cost(key, value)
        while self._size > self.max_bytes and self._entries:
            self._remove(next(iter(self._entries)))

    async def delete(self, key: str) -> None:
        """Forget ``key`` (no error when it is unknown)."""
        self._remove(key)

    def _remove(self, key: str) -> None:
        value = self._entries.pop(key, None)
        if value is not None:
            self._size -= _cost(key, value)


def _cost(key: str, value: bytes) -> int:
    return len(key.encode()) + len(value) + ENTRY_OVERHEAD


def load_history(data: bytes | None) -> list[ModelMessage]:
    """The messages a store kept (none for ``None``)."""
    return [] if data is None else ModelMessagesTypeAdapter.validate_json(data)


def dump_history(messages: Sequence[ModelMessage], max_bytes: int) -> bytes | None:
    """``messages`` serialized within ``max_bytes``: whole turns are dropped from the start
    until they fit (the system prompt parts of the first request are kept), ``None`` when
    not even the last turn fits."""
    messages = list(messages)
    data = ModelMessagesTypeAdapter.dump_json(messages)
    if len(data) <= max_bytes:
        return data
    # A turn starts at a request carrying the user's prompt: dropping whole turns never
    # separates a tool call from its result.
    starts = [
        index
        for index, message in enumerate(messages)
        if index > 0
        and isinstance(message, ModelRequest)
        and any(isinstance(part, UserPromptPart) for part in message.parts)
    ]
    for start in starts:
        kept = messages[start:]
        system = [
            part
            for message in messages[:start]
            if isinstance(message, ModelRequest)
            for part in message.parts
            if isinstance(part, SystemPromptPart)
        ]
        first = kept[0]
        if system and isinstance(first, ModelRequest):
            kept[0] = dataclasses.replace(first, parts=[*system, *first.parts])
        data = ModelMessagesTypeAdapter.dump_json(kept)
        if len(data) <= max_bytes:
            return data
    return None
