"""Webhook delivery of push notifications (L2): the default :class:`~.push.PushSender`.

This module owns everything between "an event happened to a task that has webhooks" and
"the receiver answered 2xx": the bounded queue, the background workers, the HTTP request
(body, content type, auth headers), retries with backoff, per-target ordering, shutdown,
and applying the SSRF guard (:mod:`.webhook_guard`, pure) that keeps a client from aiming
the server at its own network: this module does the guard's I/O, the DNS lookups.

Shape of the machinery (one :class:`WebhookPushSender`, used as an async context manager):

- ``deliver()`` never waits: it checks each target's URL, encodes the body once per dialect
  and puts one delivery per target on a bounded memory object stream. When the queue is
  full the new delivery is dropped (counted in ``dropped``, logged) rather than making the
  agent's task wait for a slow receiver: a push is a best-effort side channel, the task's
  own stream and store are the source of truth.
- A dispatcher reads the stream and appends each delivery to the FIFO *lane* of its target
  key ``(task id, config id, url)``, starting a lane task when the lane is new. A lane sends
  its deliveries one at a time, so a receiver sees one task's events in event order and
  never two at once; different targets proceed in parallel.
- At most ``workers`` POSTs are in flight at once (a capacity limiter taken per attempt,
  so a lane sleeping between retries does not hold a slot and cannot starve the others).
- The bound ``queue_size`` counts every accepted delivery not yet finished (queued, in a
  lane, or in flight), so memory stays bounded however slow the receivers are.

SSRF guard (on by default). The static checks (:func:`~.webhook_guard.check_webhook_url`:
what the URL itself shows) run when a config is created and again before each delivery is
queued. They cannot see where a hostname points, so every delivery attempt resolves the host
again (``anyio.getaddrinfo``, or the ``resolve`` given) and refuses it if *any* address is
not allowed (:func:`~.webhook_guard.check_resolved`): a name that pointed to a public
address at creation may point to ``10.0.0.1`` now (DNS rebinding). For plain http the
request then goes to the checked address itself (the URL's host is replaced by the address
and the ``Host`` header keeps the name), so a second, different answer to httpx's own
lookup cannot slip through. For https the name is resolved again by httpx; a rebound name
then reaches a host that cannot present a certificate for it, and the handshake fails
before any request is sent. Redirects are never followed (a 3xx is a failed delivery).

``WebhookUrlRefusedError`` and ``check_webhook_url`` are importable from here too (their
home was this module before the guard had its own).
"""

from __future__ import annotations

import http.cookiejar
import logging
import random
import re
import socket
import warnings
from collections import deque
from collections.abc import Awaitable, Callable, Collection, Sequence
from contextlib import AsyncExitStack
from dataclasses import dataclass, replace
from types import TracebackType
from typing import TYPE_CHECKING, Final, Self, TypeAlias

import anyio
from anyio.abc import TaskGroup
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from a2a_core._protocol import codec
from a2a_core.compat.v0_3.convert import task_from_v1
from a2a_core.types import StreamResponse, Task

from ._push import PushTarget

if TYPE_CHECKING:
    import httpx

    from .observe import Observer, PushObservation
from ._webhook_guard import (
    AllowList,
    Webhook,
    WebhookPolicy,
    WebhookUrlRefusedError,
    check_resolved,
    check_webhook_url,
    parse_webhook,
)

__all__ = [
    "PushAttempt",
    "Resolver",
    "Sleep",
    "WebhookPushSender",
    "WebhookUrlRefusedError",
    "check_webhook_url",
]

logger: Final = logging.getLogger("a2a_core.push")

#: Waits a number of seconds (``anyio.sleep``; tests inject one that records the delays).
Sleep: TypeAlias = Callable[[float], Awaitable[None]]
#: Resolves ``(host, port)`` to IP address strings (default: ``anyio.getaddrinfo``).
Resolver: TypeAlias = Callable[[str, int], Awaitable[Sequence[str]]]

