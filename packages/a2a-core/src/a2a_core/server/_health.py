"""Readiness of a server (L2): does its backend answer? For a probe's ``/healthz``.

`A2AServer.check_health` asks the backend's optional ``check_health`` (see
`HealthCheckingBackend`: the in-memory backend always answers, Redis sends a ``PING``, SQL a
``SELECT 1``), within a timeout, and adds what the server knows itself: whether it runs and
whether its webhook sender does. The answer is a `Health`: ``ok``, one verdict per part,
and the HTTP status, headers and JSON body a route answers with (200 or 503), so that each
framework's route is one line (see ``docs/observability.md``).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Final, Protocol, runtime_checkable

import anyio
import msgspec

from a2a_core._protocol.http import RETRY_AFTER_SECONDS

__all__ = ["LIVENESS_PATH", "READINESS_PATH", "Health", "HealthCheckingBackend"]

#: Where a whole-process server (`a2a_starlette.run`, `a2a_aiohttp.run`, ``a2aserve serve``)
#: answers 200 while it serves HTTP (a liveness probe)...
LIVENESS_PATH: Final = "/healthz"
#: ... and 200 or 503 with `A2AServer.check_health` (a readiness probe).
READINESS_PATH: Final = "/readyz"

logger: Final = logging.getLogger("a2a_core.server")

_ENCODER: Final = msgspec.json.Encoder()
_HEADERS: Final = (("content-type", "application/json"), ("cache-control", "no-store"))


@runtime_checkable
class HealthCheckingBackend(Protocol):
    """A backend that can tell whether its parts answer (optional; see the module
    docstring)."""

    async def check_health(self) -> Mapping[str, bool]:
        """Whether each part answers, by name (``store``, ``event_log``, ``push_queue``...);
        raising counts as every part down."""
        ...


class Health(msgspec.Struct, frozen=True):
    """The outcome of `A2AServer.check_health`."""

    ok: bool
    """Every part answers and the server runs."""
    checks: dict[str, str]
    """Per part, ``"ok"`` or what is wrong (``"down"``, ``"timeout"``, ``"not running"``)."""

    @property
    def status(self) -> int:
        """The HTTP status a readiness route answers: 200, or 503 when not ok."""
        return 200 if self.ok else 503

    @property
    def headers(self) -> tuple[tuple[str, str], ...]:
        """The headers of that answer: JSON, never cached, and ``Retry-After`` with a 503."""
        if self.ok:
            return _HEADERS
        return (*_HEADERS, ("retry-after", str(RETRY_AFTER_SECONDS)))

    def body(self) -> bytes:
        """The JSON body of that answer: ``{"status": "ok"|"unavailable", "checks": {...}}``."""
        return _ENCODER.encode(
            {"status": "ok" if self.ok else "unavailable", "checks": self.checks}
        )


async def check_backend(
    backend: object, *, running: bool, stopping: bool, push: bool | None, timeout: float
) -> Health:
    """The health of a server in the state given, asking ``backend`` (module docstring);
    ``push``: whether its own webhook sender runs (``None``: it has none)."""
    checks: dict[str, str] = {
        "server": "stopping" if stopping else "ok" if running else "not running"
    }
    if push is not None:
        checks["push_queue"] = "ok" if push else "not running"
    if isinstance(backend, HealthCheckingBackend):
        verdicts: Mapping[str, bool] | None = None
        with anyio.move_on_after(timeout):
            try:
                verdicts = await backend.check_health()
            except Exception as exc:
                logger.warning("backend health check failed: %s", type(exc).__name__)
                verdicts = {"backend": False}
        if verdicts is None:
            logger.warning("backend health check gave no answer within %.1f s", timeout)
            checks["backend"] = "timeout"
        else:
            for part, answers in verdicts.items():
                checks[part] = "ok" if answers else "down"
    return Health(ok=all(v == "ok" for v in checks.values()), checks=checks)
