"""When a failed call is tried again, and how long to wait (L2)."""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Final

import httpx

__all__ = ["BEFORE_REPLY", "RetryPolicy"]

#: Connection failures that happen before any byte of a response: the only ones retried.
BEFORE_REPLY: Final = (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout)


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """Retries of calls that got no reply at all.

    A call is retried only when the connection failed before any byte of a response arrived
    (refused, reset, a connect or pool timeout), so the agent may have done nothing, or, at
    worst, received the same request twice: a SendMessage retried is the same bytes, hence
    the same ``messageId``, which the spec lets agents treat as one message, and which
    servers of this library do (idempotent sends, ``docs/durability.md``: the copy is
    answered with the task the first one started; other servers may run it twice). A reply,
    even an error, is never retried; a stream is never retried after its first event (it is
    *resumed*, by `A2AClient`'s ``resume``). The same bounds limit a stream's resumes that
    bring no new event.
    """

    attempts: int = 3
    """Tries in all (1: no retry)."""
    backoff: float = 0.2
    """The first wait, in seconds; it doubles with each retry."""
    max_backoff: float = 2.0
    """The longest wait between two tries."""
    deadline: float = 15.0
    """Seconds after the first try beyond which no retry starts."""

    def __post_init__(self) -> None:
        if self.attempts < 1:
            raise ValueError("RetryPolicy.attempts must be at least 1")
        if self.backoff < 0 or self.max_backoff < 0 or self.deadline < 0:
            raise ValueError("RetryPolicy waits and deadline must not be negative")

    def wait(self, retry: int) -> float:
        """The wait before retry number ``retry`` (0 for the first): full jitter, so that
        many clients cut at once do not come back at once."""
        ceiling = min(self.max_backoff, self.backoff * (2**retry))
        return random.uniform(0, ceiling)