#: Content type of v0.3 webhook bodies (the v0.3 Task), fixed by the v0.3 spec.
_V0_3_CONTENT_TYPE: Final = "application/json"
#: Receivers may answer with a body; read at most this much of it so the connection can be
#: reused, and never buffer more whatever the receiver sends.
_MAX_RESPONSE_BODY: Final = 64 * 1024
#: The policy of a sender that was given none and runs beside no server: nothing private.
_STRICT: Final = WebhookPolicy()
#: Statuses worth another attempt: the receiver is overloaded, timed out, or broken for now.
_RETRY_STATUSES: Final = frozenset({408, 429})
#: An HTTP field value (RFC 9110 §5.5, without obs-text): header injection stops here.
_FIELD_VALUE: Final = re.compile(r"[\t\x20-\x7e]*")


async def _getaddrinfo(host: str, port: int) -> list[str]:
    infos = await anyio.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return [str(info[4][0]) for info in infos]


# --- deliveries ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Delivery:
    """One event for one webhook, ready to send."""

    key: tuple[str, str, str]
    """``(task id, config id, url)``: deliveries with one key go out in order, one at a time."""
    hook: Webhook
    body: bytes
    headers: tuple[tuple[str, str], ...]
    """Content type and credentials (never logged)."""
    context: object = None
    """The observer's context of the moment it was queued (`Observer.push_context`, or the
    headers of `Observer.push_context_headers` a durable queue kept)."""


@dataclass(frozen=True, slots=True)
class _Outcome:
    ok: bool
    retry: bool
    reason: str


_DELIVERED: Final = _Outcome(ok=True, retry=False, reason="delivered")


@dataclass(frozen=True, slots=True)
class PushAttempt:
    """What one :meth:`WebhookPushSender.attempt` came to, for a queue that keeps each
    delivery's attempts and retry times itself (``a2a_sql`` does, in its job rows)."""

    delivered: bool
    """The webhook answered 2xx."""
    retry_in: float | None
    """Seconds to wait before the next attempt (the sender's backoff), or ``None``: no
    attempt follows (delivered, refused, out of attempts, or a status not worth retrying)."""
    reason: str
    """Why, in words safe to log (no URL, no secret)."""


