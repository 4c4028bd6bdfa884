"""What one client address may have on its way out: a budget of bytes in flight.

gRPC honours HTTP/2 flow control per message, not per byte: a stream's message is handed to
grpc whole and copied into its buffers, where it stays until the client reads it. A client
that opens many streams to a big task and reads none of them would make the server hold one
copy per stream (60 unread subscriptions to a 12 MiB task held about 1.2 GB). So a stream
waits before it hands a message over while its client address already has ``limit`` bytes
in flight; a waiting stream holds only the payload it would send, which for a big event is
the one bytes object every stream of that event shares. A message larger than the whole
budget goes when nothing else of its address is in flight. Waiters are served in order.

A client that reads one of its streams only after another one ends would wait forever
behind a message nobody reads, so a stream waits at most ``wait`` seconds: then it ends
with RESOURCE_EXHAUSTED (`InFlightWaitError`), and the client may subscribe again.

What it bounds: per client address, ``limit`` bytes plus one message; the accounts of
addresses with nothing in flight and nobody waiting are dropped.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import AsyncIterator
from typing import Final

__all__ = ["DEFAULT_IN_FLIGHT_WAIT", "DEFAULT_MAX_IN_FLIGHT", "InFlight", "InFlightWaitError"]

#: Bytes of stream messages in flight to one client address (`GrpcServer.max_in_flight`).
DEFAULT_MAX_IN_FLIGHT: Final = 16 * 1024 * 1024
#: Seconds a stream waits for its client's budget before it ends.
DEFAULT_IN_FLIGHT_WAIT: Final = 30.0


class InFlightWaitError(Exception):
    """A stream waited ``wait`` seconds for its client's budget: the client is not reading
    what is already in flight to it."""


class _Account:
    """One address: bytes in flight, and the streams waiting to send, in order."""

    __slots__ = ("held", "queue")

    def __init__(self) -> None:
        self.held = 0
        self.queue: deque[tuple[int, asyncio.Future[None]]] = deque()


class InFlight:
    """The budget of every client address (see the module)."""

    def __init__(
        self, limit: int = DEFAULT_MAX_IN_FLIGHT, wait: float = DEFAULT_IN_FLIGHT_WAIT
    ) -> None:
        if limit < 1:
            raise ValueError("max_in_flight must be at least 1 byte")
        if wait <= 0:
            raise ValueError("in_flight_wait must be positive")
        self.limit = limit
        self.wait = wait
        self._accounts: dict[str, _Account] = {}

    def held(self, address: str) -> int:
        """Bytes in flight to ``address`` now."""
        account = self._accounts.get(address)
        return 0 if account is None else account.held

    @property
    def total(self) -> int:
        """Bytes in flight to every address."""
        return sum(account.held for account in self._accounts.values())

    @contextlib.asynccontextmanager
    async def hold(self, address: str, size: int) -> AsyncIterator[None]:
        """Wait until ``size`` bytes fit in the budget of ``address``, hold them while the
        body runs (the message is being sent), then give them back. `InFlightWaitError` when
        they did not fit within ``wait`` seconds."""
        account = self._accounts.get(address)
        if account is None:
            account = self._accounts[address] = _Account()
        if not account.queue and self._fits(account, size):
            account.held += size
        else:
            granted = asyncio.get_running_loop().create_future()
            account.queue.append((size, granted))
            try:
                # A timeout cancels ``granted`` unless it was granted meanwhile.
                await asyncio.wait_for(granted, self.wait)
            except BaseException as exc:
                # Cancelled after the grant but before it was seen: give the bytes back.
                if granted.done() and not granted.cancelled():
                    self._give_back(address, account, size)
                else:
                    granted.cancel()  # skipped by _serve
                    self._serve(account)
                    self._forget_if_idle(address, account)
                if isinstance(exc, TimeoutError):
                    raise InFlightWaitError(f"waited {self.wait:g} s for {address}") from None
                raise
        try:
            yield
        finally:
            self._give_back(address, account, size)

    def _fits(self, account: _Account, size: int) -> bool:
        # A message larger than the whole budget goes alone rather than never.
        return account.held == 0 or account.held + size <= self.limit

    def _give_back(self, address: str, account: _Account, size: int) -> None:
        account.held -= size
        self._serve(account)
        self._forget_if_idle(address, account)

    def _serve(self, account: _Account) -> None:
        """Grant the waiters that fit now, first come first served."""
        queue = account.queue
        while queue:
            size, granted = queue[0]
            if granted.done():  # its stream was cancelled while it waited
                queue.popleft()
                continue
            if not self._fits(account, size):
                return
            queue.popleft()
            account.held += size
            granted.set_result(None)

    def _forget_if_idle(self, address: str, account: _Account) -> None:
        if account.held == 0 and not account.queue and self._accounts.get(address) is account:
            del self._accounts[address]
