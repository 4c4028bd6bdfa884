"""The observation seam (L2): what the runtime tells an observer, and when.

``A2AServer(observer=...)`` takes an :class:`Observer`; the runtime calls it at fixed points,
and nowhere else. Without one, each of those points costs one ``is not None`` check and
nothing more (no object is built, no clock is read), so a server that is not observed runs
as fast as before the seam existed. OpenTelemetry is one implementation
(:mod:`a2a_core.otel`, the ``a2aserve-core[otel]`` extra); a deployment can feed anything else
(its own metrics, an audit log) from the same points. :class:`Observers` combines several.

The points, and who calls them:

- **calls** (``A2AServer.handle``): `Observer.call_started` once a request is decoded into
  a :class:`~a2a_core.call.Call`, or `Observer.request_refused` for one answered with an
  error before that (unparsable JSON, an unknown method, invalid parameters, refused
  credentials, an unknown path: a :class:`~a2a_core.refusal.Refusal`); the
  :class:`CallObservation` that `call_started` returns is entered
  (`~CallObservation.activated`) while the call executes, hears `~CallObservation.finished`
  with the outcome (``None`` or the error), and for a streaming call
  `~CallObservation.stream_opened`, `~CallObservation.event_sent` per event and
  `~CallObservation.stream_closed` when the stream ends;
- **executions** (``runtime``): a call that starts the agent gets
  `CallObservation.execution_started`; the agent runs inside
  `ExecutionObservation.activated` (so a tracer can make the call's trace current there:
  an agent calling another agent continues it), and the execution reports
  `~ExecutionObservation.ended` with the task's state;
- **tasks** (``writes``): `Observer.task_changed` after every change written (creation
  included), whoever wrote it (the agent, a cancel, a guard);
- **push delivery** (``push_delivery``, ``webhook_poster``): `Observer.push_context` when
  an event is queued for webhooks (the context of whoever caused it),
  `Observer.push_started` when its delivery begins, whose :class:`PushObservation` gives
  headers to add (``traceparent``), is entered around the attempts and hears each attempt
  and the outcome. A durable queue
  (``a2aserve_redis``, ``a2a_sql``), whose deliveries may be made by another process or
  after a restart, asks for `Observer.push_context_headers` instead, the same context as
  text, keeps it with the job, and hands the mapping back as ``push_started``'s context;
  `Observer.push_dropped` for a delivery that was not queued, `Observer.push_queue_depth`
  whenever the number of unfinished deliveries changes;
- **backend operations** (``storage``): `Observer.backend_operation` with the seconds each
  call of a networked store or log took (in-memory parts answer without waiting and are
  not timed);
- **recoveries** (``_recovering``, ``_shutdown``): the optional
  ``execution_recovered(task_id, outcome, attempt)``, asked of an observer that has it
  (`report_recovery`), when a lost execution is claimed here (``retried``, ``resumed``),
  failed (``failed``, ``gave_up``), or handed off at a stop (``released``); then the
  optional ``attempt_started(invocation, trace)`` (`observe_attempt`) for the claimed
  attempt's run, an execution started by no call: ``trace`` is the trace context its task
  recorded (the first attempt's, as `Observer.push_context_headers` wrote it; empty when
  none was), which a tracer continues, so every attempt of a task is in one trace.

Every method must be quick and must not raise: it runs on the request's path. The
observations hold what they need between calls (a span, a start time); the runtime only
passes them back.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Final, Protocol

from a2a_core._protocol.call import Call
from a2a_core._protocol.errors import A2AError
from a2a_core._protocol.http import HttpRequest
from a2a_core._protocol.refusal import Refusal
from a2a_core.server._messages import Invocation
from a2a_core.types import StreamResponse, Task

__all__ = [
    "CallObservation",
    "ExecutionObservation",
    "NoOpObservation",
    "NoOpObserver",
    "Observer",
    "Observers",
    "PushObservation",
    "observe_attempt",
    "report_recovery",
]


class ExecutionObservation(Protocol):
    """One run of the agent, for one message (it may outlive the call that started it)."""

    def activated(self) -> contextlib.AbstractContextManager[object]:
        """Entered around the agent's invocation, in the execution's own task (a tracer
        makes its span current there)."""
        ...

    def ended(self, task: Task | None, error: BaseException | None) -> None:
        """The agent returned, failed or was stopped: ``task`` as it stands then (``None``
        for a message-only reply), ``error`` what the agent raised, if anything."""
        ...


class CallObservation(Protocol):
    """One decoded call, from `Observer.call_started` to `finished` (or `stream_closed`)."""

    def activated(self) -> contextlib.AbstractContextManager[object]:
        """Entered while the call is executed, in the request's task (not while its stream
        is written: that may happen in another task)."""
        ...

    def execution_started(self, invocation: Invocation) -> ExecutionObservation:
        """The call started the agent for ``invocation`` (a send or a streaming send)."""
        ...

    def stream_opened(self) -> None:
        """The call's SSE stream begins (`finished` has reported ``"ok"`` before)."""
        ...

    def event_sent(self, event: StreamResponse) -> None:
        """One event went into the call's stream (extensions' hooks applied)."""
        ...

    def stream_closed(self, error: BaseException | None) -> None:
        """The stream ended: normally (``None``), with an error frame, or because the client
        went away (``GeneratorExit``)."""
        ...

    def finished(self, error: A2AError | None) -> None:
        """The call was answered: successfully (``None``) or with ``error`` (anything else
        that escaped is reported as an InternalError, as the client saw it). A streaming
        call is answered when its stream opens."""
        ...


