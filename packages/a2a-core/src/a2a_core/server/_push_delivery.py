"""Webhook delivery of push notifications (L2): the default :class:`~.push.PushSender`.

:class:`WebhookPushSender` is three parts: the delivery rules (:class:`~.DeliveryRules`,
pure: retries, backoff, what counts as delivered), the poster that makes each attempt
(:class:`~.WebhookPoster`: the request, the SSRF guard with its DNS lookups, the timeout),
and, here, what sits in front of them for a server that keeps no queue elsewhere: a bounded
queue, background workers, per-target ordering and shutdown. The durable queues (Redis,
SQL) use the first two without this one.

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
- At most ``workers`` POSTs are in flight at once (the poster's ``max_concurrent``, a
  capacity limiter taken per attempt, so a lane sleeping between retries does not hold a
  slot and cannot starve the others).
- The bound ``queue_size`` counts every accepted delivery not yet finished (queued, in a
  lane, or in flight), so memory stays bounded however slow the receivers are.

``WebhookUrlRefusedError`` and ``check_webhook_url`` are importable from here too (their
home was this module before the guard had its own), and so are ``PushAttempt``, ``Sleep``
and ``Resolver`` (the poster's, whose home this module was before it had its own).
"""

from __future__ import annotations

import logging
import warnings
from collections import deque
from collections.abc import Collection
from contextlib import AsyncExitStack
from types import TracebackType
from typing import TYPE_CHECKING, Final, Self

import anyio
from anyio.abc import TaskGroup
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from a2a_core.types import StreamResponse, Task

from ._delivery_rules import DeliveryRules
from ._push import PushTarget
from ._webhook_guard import WebhookPolicy, WebhookUrlRefusedError, check_webhook_url
from ._webhook_poster import (
    PushAttempt,
    Resolver,
    Sleep,
    WebhookPoster,
    _Delivery,
    _getaddrinfo,
)

if TYPE_CHECKING:
    import httpx

    from .observe import Observer

__all__ = [
    "PushAttempt",
    "Resolver",
    "Sleep",
    "WebhookPushSender",
    "WebhookUrlRefusedError",
    "check_webhook_url",
]

logger: Final = logging.getLogger("a2a_core.push")


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
      failed together do not retry together. ``sleep`` waits (``anyio.sleep``). These four
      are the sender's `rules` (a `DeliveryRules`).
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
        rules = DeliveryRules(
            retries=retries, backoff=backoff, max_backoff=max_backoff, jitter=jitter
        )
        self._poster = WebhookPoster(
            client=client,
            rules=rules,
            timeout=timeout,
            content_type=content_type,
            policy=policy,
            max_concurrent=workers,
            sleep=sleep,
            resolve=resolve,
            observer=observer,
        )
        self._queue_size = queue_size
        self._shutdown_timeout = shutdown_timeout

        self._state = "new"  # -> "running" -> "closing" -> "closed"
        self._stack: AsyncExitStack | None = None
        self._task_group: TaskGroup | None = None
        self._send: MemoryObjectSendStream[_Delivery] | None = None
        self._receive: MemoryObjectReceiveStream[_Delivery] | None = None
        self._lanes: dict[tuple[str, str, str], deque[_Delivery]] = {}
        self._drained = anyio.Event()

        self._pending = 0
        self._dropped = 0
        self._cancelled = 0

    # --- its parts ---

    @property
    def rules(self) -> DeliveryRules:
        """The rules its deliveries follow (``retries``, ``backoff``, ``max_backoff``,
        ``jitter``, and what counts as delivered)."""
        return self._poster.rules

    @property
    def poster(self) -> WebhookPoster:
        """What makes its attempts (the HTTP client, the guard, the timeout, the rules);
        open while the sender runs. A durable queue may deliver with it directly."""
        return self._poster

    @property
    def policy(self) -> WebhookPolicy | None:
        """The SSRF guard's policy (see ``policy`` above); ``None``: not given, which a
        server replaces with its own."""
        return self._poster.policy

    @policy.setter
    def policy(self, policy: WebhookPolicy | None) -> None:
        self._poster.policy = policy

    @property
    def observer(self) -> Observer | None:
        """Told of each delivery (see ``observer`` above); may be set before the sender
        runs."""
        return self._poster.observer

    @observer.setter
    def observer(self, observer: Observer | None) -> None:
        self._poster.observer = observer

    def share_policy(self, policy: WebhookPolicy) -> None:
        """Guard with the server's ``policy``: taken when this sender was given none; one
        of its own must be the same (else a URL accepted when its config was created would
        be refused at delivery, or the other way round): `ValueError` otherwise."""
        self._poster.share_policy(policy)

    # --- counters ---

    @property
    def delivered(self) -> int:
        """Deliveries the receiver answered with 2xx."""
        return self._poster.delivered

    @property
    def failed(self) -> int:
        """Deliveries given up: out of attempts, or answered with a status not retried."""
        return self._poster.failed

    @property
    def refused(self) -> int:
        """Deliveries the SSRF guard refused (before any connection)."""
        return self._poster.refused

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
        async with AsyncExitStack() as stack:
            await stack.enter_async_context(self._poster)  # its HTTP client
            # Exited before the poster is closed: workers are gone before their client is.
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
        for delivery in self._poster._prepare(targets, event, task):
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

        Same as its `poster`'s :meth:`~WebhookPoster.send` (a queue in front of the sender
        may use that one without running the sender): same bodies, headers, guard, retries
        and counters as :meth:`deliver`; no queue bound and no ordering lane: the caller
        orders its calls. ``context``: the observer's context of the moment the event was
        queued, as the queue kept it (`Observer.push_context_headers`), instead of the
        calling task's (`Observer.push_context`).
        """
        if self._state != "running":
            raise RuntimeError("the WebhookPushSender is not running: use `async with sender:`")
        await self._poster.send(targets, event, task, context=context)

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

        Same as its `poster`'s :meth:`~WebhookPoster.attempt`: ``retry_in`` is the sender's
        backoff for the next attempt, ``None`` once it would give up. ``task`` is the body
        of a v0.3 target (the task as it stood after the event); a v1.0 target needs none.
        ``context``: as for :meth:`send`.
        """
        if self._state != "running":
            raise RuntimeError("the WebhookPushSender is not running: use `async with sender:`")
        return await self._poster.attempt(target, event, task, attempt=attempt, context=context)

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
            # Every attempt, sleeping between them; a bug is counted as a failure there,
            # so that it cannot take the server down with it (the task group would cancel
            # its host).
            await self._poster._deliver(lane[0])
            # Reached only when the delivery finished: a cancelled one stays pending.
            lane.popleft()
            self._pending -= 1
            if self.observer is not None:
                self.observer.push_queue_depth(self._pending)
            if self._pending == 0 and self._state == "closing":
                self._drained.set()
        # Nothing awaited since the loop saw the lane empty, so no delivery can be in it.
        del self._lanes[key]
