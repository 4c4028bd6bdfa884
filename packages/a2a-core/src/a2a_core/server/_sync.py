"""A one-shot event that costs nothing until somebody waits for it (L2, private).

Every execution has a few signals (task created, may reply, done) and every task writer one
per change, yet most of them are set without anybody ever waiting. ``anyio.Event()`` looks
up the running backend each time it is created, and on asyncio wraps an ``asyncio.Event``
that looks its loop up again on every wait: together a measurable share of a blocking
SendMessage (see ``bench/``). A :class:`Signal` is a flag; a waiter on asyncio waits on a
future of its own, and elsewhere (trio) on an anyio event created on first need.
"""

from __future__ import annotations

import asyncio

import anyio
import anyio.lowlevel

try:
    from sniffio import current_async_library_cvar as _library_var
    from sniffio import thread_local as _library_thread
except ImportError:  # pragma: no cover - without sniffio, anyio assumes asyncio as we do
    _library_var = None  # type: ignore[assignment]
    _library_thread = None  # type: ignore[assignment]

__all__ = ["Signal", "running_asyncio_loop"]


def running_asyncio_loop() -> asyncio.AbstractEventLoop | None:
    """The running asyncio loop if asyncio runs the current task, else ``None`` (trio).

    The decision sniffio (hence anyio) makes, minus its fallbacks: trio marks the threads
    it runs in, so an asyncio loop that is running is the one in charge otherwise.
    """
    if _library_thread is not None:
        name = _library_thread.name or _library_var.get()
        if name is not None and name != "asyncio":
            return None
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


class Signal:
    """Like ``anyio.Event`` (set once, wait until set), created lazily."""

    __slots__ = ("_event", "_futures", "_loop", "_set")

    def __init__(self, loop: asyncio.AbstractEventLoop | None = None) -> None:
        """``loop``: the asyncio loop waiters will run on, when the creator knows it (saves
        finding out at every wait)."""
        self._loop = loop
        self._set = False
        self._futures: list[asyncio.Future[None]] | None = None
        self._event: anyio.Event | None = None

    def is_set(self) -> bool:
        """Whether :meth:`set` was called."""
        return self._set

    def set(self) -> None:
        """Set the signal and wake every waiter (idempotent)."""
        if self._set:
            return
        self._set = True
        if self._futures is not None:
            for future in self._futures:
                if not future.done():
                    future.set_result(None)
        if self._event is not None:
            self._event.set()

    async def wait(self) -> None:
        """Wait until the signal is set (a checkpoint even when it already is, as anyio's)."""
        if self._set:
            await anyio.lowlevel.checkpoint()
            return
        loop = self._loop or running_asyncio_loop()
        if loop is None:
            if self._event is None:
                self._event = anyio.Event()
            await self._event.wait()
            return
        # One future per waiter: a cancelled waiter cancels its own future, no other's.
        future: asyncio.Future[None] = loop.create_future()
        if self._futures is None:
            self._futures = []
        self._futures.append(future)
        try:
            await future
        finally:
            if not self._set:
                self._futures.remove(future)

    async def wait_at_most(self, seconds: float) -> bool:
        """Wait until the signal is set or ``seconds`` passed; whether it is set. On
        asyncio a timer on the waiter's own future: a tenth of the cost of a cancel scope
        with a deadline (``move_on_after``), on the path of every streaming send."""
        if self._set:
            return True
        loop = self._loop or running_asyncio_loop()
        if loop is None:
            with anyio.move_on_after(seconds):
                await self.wait()
            return self._set
        future: asyncio.Future[None] = loop.create_future()
        if self._futures is None:
            self._futures = []
        self._futures.append(future)
        timer = loop.call_later(seconds, _expire, future)
        try:
            await future
        finally:
            timer.cancel()
            if not self._set:
                self._futures.remove(future)
        return self._set


def _expire(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)