class PushObservation(Protocol):
    """The delivery of one event to one webhook, through its attempts."""

    def activated(self) -> contextlib.AbstractContextManager[object]:
        """Entered around the attempts (a tracer makes the delivery's span current: the
        HTTP client's own instrumentation and log records see it)."""
        ...

    def headers(self) -> Sequence[tuple[str, str]]:
        """Headers to add to every attempt (a tracer's ``traceparent``)."""
        ...

    def attempted(self, attempt: int, outcome: str, retry: bool) -> None:
        """One attempt (0-based) failed with ``outcome``, and is retried when ``retry``."""
        ...

    def finished(self, outcome: str) -> None:
        """The delivery's end: ``"delivered"``, ``"failed"``, ``"refused"`` or
        ``"cancelled"``; or ``"retrying"`` for one attempt of a durable queue
        (`WebhookPoster.attempt`, the SQL backend's), which observes each attempt."""
        ...


class Observer(Protocol):
    """What the runtime reports, at the points of the module docstring."""

    def call_started(self, request: HttpRequest, call: Call) -> CallObservation:
        """A request was decoded into ``call`` (its headers carry any trace context)."""
        ...

    def request_refused(self, request: HttpRequest, refusal: Refusal) -> None:
        """A request was answered with an error before it became a call (``refusal`` says
        where it was sent and why). A hostile client can send many: keep this cheap."""
        ...

    def task_changed(self, task: Task, event: StreamResponse) -> None:
        """``event`` was written: ``task`` is the task after it (its first event, the task
        snapshot, when it was created)."""
        ...

    def push_context(self) -> object:
        """Whatever `push_started` needs of the moment an event is queued for webhooks
        (a tracer's current context); called in the task that wrote the event."""
        ...

    def push_context_headers(self) -> Mapping[str, str]:
        """The current context as text headers (a tracer's ``traceparent``/``tracestate``/
        ``baggage``), for an event whose webhook deliveries are queued to be sent by another
        process or after a restart; `push_started` then receives this mapping as its
        ``context``. Called in the task that wrote the event; empty: nothing to carry."""
        ...

    def push_started(self, context: object, task_id: str, origin: str) -> PushObservation:
        """The delivery of an event queued under ``context`` (what `push_context` returned,
        or the mapping of `push_context_headers`) to the webhook at ``origin`` (scheme, host
        and port: never the path or query, which may hold secrets)."""
        ...

    def push_dropped(self, task_id: str, reason: str) -> None:
        """A delivery was not queued: ``"queue_full"`` or ``"closing"``."""
        ...

    def push_queue_depth(self, pending: int) -> None:
        """The deliveries accepted and not finished changed to ``pending``."""
        ...

    def backend_operation(self, operation: str, seconds: float, error: bool) -> None:
        """One call of a networked backend part (``"store.get"``, ``"log.append"``...)."""
        ...


