"""Shared frames (L2): one encoding of a big event, shared by every stream writing it.

All the subscribers of one task send the same snapshot and the same events. Encoded for
each stream, a task of 4 MB cost 4 MB per subscriber, read or not (``bench/abuse.py
subscriptions``). Here the payload of such an event (the JSON inside the frame, see
:meth:`~a2a_core.sse.EventStream.share_key`) is encoded once, and every stream writing that
event at the same time writes the same bytes object.

What bounds it: entries are held *weakly*. A :class:`SharedPayload` lives as long as some
stream holds it, that is while that stream writes it out, and leaves the cache with the
last one; the cache itself keeps nothing alive. So it holds at most what the open streams
are writing anyway (each writes one frame at a time), once per distinct payload instead of
once per stream. Payloads smaller than ``min_size`` are not registered at all: a stream
writes those in one piece and lets go of them at once, so there would be nothing to share.

Keys say which event and how it is encoded: ``(identity, share_key)``, where the identity is
``(task id, seq)`` for an event of the task's log (a log never reuses a seq for another
event) or ``("task", task id, store version)`` for a task snapshot, and the ``share_key`` is
the stream's (binding and dialect family, and the v0.3 ``final`` flag).
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Hashable
from typing import Final

from a2a_core._protocol.sse import EventStream
from a2a_core.types import StreamResponse

__all__ = ["PIECE_SIZE", "FrameCache", "SharedPayload"]

#: The largest piece of a stream handed to the adapter in one write (bytes). A frame larger
#: than this goes out in pieces of this size, so that what a transport buffers for a client
#: that does not read stays near its high-water mark plus one piece, never a whole frame.
PIECE_SIZE: Final = 64 * 1024


class SharedPayload:
    """One encoded payload; whoever holds this object keeps it in the cache."""

    __slots__ = ("__weakref__", "data")

    def __init__(self, data: bytes) -> None:
        self.data = data
        """The payload bytes (never copied: every stream writes these)."""


class FrameCache:
    """Payloads of big events, shared between the streams writing them (see the module).

    :param min_size: the smallest payload (bytes) that is registered for sharing; smaller
        ones are handed out unregistered.
    """

    def __init__(self, min_size: int = PIECE_SIZE) -> None:
        self.min_size = min_size
        self._refs: dict[Hashable, weakref.ref[SharedPayload]] = {}

    def __len__(self) -> int:
        """How many payloads are shared now (each held by at least one stream)."""
        return len(self._refs)

    @property
    def nbytes(self) -> int:
        """The size of the payloads shared now, each counted once."""
        return sum(len(p.data) for ref in self._refs.values() if (p := ref()) is not None)

    def payload(
        self, identity: Hashable, stream: EventStream, event: StreamResponse
    ) -> SharedPayload | None:
        """The payload of ``event`` (known by ``identity``) in ``stream``'s encoding.

        The one shared now when another stream holds it; else encoded here, and registered
        when it is at least ``min_size`` bytes. ``None`` when ``stream`` shares nothing (a
        custom event encoder): encode the event with the stream itself then.
        """
        kind = stream.share_key(event)
        if kind is None:
            return None
        key = (identity, kind)
        ref = self._refs.get(key)
        if ref is not None:
            found = ref()
            if found is not None:
                return found
        shared = SharedPayload(stream.encode_payload(event))
        if len(shared.data) >= self.min_size:
            self._refs[key] = weakref.ref(shared, self._dropper(key))
        return shared

    def _dropper(self, key: Hashable) -> Callable[[weakref.ref[SharedPayload]], None]:
        refs = self._refs

        def drop(ref: weakref.ref[SharedPayload]) -> None:
            # Only our own entry: a newer payload may have been registered under the key.
            if refs.get(key) is ref:
                del refs[key]

        return drop
