"""Posting push notifications to webhooks (L2): the I/O of one delivery, with no queue.

:class:`WebhookPoster` turns an event and a webhook config into a request (the body, its
content type, the auth headers), applies the SSRF guard, posts with a timeout, and judges
the answer by its :class:`~.DeliveryRules` (pure: :mod:`._delivery_rules`). It has no queue
and no background task: :class:`~.WebhookPushSender` puts a bounded queue and ordered lanes
in front of one, and the durable queues (the Redis push workers, the SQL push queue) use one
directly, since their queue is in the database.

SSRF guard. The static checks (:func:`~._webhook_guard.check_webhook_url`: what the URL
itself shows) run when a config is created and again before each delivery. They cannot see
where a hostname points, so every attempt resolves the host again (``anyio.getaddrinfo``,
or the ``resolve`` given) and refuses it if *any* address is not allowed
(:func:`~._webhook_guard.check_resolved`): a name that pointed to a public address at
creation may point to ``10.0.0.1`` now (DNS rebinding). For plain http the request then goes
to the checked address itself (the URL's host is replaced by the address and the ``Host``
header keeps the name), so a second, different answer to httpx's own lookup cannot slip
through. For https the name is resolved again by httpx; a rebound name then reaches a host
that cannot present a certificate for it, and the handshake fails before any request is
sent. Redirects are never followed (a 3xx is a failed delivery).
"""

from __future__ import annotations

import http.cookiejar
import logging
import math
import re
import socket
from collections.abc import Awaitable, Callable, Sequence
from contextlib import AsyncExitStack
from dataclasses import dataclass, replace
from types import TracebackType
from typing import TYPE_CHECKING, Final, Self, TypeAlias

import anyio

from a2a_core._protocol import codec
from a2a_core.compat.v0_3.convert import task_from_v1
from a2a_core.types import StreamResponse, Task

from ._delivery_rules import DeliveryOutcome, DeliveryRules
from ._push import PushTarget
from ._webhook_guard import (
    AllowList,
    Webhook,
    WebhookPolicy,
    WebhookUrlRefusedError,
    check_resolved,
    parse_webhook,
)

if TYPE_CHECKING:
    import httpx

    from .observe import Observer, PushObservation

__all__ = ["PushAttempt", "Resolver", "Sleep", "WebhookPoster"]

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
#: The policy of a poster that was given none and runs beside no server: nothing private.
_STRICT: Final = WebhookPolicy()
#: An HTTP field value (RFC 9110 §5.5, without obs-text): header injection stops here.
_FIELD_VALUE: Final = re.compile(r"[\t\x20-\x7e]*")


async def _getaddrinfo(host: str, port: int) -> list[str]:
    infos = await anyio.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return [str(info[4][0]) for info in infos]


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
class _Answer:
    """What one POST came to: the rules' verdict, and why in words safe to log."""

    outcome: DeliveryOutcome
    reason: str


@dataclass(frozen=True, slots=True)
class PushAttempt:
    """What one :meth:`WebhookPoster.attempt` came to, for a queue that keeps each
    delivery's attempts and retry times itself (``a2a_sql`` does, in its job rows)."""

    delivered: bool
    """The webhook answered 2xx."""
    retry_in: float | None
    """Seconds to wait before the next attempt (the rules' backoff), or ``None``: no
    attempt follows (delivered, refused, out of attempts, or a status not worth retrying)."""
    reason: str
    """Why, in words safe to log (no URL, no secret)."""