def report_recovery(observer: object, task_id: str, outcome: str, attempt: int) -> None:
    """Tell ``observer`` that an execution was recovered (``retried``, ``resumed``,
    ``failed``, ``gave_up``: ``attempt`` is the one that starts, or the last) or handed off
    at a stop (``released``), if it has the optional method
    ``execution_recovered(task_id, outcome, attempt)``: an observer written before it
    existed is not asked."""
    method = getattr(observer, "execution_recovered", None)
    if method is not None:
        method(task_id, outcome, attempt)


def observe_attempt(
    observer: object, invocation: Invocation, trace: Mapping[str, str]
) -> ExecutionObservation | None:
    """The observation of a recovered attempt's run (``invocation.attempt`` > 1), from
    ``observer``'s optional ``attempt_started(invocation, trace)``; ``None`` when it has
    none (an observer written before it existed)."""
    method = getattr(observer, "attempt_started", None)
    return None if method is None else method(invocation, trace)


# --- a no-op observer, and several as one ----------------------------------------------------


class NoOpObservation:
    """A call, execution and push observation at once, that does nothing: what
    `NoOpObserver` returns (one shared instance), and a base class for an observation that
    wants only a few of its points."""

    __slots__ = ()

    def activated(self) -> contextlib.AbstractContextManager[object]:
        """A context that does nothing."""
        return _NULL_CONTEXT

    def ended(self, task: Task | None, error: BaseException | None) -> None:
        """Ignored."""

    def execution_started(self, invocation: Invocation) -> ExecutionObservation:
        """Itself: an execution observation that does nothing."""
        return self

    def stream_opened(self) -> None:
        """Ignored."""

    def event_sent(self, event: StreamResponse) -> None:
        """Ignored."""

    def stream_closed(self, error: BaseException | None) -> None:
        """Ignored."""

    def finished(self, error: Any = None) -> None:
        """Ignored (a call's error, or a delivery's outcome)."""

    def headers(self) -> Sequence[tuple[str, str]]:
        """No headers."""
        return ()

    def attempted(self, attempt: int, outcome: str, retry: bool) -> None:
        """Ignored."""


_NULL_CONTEXT: Final = contextlib.nullcontext()
_NOOP: Final = NoOpObservation()


class NoOpObserver:
    """An observer that observes nothing: the seam's own cost, for benchmarks, and a base
    class for an observer that wants only a few of the points."""

    def call_started(self, request: HttpRequest, call: Call) -> CallObservation:
        """Nothing to observe: the shared no-op observation."""
        return _NOOP

    def request_refused(self, request: HttpRequest, refusal: Refusal) -> None:
        """Ignored."""

    def task_changed(self, task: Task, event: StreamResponse) -> None:
        """Ignored."""

    def push_context(self) -> object:
        """Nothing."""
        return None

    def push_context_headers(self) -> Mapping[str, str]:
        """No headers."""
        return {}

    def push_started(self, context: object, task_id: str, origin: str) -> PushObservation:
        """The shared no-op observation."""
        return _NOOP

    def push_dropped(self, task_id: str, reason: str) -> None:
        """Ignored."""

    def push_queue_depth(self, pending: int) -> None:
        """Ignored."""

    def backend_operation(self, operation: str, seconds: float, error: bool) -> None:
        """Ignored."""

    def execution_recovered(self, task_id: str, outcome: str, attempt: int) -> None:
        """Ignored."""

    def attempt_started(
        self, invocation: Invocation, trace: Mapping[str, str]
    ) -> ExecutionObservation:
        """The shared no-op observation."""
        return _NOOP


