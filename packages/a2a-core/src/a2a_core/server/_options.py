"""The server's grouped settings (L2): streams and push notifications, each one value.

Like `TaskLimits` and `ExecutionGuards`, each is a frozen dataclass validated when it is
built: a mistake (a negative keep-alive, a host that is not a string) fails where the server
is configured, with the option's name, not on the first request that needs it.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from typing import Final

from a2a_core.server._webhook_guard import WebhookPolicy

__all__ = ["DEFAULT_BACKLOG_LIMIT", "DEFAULT_MAX_STREAMS_PER_PEER", "PushOptions", "StreamOptions"]

#: How far (bytes of logged events) a stream may fall behind its task by default: far more
#: than a client that reads ever lags, little next to what the log itself may hold.
DEFAULT_BACKLOG_LIMIT: Final = 16 * 1024 * 1024
#: Streams one client address may hold open at once by default: more than a client that
#: follows its own tasks needs, few enough that one client cannot hold the server's.
DEFAULT_MAX_STREAMS_PER_PEER: Final = 100


def _seconds(name: str, value: object, *, allow_none: bool = False) -> None:
    if value is None and allow_none:
        return
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not (value > 0 and math.isfinite(value))
    ):
        expected = "a positive number of seconds" + (" or None" if allow_none else "")
        raise ValueError(f"{name} must be {expected}, not {value!r}")


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class StreamOptions:
    """How the server's SSE streams behave (``A2AServer(streams=...)``).

    Every stream (a streaming send, a subscription, a ``Last-Event-ID`` reconnect) follows
    its task's event log; these say how it keeps an idle connection alive, when an idle
    subscription ends, and how far a client that does not read may fall behind.
    """

    keep_alive_interval: float = 15.0
    """Seconds between ``: keep-alive`` comments on a stream with nothing to send, so that
    proxies do not cut it."""
    idle_timeout: float = 60.0
    """Seconds without an event after which a subscription (SubscribeToTask, a reconnect)
    closes; a streaming send stays open until its task settles."""
    backlog_limit: int | None = DEFAULT_BACKLOG_LIMIT
    """Bytes of logged events a stream may fall behind its task; past it, it ends with an
    error frame and the client resumes with ``Last-Event-ID`` (``None``: no limit). Measured
    on logs that can tell (the in-memory one: ``MeasuredEventLog``)."""
    first_frame_wait: float = 0.1
    """Seconds a streaming send waits for the agent's first report before it creates the
    task itself and sends it as the stream's first frame (keep-alives follow while the
    agent is quiet): a slow agent's stream starts at once, its task listed and cancelable,
    while a quick message-only reply still comes as one message. ``0``: always a task."""
    max_streams_per_peer: int | None = DEFAULT_MAX_STREAMS_PER_PEER
    """Streams one client address may have open at once (`HttpRequest.peer`); one more is
    refused with ResourceExhaustedError (-32099, REST 429 with ``Retry-After``) before it
    starts anything, so a client that opens streams and never reads them cannot hold the
    server's. Behind a reverse proxy, let the server see the client's address or raise it
    (docs/security.md). ``None``: no limit."""

    def __post_init__(self) -> None:
        _seconds("keep_alive_interval", self.keep_alive_interval)
        _seconds("idle_timeout", self.idle_timeout)
        wait = self.first_frame_wait
        if isinstance(wait, bool) or not isinstance(wait, int | float) or not 0 <= wait < 3600:
            raise ValueError(f"first_frame_wait must be 0 or more seconds, not {wait!r}")
        limit = self.backlog_limit
        if limit is not None and (type(limit) is not int or limit < 1):
            raise ValueError(
                f"backlog_limit must be a positive number of bytes or None, not {limit!r}"
            )
        most = self.max_streams_per_peer
        if most is not None and (type(most) is not int or most < 1):
            raise ValueError(
                f"max_streams_per_peer must be a positive integer or None, not {most!r}"
            )


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class PushOptions:
    """How webhooks are guarded and shown (``A2AServer(push=...)``); push notifications are
    on when the card declares them.

    Webhook URLs to loopback, private, link-local or non-http(s) targets are refused (the
    SSRF guard), when a config is created and again at every delivery, unless allowed here:
    ``allow_hosts`` and ``allow_private`` make the server's `WebhookPolicy`
    (``webhook_policy``), the one both checks read, whoever sends the webhooks.
    """

    allow_hosts: Sequence[str] = ()
    """Host names or IP networks allowed although private (e.g. ``"127.0.0.1"`` for a test
    receiver, an internal service's name)."""
    allow_private: bool = False
    """Allow the private networks (10/8, 172.16/12, 192.168/16, 100.64/10, fc00::/7), never
    loopback or link-local (a trusted network only)."""
    reveal_secrets: bool = False
    """Answer Get, List and Create of push configs with their token and credentials (off:
    they are omitted; webhook deliveries carry them either way)."""
    webhook_policy: WebhookPolicy = dataclasses.field(init=False, repr=False, compare=False)
    """``allow_hosts`` and ``allow_private`` as one value, for the server and its sender."""

    def __post_init__(self) -> None:
        if not isinstance(self.reveal_secrets, bool):
            raise ValueError(f"reveal_secrets must be True or False, not {self.reveal_secrets!r}")
        policy = WebhookPolicy(self.allow_hosts, self.allow_private)  # type: ignore[arg-type]
        object.__setattr__(self, "allow_hosts", policy.allow_hosts)
        object.__setattr__(self, "webhook_policy", policy)
