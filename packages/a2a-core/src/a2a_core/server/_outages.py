"""How a backend reports its store being unreachable: `BackendUnavailableError`, `OutageLog`.

While a database or Redis is down, every request fails the same way; a log line (let alone
a traceback) per request would bury the one fact an operator needs. `OutageLog` turns the
failures into one WARNING when an outage begins, a reminder while it lasts, and one INFO
line when the backend says it is back; each call answers the client's error
(`BackendUnavailableError`), so a backend writes ``raise outages.failed(exc, "reading a
task") from None`` and nothing else.
"""

from __future__ import annotations

import logging
import time
from typing import Final

from a2a_core._protocol.errors import InternalError

__all__ = ["BackendUnavailableError", "OutageLog"]

#: Seconds between the reminders of an outage that goes on.
_REMIND_EVERY: Final = 60.0


class BackendUnavailableError(InternalError):
    """The task store (a database, Redis...) cannot be reached: the call did nothing that
    the client was told about, and may be retried once the store is back.

    -32603 like any internal error (the code the spec has for it), with a fixed message
    that names the symptom and nothing of the deployment; but 503 on REST and gRPC
    ``UNAVAILABLE``, which clients and load balancers retry, unlike a 500. Any backend
    raises it and the core answers it like every `A2AError`; the cause goes to the
    server's log (`OutageLog`), never to the client.
    """

    default_message = "Task store unavailable"
    http_status = http_status_v1_0_1 = 503
    grpc_status = grpc_status_v1_0_1 = "UNAVAILABLE"


class OutageLog:
    """The outages of one store, logged once each (see the module docstring).

    An outage that begins within ``quiet`` seconds of the last warning belongs to the same
    burst (a database restarting, connections killed in a loop): it is counted, not
    warned about again, until the reminder is due.

    :param logger: the backend's logger.
    :param what: what is unreachable, as the log says it (``"the database"``, ``"Redis"``).
    :param quiet: seconds without a failure after which the next one starts a new outage
        (for a backend that cannot tell when it recovered: it never calls `recovered`),
        and within which a new outage is part of the last burst.
    """

    def __init__(self, logger: logging.Logger, what: str, *, quiet: float = 30.0) -> None:
        self.logger = logger
        self.what = what
        self.quiet = quiet
        #: Failures in the current outage (0: none going on).
        self.failures = 0
        #: Failures since the last warning (what the next one reports).
        self.unreported = 0
        self._last_failure = 0.0
        self._last_warning: float | None = None
        self._warned = False  # whether this outage was warned about (its recovery is told)

    @property
    def down(self) -> bool:
        """Whether an outage is going on (a failure, and no recovery since)."""
        return self.failures > 0

    def failed(self, exc: BaseException, doing: str) -> BackendUnavailableError:
        """Count a failure (``exc``, while ``doing``) and return the client's error; log a
        WARNING, without traceback, only when it begins a burst, or as a reminder."""
        now = time.monotonic()
        if self.failures and now - self._last_failure > self.quiet:
            self.failures = 0  # a new outage: the last one ended unseen
        new_outage = self.failures == 0
        self.failures += 1
        self.unreported += 1
        self._last_failure = now
        last = self._last_warning
        if new_outage and (last is None or now - last > self.quiet):
            self._warn(now, "%s unreachable while %s: %s", self.what, doing, _cause(exc))
        elif last is None or now - last >= _REMIND_EVERY:
            self._warn(
                now,
                "%s still unreachable or failing again (%d failures since the last warning), "
                "now while %s: %s",
                self.what,
                self.unreported,
                doing,
                _cause(exc),
            )
        else:
            self.logger.debug("%s unreachable while %s: %s", self.what, doing, _cause(exc))
        return BackendUnavailableError()

    def _warn(self, now: float, message: str, *args: object) -> None:
        self._last_warning = now
        self._warned = True
        self.unreported = 0
        self.logger.warning(message, *args)

    def recovered(self) -> None:
        """The store answered again: end the outage (one INFO line, if it was warned of)."""
        if self.failures:
            if self._warned:
                self.logger.info(
                    "%s reachable again (after %d failed operations)", self.what, self.failures
                )
            self.failures = 0
            self._warned = False


def _cause(exc: BaseException) -> str:
    """One line about ``exc``: its type and first line (drivers' messages run long)."""
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__