class WebhookPoster:
    """Posts push notifications to webhooks, one delivery at a time: guarded, timed out,
    judged by its rules; no queue and no background task.

    Use it as ``async with WebhookPoster(...) as poster:``: entering opens its HTTP client,
    leaving closes it. Then :meth:`send` makes every attempt of an event's deliveries,
    sleeping between them, and :meth:`attempt` makes one and says when the next is due. A
    durable queue (the Redis and SQL backends') delivers with one without running a
    `WebhookPushSender`, whose queue it does not need.

    Options:

    - ``client``: an ``httpx.AsyncClient`` to send with (the caller opens and closes it, and
      its proxy, TLS and cookie settings apply). By default the poster makes its own, which
      ignores proxy environment variables and keeps no cookies between deliveries.
    - ``rules``: the `DeliveryRules` (retries, backoff, what counts as delivered).
    - ``timeout``: seconds per attempt, the whole exchange (10). ``max_concurrent``: POSTs
      in flight at once (4); one more waits for a slot. ``sleep`` waits between the
      attempts of :meth:`send` (``anyio.sleep``).
    - ``content_type`` of v1.0 bodies: ``"application/json"`` (what v1.0.0 shows and what
      every receiver accepts); ``"application/a2a+json"`` is what v1.0.1 specifies. v0.3
      bodies are always ``application/json``.
    - ``policy``: the SSRF guard's `WebhookPolicy` (a server's backend gives the server's,
      ``ServerHandle.webhook_policy``); without one, the strict default. ``resolve`` looks
      hosts up (``anyio.getaddrinfo``).
    - ``observer``: told of each delivery, its attempts and outcome
      (:mod:`~a2a_core.server.observe`).

    Counters (read-only, since it was built): ``delivered`` (a 2xx answer), ``failed`` (out
    of attempts, or a status not worth retrying), ``refused`` (the SSRF guard said no).
    """

    def __init__(
        self,
        *,
        client: httpx.AsyncClient | None = None,
        rules: DeliveryRules | None = None,
        timeout: float = 10.0,
        content_type: str = "application/json",
        policy: WebhookPolicy | None = None,
        max_concurrent: int = 4,
        sleep: Sleep = anyio.sleep,
        resolve: Resolver = _getaddrinfo,
        observer: Observer | None = None,
    ) -> None:
        if isinstance(timeout, bool) or not (
            isinstance(timeout, int | float) and timeout > 0 and math.isfinite(timeout)
        ):
            raise ValueError(f"timeout must be a number of seconds > 0, not {timeout!r}")
        if isinstance(max_concurrent, bool) or not isinstance(max_concurrent, int):
            raise ValueError(f"max_concurrent must be an integer, not {max_concurrent!r}")
        if max_concurrent < 1:
            raise ValueError(f"max_concurrent must be at least 1, not {max_concurrent!r}")
        self._client = client
        self._rules = rules if rules is not None else DeliveryRules()
        self._timeout = timeout
        self._content_type = content_type
        #: The SSRF guard's policy (see ``policy`` above); ``None``: the strict default, or
        #: the server's once it is shared (`share_policy`).
        self.policy = policy
        #: Told of each delivery (see ``observer`` above); may be set before the first one.
        self.observer = observer
        self._sleep = sleep
        self._resolve = resolve
        self._limiter = anyio.CapacityLimiter(max_concurrent)
        self._state = "new"  # -> "open" -> "closed"
        self._stack: AsyncExitStack | None = None

        self._delivered = 0
        self._failed = 0
        self._refused = 0

    def share_policy(self, policy: WebhookPolicy) -> None:
        """Guard with the server's ``policy``: taken when this poster was given none; one
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

    @property
    def rules(self) -> DeliveryRules:
        """The rules each delivery follows (retries, backoff, what counts as delivered)."""
        return self._rules

    @property
    def timeout(self) -> float:
        """Seconds one attempt may take, the whole exchange."""
        return self._timeout

    @property
    def open(self) -> bool:
        """Whether it can post: entered, and not left."""
        return self._state == "open"

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

    # --- lifetime ---

    async def __aenter__(self) -> Self:
        if self._state != "new":
            raise RuntimeError("a WebhookPoster can be entered only once")
        # Imported when a poster opens, not with the server: most servers send no webhooks.
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
            self._stack = stack.pop_all()
        self._state = "open"
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        assert self._stack is not None
        self._state = "closed"
        await self._stack.aclose()  # closes the client it made (one given stays open)

    def _check_open(self) -> None:
        if self._state != "open":
            raise RuntimeError("the WebhookPoster is not open: use `async with poster:`")

    # --- delivering ---

    async def send(
        self,
        targets: list[PushTarget],
        event: StreamResponse,
        task: Task,
        *,
        context: object = None,
    ) -> None:
        """Deliver one event to every target now, in the calling task, and return when each
        delivery has its outcome (delivered, or given up under the rules), sleeping between
        the attempts.

        v1.0 targets get ``event`` as the body; v0.3 targets get ``task`` (the task as it
        stands after the event) in the v0.3 shape. The targets are sent one after the other:
        the caller orders its calls. ``context``: the observer's context of the moment the
        event was queued, as a queue kept it (`Observer.push_context_headers`), instead of
        the calling task's (`Observer.push_context`).
        """
        self._check_open()
        for delivery in self._prepare(targets, event, task, context):
            await self._deliver(delivery)

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
        ``retry_in`` is the rules' backoff for the next attempt, ``None`` once they give
        up. Same body, headers, guard, timeout, final-failure log and counters as
        :meth:`send`. ``task`` is the body of a v0.3 target (the task as it stood after the
        event); a v1.0 target needs none. ``context``: as for :meth:`send`.
        """
        self._check_open()
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
        under ``context``, else the observer's current one. Needs no open client: a sender
        prepares what it queues."""
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

    async def _deliver(self, delivery: _Delivery) -> None:
        """Every attempt of one prepared delivery, sleeping between them; never raises but
        for cancellation (a bug is counted as a failure and logged: whoever calls this, a
        sender's lane or a queue's worker, goes on with its next delivery)."""
        try:
            await self._send_one(delivery)
        except Exception:
            self._failed += 1
            logger.exception("push to %s failed unexpectedly", delivery.hook.origin)

    async def _send_one(self, delivery: _Delivery) -> None:
        """All attempts of one delivery; updates the counters (and tells the observer)."""
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
            answer = _Answer(DeliveryOutcome.RETRY, f"lookup failed ({exc})")
        else:
            answer = await self._post(delivery, addresses)
        if answer.outcome is DeliveryOutcome.DELIVERED:
            self._delivered += 1
            logger.debug("push to %s delivered (attempt %d)", hook.origin, attempt + 1)
            return PushAttempt(delivered=True, retry_in=None, reason=answer.reason)
        retry = self._rules.another_attempt(attempt, answer.outcome)
        if observation is not None:
            observation.attempted(attempt, answer.reason, retry)
        if retry:
            logger.info("push to %s attempt %d failed: %s", hook.origin, attempt + 1, answer.reason)
            delay = self._rules.delay(attempt)
            return PushAttempt(delivered=False, retry_in=delay, reason=answer.reason)
        self._failed += 1
        logger.warning(
            "push to %s (config %r of task %s) failed after %d attempt(s): %s",
            hook.origin,
            config_id,
            task_id,
            attempt + 1,
            answer.reason,
        )
        return PushAttempt(delivered=False, retry_in=None, reason=answer.reason)

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

    async def _post(self, delivery: _Delivery, addresses: list[str]) -> _Answer:
        """One attempt: POST to the first address that accepts a connection."""
        import httpx  # loaded already: the poster's client is httpx's

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
                        return _Answer(DeliveryOutcome.RETRY, _describe(exc))
                    except httpx.TransportError as exc:
                        return _Answer(DeliveryOutcome.RETRY, _describe(exc))
                    status = response.status_code
                    outcome = self._rules.outcome_of(status)
                    delivered = outcome is DeliveryOutcome.DELIVERED
                    return _Answer(outcome, "delivered" if delivered else f"HTTP {status}")
        assert scope.cancelled_caught
        return _Answer(DeliveryOutcome.RETRY, f"no answer within {self._timeout} s")


async def _discard_body(response: httpx.Response) -> None:
    if response.is_stream_consumed:
        return  # a transport that reads bodies itself (httpx.MockTransport, some proxies)
    seen = 0
    # Raw bytes: decoding a compressed body could turn one chunk into megabytes.
    async for chunk in response.aiter_raw():
        seen += len(chunk)
        if seen > _MAX_RESPONSE_BODY:
            break


def _describe(exc: httpx.TransportError) -> str:
    # The exception's text may quote the URL (with its secrets); its class name says enough.
    return type(exc).__name__