class _Both:
    """The observations of several observers, as one."""

    __slots__ = ("parts",)

    def __init__(self, parts: Sequence[Any]) -> None:
        self.parts = parts

    # ExecutionObservation
    @contextlib.contextmanager
    def activated(self) -> Iterator[object]:
        with contextlib.ExitStack() as stack:
            for part in self.parts:
                stack.enter_context(part.activated())
            yield None

    def ended(self, task: Task | None, error: BaseException | None) -> None:
        for part in self.parts:
            part.ended(task, error)

    # CallObservation
    def execution_started(self, invocation: Invocation) -> ExecutionObservation:
        return _Both([part.execution_started(invocation) for part in self.parts])

    def stream_opened(self) -> None:
        for part in self.parts:
            part.stream_opened()

    def event_sent(self, event: StreamResponse) -> None:
        for part in self.parts:
            part.event_sent(event)

    def stream_closed(self, error: BaseException | None) -> None:
        for part in self.parts:
            part.stream_closed(error)

    def finished(self, outcome: Any = None) -> None:
        for part in self.parts:
            part.finished(outcome)

    # PushObservation
    def headers(self) -> Sequence[tuple[str, str]]:
        return [header for part in self.parts for header in part.headers()]

    def attempted(self, attempt: int, outcome: str, retry: bool) -> None:
        for part in self.parts:
            part.attempted(attempt, outcome, retry)


class Observers:
    """Several observers as one: each hears every point, in the order given."""

    def __init__(self, *observers: Observer) -> None:
        self.observers = tuple(observers)

    def call_started(self, request: HttpRequest, call: Call) -> CallObservation:
        """Every observer's observation of the call."""
        return _Both([o.call_started(request, call) for o in self.observers])

    def request_refused(self, request: HttpRequest, refusal: Refusal) -> None:
        """Told to every observer."""
        for observer in self.observers:
            observer.request_refused(request, refusal)

    def task_changed(self, task: Task, event: StreamResponse) -> None:
        """Told to every observer."""
        for observer in self.observers:
            observer.task_changed(task, event)

    def push_context(self) -> object:
        """Every observer's context, in order."""
        return tuple(o.push_context() for o in self.observers)

    def push_context_headers(self) -> Mapping[str, str]:
        """Every observer's headers, merged (a later observer's value of a header wins)."""
        merged: dict[str, str] = {}
        for observer in self.observers:
            merged.update(observer.push_context_headers())
        return merged

    def push_started(self, context: object, task_id: str, origin: str) -> PushObservation:
        """Every observer's observation of the delivery: each with its own context (the
        tuple of `push_context`), or each with the same mapping (`push_context_headers`)."""
        if isinstance(context, Mapping):
            return _Both([o.push_started(context, task_id, origin) for o in self.observers])
        assert isinstance(context, tuple)
        return _Both(
            [
                o.push_started(c, task_id, origin)
                for o, c in zip(self.observers, context, strict=True)
            ]
        )

    def push_dropped(self, task_id: str, reason: str) -> None:
        """Told to every observer."""
        for observer in self.observers:
            observer.push_dropped(task_id, reason)

    def push_queue_depth(self, pending: int) -> None:
        """Told to every observer."""
        for observer in self.observers:
            observer.push_queue_depth(pending)

    def backend_operation(self, operation: str, seconds: float, error: bool) -> None:
        """Told to every observer."""
        for observer in self.observers:
            observer.backend_operation(operation, seconds, error)

    def execution_recovered(self, task_id: str, outcome: str, attempt: int) -> None:
        """Told to every observer that listens for it (see `report_recovery`)."""
        for observer in self.observers:
            report_recovery(observer, task_id, outcome, attempt)

    def attempt_started(
        self, invocation: Invocation, trace: Mapping[str, str]
    ) -> ExecutionObservation:
        """The observations of every observer that observes attempts (`observe_attempt`)."""
        parts = [observe_attempt(observer, invocation, trace) for observer in self.observers]
        return _Both([part for part in parts if part is not None])
