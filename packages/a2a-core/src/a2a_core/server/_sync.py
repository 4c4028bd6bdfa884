"""A one-shot event that costs nothing until somebody waits for it (L2, private).

Every execution has a few signals (task created, may reply, done) and every task writer one
per change, yet most of them are set without anybody ever waiting. ``anyio.Event()`` looks
up the running backend each time it is created, which made events a measurable share of a
blocking SendMessage (a few microseconds each, several per request; see ``bench/``). A
:class:`Signal` is a flag; the anyio event behind it exists only once a waiter needs one.
"""

from __future__ import annotations

import anyio
import anyio.lowlevel

__all__ = ["Signal"]


class Signal:
    """Like ``anyio.Event`` (set once, wait until set), created lazily."""

    __slots__ = ("_event", "_set")

    def __init__(self) -> None:
        self._set = False
        self._event: anyio.Event | None = None

    def set(self) -> None:
        """Set the signal and wake every waiter (idempotent)."""
        if not self._set:
            self._set = True
            if self._event is not None:
                self._event.set()

    async def wait(self) -> None:
        """Wait until the signal is set (a checkpoint even when it already is, as anyio's)."""
        if self._set:
            await anyio.lowlevel.checkpoint()
            return
        if self._event is None:
            self._event = anyio.Event()
        await self._event.wait()