class WebhookPushSender:
    """Posts push notifications to webhooks from background tasks; bounded, ordered, guarded.

    Use it as ``async with WebhookPushSender(...) as sender:`` around the server's lifetime:
    entering starts the workers (in the sender's own task group) and the HTTP client;
    leaving stops accepting deliveries, gives the accepted ones ``shutdown_timeout`` seconds
    to finish, then cancels the rest (counted in ``cancelled``) and closes the client.

    Options:

    - ``client``: an ``httpx.AsyncClient`` to send with (the caller opens and closes it, and
      its proxy, TLS and cookie settings apply). By default the sender makes its own, which
      ignores proxy environment variables and keeps no cookies between deliveries.
    - ``workers``: POSTs in flight at once (4). ``queue_size``: accepted deliveries not yet
      finished (1,000); beyond it new deliveries are dropped.
    - ``timeout``: seconds per attempt, the whole exchange (10). ``retries``: further
      attempts after the first (3), after connection errors, timeouts, 408, 429 and 5xx,
      never after another status. The wait before retry *n* (0-based) is
      ``backoff * 2**n`` seconds (0.5, 1, 2), capped at ``max_backoff``, times a random
      factor in ``[1 - jitter, 1 + jitter]`` (``jitter`` 0.1) so that many senders that
      failed together do not retry together. ``sleep`` waits (``anyio.sleep``).
    - ``content_type`` of v1.0 bodies: ``"application/json"`` (what v1.0.0 shows and what
      every receiver accepts); ``"application/a2a+json"`` is what v1.0.1 specifies. v0.3
      bodies are always ``application/json``.
    - ``policy``: the SSRF guard's `WebhookPolicy`. Leave it out for a sender given to a
      server: the server gives it its own (``PushOptions``), the one it checks configs
      with, and refuses a sender whose policy differs; a sender on its own guards with
      the strict default. (``allow_hosts`` and ``allow_private`` are its deprecated
      spelling.) ``resolve`` looks hosts up (``anyio.getaddrinfo``).
    - ``observer``: told of each delivery, its attempts and outcome, and the queue's depth
      (:mod:`~a2a_core.server.observe`; a server sets its own on a sender it is given
      without one).

    Counters (read-only, since the sender started): ``delivered`` (a 2xx answer),
    ``failed`` (out of attempts, or a status not worth retrying), ``refused`` (the SSRF
    guard said no), ``dropped`` (queue full, or the sender closing), ``cancelled``
    (unfinished at shutdown) and ``pending`` (accepted, not finished yet).
    """

    def __init__(
        self,
        *,
        client: httpx.AsyncClient | None = None,
        workers: int = 4,
        queue_size: int = 1000,
        timeout: float = 10.0,
        retries: int = 3,
        backoff: float = 0.5,
        max_backoff: float = 30.0,
        jitter: float = 0.1,
        content_type: str = "application/json",
        policy: WebhookPolicy | None = None,
        allow_hosts: Collection[str] | None = None,
        allow_private: bool | None = None,
        shutdown_timeout: float = 5.0,
        sleep: Sleep = anyio.sleep,
        resolve: Resolver = _getaddrinfo,
        observer: Observer | None = None,
    ) -> None:
        if workers < 1 or queue_size < 1:
            raise ValueError("workers and queue_size must be at least 1")
        if retries < 0 or timeout <= 0 or backoff < 0 or shutdown_timeout < 0:
            raise ValueError("retries, timeout, backoff and shutdown_timeout must be >= 0")
        if not 0 <= jitter <= 1:
            raise ValueError("jitter must be between 0 and 1")
        self._client = client
        self._workers = workers
        self._queue_size = queue_size
        self._timeout = timeout
        self._retries = retries
        self._backoff = backoff
        self._max_backoff = max_backoff
        self._jitter = jitter
        self._content_type = content_type
        if allow_hosts is not None or allow_private is not None:
            if policy is not None:
                raise ValueError("give policy, or the deprecated allow_hosts/allow_private")
            warnings.warn(
                "WebhookPushSender(allow_hosts=, allow_private=) is deprecated: the server "
                "gives its sender its own policy (PushOptions); else pass "
                "policy=WebhookPolicy(...)",
                DeprecationWarning,
                stacklevel=2,
            )
            policy = WebhookPolicy(tuple(allow_hosts or ()), bool(allow_private))
        #: The SSRF guard's policy (see ``policy`` above); ``None``: not given, which a
        #: server replaces with its own.
        self.policy = policy
        self._shutdown_timeout = shutdown_timeout
        self._sleep = sleep
        self._resolve = resolve
        #: Told of each delivery (see ``observer`` above); may be set before the sender runs.
        self.observer = observer

        self._state = "new"  # -> "running" -> "closing" -> "closed"
        self._stack: AsyncExitStack | None = None
        self._task_group: TaskGroup | None = None
        self._send: MemoryObjectSendStream[_Delivery] | None = None
        self._receive: MemoryObjectReceiveStream[_Delivery] | None = None
        self._limiter = anyio.CapacityLimiter(workers)
        self._lanes: dict[tuple[str, str, str], deque[_Delivery]] = {}
        self._drained = anyio.Event()

        self._pending = 0
        self._delivered = 0
        self._failed = 0
        self._refused = 0
        self._dropped = 0
        self._cancelled = 0

    def share_policy(self, policy: WebhookPolicy) -> None:
        """Guard with the server's ``policy``: taken when this sender was given none; one
        of its own must be the same (else a URL accepted when its config was created would
        be refused at delivery, or the other way round): `ValueError` otherwise."""
        if self.policy is None:
            self.policy = policy
        elif not self.policy.same_as(policy):
            raise ValueError(
                f"the push sender's webhook policy {self.policy!r} differs from the "
                f"server's {policy!r}: set it once, in A2AServer(push=PushOptions("
                "allow_hosts=..., allow_private=...)), and give the sender none"
            )

    def _allow_list(self) -> AllowList:
        return (self.policy or _STRICT).allow_list

    # --- counters ---

    @property
    def delivered(self) -> int:
        """Deliveries the receiver answered with 2xx."""
        return self._delivered

    @property
    def failed(self) -> int:
        """Deliveries given up: out of attempts, or answered with a status not retried."""
        return self._failed

    @property
    def refused(self) -> int:
        """Deliveries the SSRF guard refused (before any connection)."""
        return self._refused

    @property
    def dropped(self) -> int:
        """Deliveries not accepted: the queue was full or the sender was closing."""
        return self._dropped

    @property
    def cancelled(self) -> int:
        """Accepted deliveries still unfinished when the shutdown timeout ran out."""
        return self._cancelled

    @property
    def running(self) -> bool:
        """Whether the sender accepts deliveries (entered, and not closing)."""
        return self._state == "running"

    @property
    def pending(self) -> int:
        """Accepted deliveries not finished yet (queued, waiting in a lane, or in flight)."""
        return self._pending

    # --- lifetime ---

    async def __aenter__(self) -> Self:
        if self._state != "new":
            raise RuntimeError("a WebhookPushSender can be entered only once")
        # Imported when a sender starts, not with the server: most servers send no webhooks.
        import httpx

        async with AsyncExitStack() as stack:
            if self._client is None:
                self._client = await stack.enter_async_context(
                    httpx.AsyncClient(
                        trust_env=False,
                        follow_redirects=False,
                        cookies=http.cookiejar.CookieJar(
                            http.cookiejar.DefaultCookiePolicy(allowed_domains=[])
                        ),
                    )
                )
            # Exited before the client is closed: workers are gone before their client is.
            self._task_group = await stack.enter_async_context(anyio.create_task_group())
            self._send, self._receive = anyio.create_memory_object_stream[_Delivery](
                self._queue_size
            )
            self._task_group.start_soon(self._dispatch, self._receive)
            self._stack = stack.pop_all()
        self._state = "running"
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        assert self._stack is not None
        assert self._send is not None
        assert self._receive is not None
        assert self._task_group is not None
        self._state = "closing"
        self._send.close()  # the dispatcher drains what is queued, then ends
        # Shielded, so a server being cancelled still lets in-flight deliveries finish, but
        # never for longer than the timeout.
        with anyio.move_on_after(self._shutdown_timeout, shield=True):
            if self._pending:
                await self._drained.wait()
        self._task_group.cancel_scope.cancel()
        # The body's exception (if any) is not passed on: it propagates by itself, and the
        # task group would only wrap it in an ExceptionGroup on some backends. (No shield
        # here: the task group's scope must be the innermost one when it exits.)
        await self._stack.aclose()
        self._receive.close()
        self._state = "closed"
        if self._pending:
            self._cancelled += self._pending
            logger.warning(
                "push sender closed with %d deliveries unfinished after %.1f s; cancelled",
                self._pending,
                self._shutdown_timeout,
            )
            self._pending = 0
            self._lanes.clear()

    # --- PushSender ---

    async def deliver(self, targets: list[PushTarget], event: StreamResponse, task: Task) -> None:
        """Queue one event for every target; return at once, without waiting for room.

        v1.0 targets get ``event`` as the body; v0.3 targets get ``task`` (the task as it
        stands after the event) in the v0.3 shape. Refused URLs are counted and logged, not
        queued; when the queue is full the delivery is dropped (counted and logged).
        """
        if self._state == "new":
            raise RuntimeError("the WebhookPushSender is not running: use `async with sender:`")
        for delivery in self._prepare(targets, event, task):
            self._enqueue(delivery)

    async def send(
        self,
        targets: list[PushTarget],
        event: StreamResponse,
        task: Task,
        *,
        context: object = None,
    ) -> None:
        """Deliver one event to every target now, in the calling task, and return when each
        delivery has its outcome (delivered, or given up after the retries).

        For a durable queue in front of the sender (``a2aserve_redis`` acknowledges a queued
        event only after this returns, so a replica that dies mid-delivery leaves the event
        to another one). Same bodies, headers, guard, retries and counters as
        :meth:`deliver`; no queue bound and no ordering lane: the caller orders its calls.
        ``context``: the observer's context of the moment the event was queued, as the queue
        kept it (`Observer.push_context_headers`), instead of the calling task's
        (`Observer.push_context`).
        """
        if self._state != "running":
            raise RuntimeError("the WebhookPushSender is not running: use `async with sender:`")
        for delivery in self._prepare(targets, event, task, context):
            try:
                await self._send_one(delivery)
            except Exception:
                self._failed += 1
                logger.exception("push to %s failed unexpectedly", delivery.hook.origin)

    async def attempt(
        self,
        target: PushTarget,
        event: StreamResponse,
        task: Task | None,
        *,
        attempt: int = 0,
        context: object = None,
    ) -> PushAttempt:
        """Make attempt number ``attempt`` (0-based) of delivering one event to one webhook,
        now, and say what came of it, without sleeping after a failure.

        For a durable queue that schedules retries itself, so that a retry survives a
        restart (``a2a_sql`` keeps each job's attempt count and due time in its table):
        ``retry_in`` is this sender's backoff for the next attempt, ``None`` once it would
        give up. Same body, headers, guard, timeout, final-failure log and counters as
        :meth:`send`. ``task`` is the body of a v0.3 target (the task as it stood after the
        event); a v1.0 target needs none. ``context``: as for :meth:`send`.
        """
        if self._state != "running":
            raise RuntimeError("the WebhookPushSender is not running: use `async with sender:`")
        deliveries = self._prepare([target], event, task, context)
        if not deliveries:  # refused or unsendable: counted and logged by _prepare
            return PushAttempt(delivered=False, retry_in=None, reason="not sendable")
        delivery = deliveries[0]
        if self.observer is None:
            return await self._try_once(delivery, attempt, None)
        # Each attempt is a delivery of its own to the observer: the queue may make the
        # next one in another process. One to be retried ends "retrying".
        observation = self.observer.push_started(
            delivery.context, delivery.key[0], delivery.hook.origin
        )
        outcome = "cancelled"
        try:
            with observation.activated():
                extra = tuple(observation.headers())
                if extra:
                    delivery = replace(delivery, headers=delivery.headers + extra)
                result = await self._try_once(delivery, attempt, observation)
            if result.delivered:
                outcome = "delivered"
            elif result.retry_in is not None:
                outcome = "retrying"
            else:
                outcome = "refused" if result.reason == "refused" else "failed"
            return result
        finally:
            observation.finished(outcome)

    async def _try_once(
        self, delivery: _Delivery, attempt: int, observation: PushObservation | None
    ) -> PushAttempt:
        try:
            return await self._try(delivery, attempt, observation)
        except Exception:
            self._failed += 1
            logger.exception("push to %s failed unexpectedly", delivery.hook.origin)
            return PushAttempt(delivered=False, retry_in=None, reason="unexpected error")

    def _prepare(
        self,
        targets: list[PushTarget],
        event: StreamResponse,
        task: Task | None,
        context: object = None,
    ) -> list[_Delivery]:
        """One ready delivery per target that passes the static checks (refusals counted);
        under ``context``, else the observer's current one."""
        deliveries: list[_Delivery] = []
        if context is None and self.observer is not None:
            context = self.observer.push_context()
        v1_body: bytes | None = None
        v0_3_body: bytes | None = None
        for target in targets:
            config = target.config
            task_id = config.task_id or (task.id if task is not None else "")
            try:
                hook = parse_webhook(config.url, self._allow_list())
            except WebhookUrlRefusedError as exc:
                self._refused += 1
                logger.info("push to config %r of task %r refused: %s", config.id, task_id, exc)
                continue
            if target.legacy_v0_3:
                if task is None:
                    self._failed += 1
                    logger.warning(
                        "push to config %r of task %r failed: a v0.3 webhook needs the task",
                        config.id,
                        task_id,
                    )
                    continue
                if v0_3_body is None:
                    v0_3_body = codec.encode(task_from_v1(task))
                body, content_type = v0_3_body, _V0_3_CONTENT_TYPE
            else:
                if v1_body is None:
                    v1_body = codec.encode(event)
                body, content_type = v1_body, self._content_type
            headers = [("Content-Type", content_type)]
            if config.authentication is not None:
                auth = config.authentication
                value = f"{auth.scheme} {auth.credentials}" if auth.credentials else auth.scheme
                headers.append(("Authorization", value))
            if config.token:
                headers.append(("X-A2A-Notification-Token", config.token))
            if not all(_FIELD_VALUE.fullmatch(value) for _, value in headers):
                self._failed += 1
                logger.info(
                    "push to %s (config %r of task %r) failed: a header value has characters "
                    "HTTP does not allow",
                    hook.origin,
                    config.id,
                    task_id,
                )
                continue
            deliveries.append(
                _Delivery((task_id, config.id, config.url), hook, body, tuple(headers), context)
            )
        return deliveries

    def _enqueue(self, delivery: _Delivery) -> None:
        assert self._send is not None
        task_id, config_id, _ = delivery.key
        if self._state != "running" or self._pending >= self._queue_size:
            self._dropped += 1
            why = "queue full" if self._state == "running" else "sender closing"
            if self.observer is not None:
                self.observer.push_dropped(task_id, why.replace(" ", "_"))
            logger.warning(
                "push to %s (config %r of task %r) dropped: %s (%d dropped so far)",
                delivery.hook.origin,
                config_id,
                task_id,
                why,
                self._dropped,
            )
            return
        # Cannot block: the stream holds at most `queue_size` items and `pending` counts them.
        self._send.send_nowait(delivery)
        self._pending += 1
        if self.observer is not None:
            self.observer.push_queue_depth(self._pending)

    # --- workers ---

    async def _dispatch(self, receive: MemoryObjectReceiveStream[_Delivery]) -> None:
        """Route each queued delivery into its target's lane, starting lanes as needed."""
        assert self._task_group is not None
        async with receive:
            async for delivery in receive:
                lane = self._lanes.get(delivery.key)
                if lane is not None:
                    lane.append(delivery)
                else:
                    lane = self._lanes[delivery.key] = deque([delivery])
                    self._task_group.start_soon(self._run_lane, delivery.key, lane)

    async def _run_lane(self, key: tuple[str, str, str], lane: deque[_Delivery]) -> None:
        """Send a lane's deliveries in order, one at a time, until it is empty."""
        while lane:
            delivery = lane[0]
            try:
                await self._send_one(delivery)
            except Exception:
                # A bug must not take the server down with it (the task group would cancel
                # its host): count it as a failure and carry on with the next delivery.
                self._failed += 1
                logger.exception("push to %s failed unexpectedly", delivery.hook.origin)
            # Reached only when the delivery finished: a cancelled one stays pending.
            lane.popleft()
            self._pending -= 1
            if self.observer is not None:
                self.observer.push_queue_depth(self._pending)
            if self._pending == 0 and self._state == "closing":
                self._drained.set()
        # Nothing awaited since the loop saw the lane empty, so no delivery can be in it.
        del self._lanes[key]

    async def _send_one(self, delivery: _Delivery) -> None:
        """All attempts of one delivery, sleeping between them; updates the counters (and
        tells the observer)."""
        if self.observer is None:
            await self._attempts(delivery, None)
            return
        observation = self.observer.push_started(
            delivery.context, delivery.key[0], delivery.hook.origin
        )
        outcome = "cancelled"
        try:
            with observation.activated():
                outcome = await self._attempts(delivery, observation)
        except Exception:
            outcome = "failed"
            raise
        finally:
            observation.finished(outcome)

    async def _attempts(self, delivery: _Delivery, observation: PushObservation | None) -> str:
        """The attempts of one delivery: ``delivered``, ``failed`` or ``refused``."""
        if observation is not None:
            extra = tuple(observation.headers())
            if extra:
                delivery = replace(delivery, headers=delivery.headers + extra)
        attempt = 0
        while True:
            result = await self._try(delivery, attempt, observation)
            if result.retry_in is None:
                if result.delivered:
                    return "delivered"
                return "refused" if result.reason == "refused" else "failed"
            await self._sleep(result.retry_in)
            attempt += 1

    async def _try(
        self, delivery: _Delivery, attempt: int, observation: PushObservation | None = None
    ) -> PushAttempt:
        """Attempt number ``attempt`` (0-based) of one delivery; updates the counters and
        logs a final failure (an intermediate one at info level)."""
        hook = delivery.hook
        task_id, config_id, _ = delivery.key
        try:
            addresses = await self._addresses(hook)
        except WebhookUrlRefusedError as exc:
            self._refused += 1
            # The client's URL: nothing wrong with the server, so not above INFO.
            logger.info("push to %s (task %s) refused: %s", hook.origin, task_id, exc)
            return PushAttempt(delivered=False, retry_in=None, reason="refused")
        except OSError as exc:  # the name did not resolve: maybe it will later
            outcome = _Outcome(ok=False, retry=True, reason=f"lookup failed ({exc})")
        else:
            outcome = await self._attempt(delivery, addresses)
        if outcome.ok:
            self._delivered += 1
            logger.debug("push to %s delivered (attempt %d)", hook.origin, attempt + 1)
            return PushAttempt(delivered=True, retry_in=None, reason=outcome.reason)
        retry = outcome.retry and attempt < self._retries
        if observation is not None:
            observation.attempted(attempt, outcome.reason, retry)
        if retry:
            logger.info(
                "push to %s attempt %d failed: %s", hook.origin, attempt + 1, outcome.reason
            )
            delay = self._delay(attempt)
            return PushAttempt(delivered=False, retry_in=delay, reason=outcome.reason)
        self._failed += 1
        logger.warning(
            "push to %s (config %r of task %s) failed after %d attempt(s): %s",
            hook.origin,
            config_id,
            task_id,
            attempt + 1,
            outcome.reason,
        )
        return PushAttempt(delivered=False, retry_in=None, reason=outcome.reason)

    def _delay(self, retry: int) -> float:
        base = min(self._backoff * 2.0**retry, self._max_backoff)
        return base * random.uniform(1 - self._jitter, 1 + self._jitter)

    async def _addresses(self, hook: Webhook) -> list[str]:
        """The checked addresses to connect to; empty when httpx may resolve the host itself.

        Raises :class:`WebhookUrlRefusedError` if any address of the host is refused.
        """
        if hook.trusted or hook.address is not None:
            return []  # a trusted name, or a literal address checked statically
        port = hook.url.port or (443 if hook.url.scheme == "https" else 80)
        addresses = check_resolved(hook, await self._resolve(hook.host, port), self._allow_list())
        if not addresses:
            raise OSError(f"{hook.host} has no address")
        # https keeps the name (for the certificate check); see the module docstring.
        return addresses if hook.url.scheme == "http" else []

    async def _attempt(self, delivery: _Delivery, addresses: list[str]) -> _Outcome:
        """One attempt: POST to the first address that accepts a connection."""
        import httpx  # loaded already: the sender's client is httpx's

        assert self._client is not None
        hook = delivery.hook
        headers = list(delivery.headers)
        urls = [hook.url]
        if addresses:
            urls = [hook.url.copy_with(host=a) for a in addresses]
            headers.append(("Host", hook.url.netloc.decode("ascii")))
        async with self._limiter:
            with anyio.move_on_after(self._timeout) as scope:
                for index, url in enumerate(urls):
                    try:
                        async with self._client.stream(
                            "POST",
                            url,
                            content=delivery.body,
                            headers=headers,
                            timeout=self._timeout,
                            follow_redirects=False,
                        ) as response:
                            await _discard_body(response)
                    except httpx.ConnectError as exc:
                        if index + 1 < len(urls):
                            continue  # the next address of the host may work
                        return _Outcome(ok=False, retry=True, reason=_describe(exc))
                    except httpx.TransportError as exc:
                        return _Outcome(ok=False, retry=True, reason=_describe(exc))
                    return _status_outcome(response.status_code)
        assert scope.cancelled_caught
        return _Outcome(ok=False, retry=True, reason=f"no answer within {self._timeout} s")


async def _discard_body(response: httpx.Response) -> None:
    if response.is_stream_consumed:
        return  # a transport that reads bodies itself (httpx.MockTransport, some proxies)
    seen = 0
    # Raw bytes: decoding a compressed body could turn one chunk into megabytes.
    async for chunk in response.aiter_raw():
        seen += len(chunk)
        if seen > _MAX_RESPONSE_BODY:
            break


def _status_outcome(status: int) -> _Outcome:
    if 200 <= status < 300:
        return _DELIVERED
    retry = status in _RETRY_STATUSES or status >= 500
    return _Outcome(ok=False, retry=retry, reason=f"HTTP {status}")


def _describe(exc: httpx.TransportError) -> str:
    # The exception's text may quote the URL (with its secrets); its class name says enough.
    return type(exc).__name__
