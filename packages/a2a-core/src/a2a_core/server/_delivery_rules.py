"""The rules of webhook delivery (L2, pure): what an answer means, how often to try, how long
to wait between tries.

One value, :class:`DeliveryRules`, holds them for whoever makes the attempts: the in-memory
`WebhookPushSender` (which sleeps between them), the Redis push workers, and the SQL push
queue (which writes each attempt and its due time in the job's row, so that a retry
survives a restart). Nothing here waits, connects, logs or reads a clock, so the rules are
tested as plain functions and a queue applies them without running a sender. The jitter's
random draw is the one input from outside; a caller may pass its own (``uniform``).
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from typing import Final, TypeAlias

__all__ = ["DeliveryOutcome", "DeliveryRules", "Uniform"]

#: Draws a number between ``low`` and ``high`` (``random.uniform``; a test fixes it).
Uniform: TypeAlias = Callable[[float, float], float]

#: Statuses worth another attempt besides 5xx: the receiver timed out, or asks us to slow
#: down. Every other non-2xx status is the receiver's answer, and asking again changes nothing.
_RETRY_STATUSES: Final = frozenset({408, 429})


class DeliveryOutcome(Enum):
    """What one attempt came to, as the rules judge it."""

    DELIVERED = "delivered"
    """The receiver answered 2xx."""
    RETRY = "retry"
    """Worth another attempt (if any is left): 408, 429, 5xx, or no answer at all."""
    GIVE_UP = "give_up"
    """Not worth another: any other status (a 3xx too: redirects are never followed)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class DeliveryRules:
    """How a webhook delivery is tried: ``1 + retries`` attempts at most, with growing waits.

    The wait after failed attempt *n* (0-based) is ``backoff * factor**n`` seconds (0.5, 1,
    2... by default), capped at ``max_backoff``, times a random factor in
    ``[1 - jitter, 1 + jitter]`` so that many senders that failed together do not retry
    together. Checked when built: a wrong value raises `ValueError` naming the option.
    """

    retries: int = 3
    """Attempts after the first, each only after an outcome worth one (`DeliveryOutcome.RETRY`)."""
    backoff: float = 0.5
    """Seconds to wait after the first failed attempt."""
    factor: float = 2.0
    """How much each wait grows over the one before (at least 1: waits never shrink)."""
    max_backoff: float = 30.0
    """The longest wait, in seconds (before the jitter)."""
    jitter: float = 0.1
    """The spread of the random factor on each wait, between 0 (none) and 1."""

    def __post_init__(self) -> None:
        retries = self.retries
        if isinstance(retries, bool) or not isinstance(retries, int) or retries < 0:
            raise ValueError(f"retries must be an integer >= 0, not {retries!r}")
        for name in ("backoff", "max_backoff"):
            seconds = _finite(name, getattr(self, name))
            if seconds < 0:
                raise ValueError(f"{name} must be >= 0 seconds, not {seconds!r}")
        if _finite("factor", self.factor) < 1:
            raise ValueError(f"factor must be >= 1 (waits never shrink), not {self.factor!r}")
        if not 0 <= _finite("jitter", self.jitter) <= 1:
            raise ValueError(f"jitter must be between 0 and 1, not {self.jitter!r}")

    def outcome_of(self, status: int) -> DeliveryOutcome:
        """What an HTTP answer with ``status`` means for the delivery."""
        if 200 <= status < 300:
            return DeliveryOutcome.DELIVERED
        if status in _RETRY_STATUSES or status >= 500:
            return DeliveryOutcome.RETRY
        return DeliveryOutcome.GIVE_UP

    def another_attempt(self, attempt: int, outcome: DeliveryOutcome) -> bool:
        """Whether attempt number ``attempt`` (0-based), which came to ``outcome``, is
        followed by another: only an outcome worth one, and only while retries are left."""
        return outcome is DeliveryOutcome.RETRY and attempt < self.retries

    def delay(self, attempt: int, uniform: Uniform = random.uniform) -> float:
        """Seconds to wait after failed attempt number ``attempt`` (0-based) before the
        next: the capped backoff times ``uniform(1 - jitter, 1 + jitter)``."""
        return self.base_delay(attempt) * uniform(1 - self.jitter, 1 + self.jitter)

    def base_delay(self, attempt: int) -> float:
        """The wait after failed attempt ``attempt`` before the jitter: non-decreasing in
        ``attempt``, never over ``max_backoff``."""
        if self.backoff == 0:
            return 0.0
        try:
            grown = self.backoff * self.factor**attempt
        except OverflowError:  # a wait past 1e308 s: the cap has long been reached
            grown = math.inf
        return min(grown, self.max_backoff)


def _finite(name: str, value: object) -> float:
    """``value``, refused unless a finite number: a bool is an int to Python, and NaN or
    infinity would slip past a comparison or poison the arithmetic."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number, not {value!r}")
    return value
