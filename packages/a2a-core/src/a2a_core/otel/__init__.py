"""OpenTelemetry traces, metrics and log correlation for an A2A server (``a2aserve-core[otel]``).

``A2AServer(..., observer=OpenTelemetryObserver(agent_name=card.name))``: an
:class:`~a2a_core.server.observe.Observer` that turns what the runtime reports into spans
and metrics through the OpenTelemetry **API** only. Which SDK, exporters, sampler and
propagators run is the deployment's choice (the global providers by default; without an SDK
installed, the API's no-op ones). This module is imported only by whoever uses it: a server
without this observer never imports ``opentelemetry``.

What it emits (tables in ``docs/observability.md``):

- a SERVER span per call, after the RPC conventions (``rpc.system`` ``jsonrpc``,
  ``rpc.method``, ``rpc.jsonrpc.request_id``, ``rpc.jsonrpc.error_code``) or, on the REST
  binding, the HTTP ones (``http.request.method``, ``url.path``,
  ``http.response.status_code``), plus ``a2a.*`` attributes (operation, binding, protocol
  version, extensions, tenant, task and context ids). Never message contents, tokens or
  credentials. A streaming call's span lasts until its stream ends;
- an ``invoke_agent`` span per execution of the agent (GenAI agent conventions:
  ``gen_ai.operation.name``, ``gen_ai.agent.name``, ``gen_ai.conversation.id``), a child of
  the call that started it; the task's status changes and artifacts are its events. It is
  the current span while the agent runs, so an agent that calls another agent through an
  instrumented client continues the trace;
- a CLIENT span per webhook delivery (all its attempts), a child of whatever wrote the
  event (the agent's span), whose context goes out in the delivery's ``traceparent``; a
  durable queue's job carries that context as its W3C headers
  (`OpenTelemetryObserver.push_context_headers`), so the delivery continues the trace on
  whichever replica, or after whichever restart, it is made;
- the W3C ``traceparent``/``tracestate``/``baggage`` of an incoming request (or whatever the
  global propagator reads) continue its trace; a span already current in the request (an
  ASGI or aiohttp instrumentation's) is the parent instead, and the call's span is then
  INTERNAL;
- metrics: see :data:`METRICS`.

Log correlation: :func:`correlate_logs` (called by the observer unless told not to) makes
every log record carry ``otelTraceID``/``otelSpanID`` (and ``trace_id``/``span_id``), the
current span's ids in hex, or ``"0"`` when no span is active, so a formatter may name them.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from contextvars import Token
from typing import Any, Final

from opentelemetry import context as otel_context
from opentelemetry import metrics, propagate, trace
from opentelemetry.propagators.textmap import TextMapPropagator
from opentelemetry.trace import Span, SpanKind, Status, StatusCode

from a2a_core._protocol.call import Call
from a2a_core._protocol.errors import A2AError
from a2a_core._protocol.grpc.binding import CODES as GRPC_CODES
from a2a_core._protocol.grpc.binding import SERVICE as GRPC_SERVICE
from a2a_core._protocol.http import HttpRequest
from a2a_core._protocol.operations import OPERATIONS, Operation
from a2a_core._protocol.refusal import Refusal
from a2a_core.otel._environment import LOG_FORMAT, OpenTelemetrySetupError, install_providers
from a2a_core.server._messages import Invocation
from a2a_core.server.observe import CallObservation, ExecutionObservation, PushObservation
from a2a_core.types import TERMINAL_STATES, StreamResponse, Task

__all__ = [
    "INSTRUMENTATION_NAME",
    "METRICS",
    "OpenTelemetryObserver",
    "OpenTelemetrySetupError",
    "configure_from_environment",
    "correlate_logs",
    "uncorrelate_logs",
]

#: The instrumentation scope of the tracer and meter.
INSTRUMENTATION_NAME: Final = "a2a_core"

#: Every instrument: name -> (kind, unit, description).
METRICS: Final[Mapping[str, tuple[str, str, str]]] = {
    "rpc.server.call.duration": (
        "histogram",
        "s",
        "Duration of calls (a stream's: until it ends), by operation, binding, outcome; "
        "its count is the number of calls",
    ),
    "a2a.server.requests.refused": (
        "observable counter",
        "{request}",
        "Requests answered with an error before they became a call, by binding and outcome",
    ),
    "a2a.server.tasks.running": (
        "observable updowncounter",
        "{task}",
        "Executions of the agent running now",
    ),
    "a2a.server.tasks.finished": (
        "observable counter",
        "{task}",
        "Tasks that reached a final state, by state",
    ),
    "a2a.server.streams.open": (
        "observable updowncounter",
        "{stream}",
        "Open streams, by operation (SubscribeToTask: subscribers)",
    ),
    "a2a.server.stream.events": ("observable counter", "{event}", "Events sent on streams"),
    "a2a.server.push.deliveries": (
        "observable counter",
        "{delivery}",
        "Webhook deliveries by outcome (delivered, failed, refused, cancelled, dropped)",
    ),
    "a2a.server.push.retries": ("observable counter", "{attempt}", "Webhook attempts retried"),
    "a2a.server.push.duration": ("histogram", "s", "Duration of a delivery, all attempts"),
    "a2a.server.push.queue.depth": (
        "observable gauge",
        "{delivery}",
        "Webhook deliveries accepted and not finished",
    ),
    "a2a.server.backend.operation.duration": (
        "histogram",
        "s",
        "Duration of a networked backend's operations, by operation",
    ),
    "a2a.server.executions.recovered": (
        "observable counter",
        "{execution}",
        "Lost executions recovered here, by outcome (retried, resumed, failed, gave_up) "
        "and executions handed off at a stop (released)",
    ),
}


class OpenTelemetryObserver:
    """The observer that speaks OpenTelemetry (see the module docstring).

    Parameters:
        agent_name: ``gen_ai.agent.name`` of the agent spans (the card's name).
        tracer_provider, meter_provider: where spans and measurements go (the global ones
            by default).
        propagator: reads incoming and writes outgoing trace context (the global one by
            default: W3C trace context and baggage unless configured otherwise).
        log_correlation: install :func:`correlate_logs` (once per process).
    """

    def __init__(
        self,
        *,
        agent_name: str = "agent",
        tracer_provider: trace.TracerProvider | None = None,
        meter_provider: metrics.MeterProvider | None = None,
        propagator: TextMapPropagator | None = None,
        log_correlation: bool = True,
    ) -> None:
        #: ``gen_ai.agent.name``, also in the agent spans' name (``invoke_agent NAME``).
        self.agent_name = agent_name
        self.tracer = trace.get_tracer(INSTRUMENTATION_NAME, tracer_provider=tracer_provider)
        meter = metrics.get_meter(INSTRUMENTATION_NAME, meter_provider=meter_provider)
        self._propagator = propagator
        # The header names the propagator reads, found once per propagator.
        self._fields: tuple[TextMapPropagator | None, tuple[str, ...]] = (None, ())
        self.call_duration = meter.create_histogram(
            "rpc.server.call.duration", "s", METRICS["rpc.server.call.duration"][2]
        )
        # What is counted up and down on the request's path is read only when collected.
        self._open_streams: dict[str, int] = {}
        self._queue_depth = 0
        meter.create_observable_up_down_counter(
            "a2a.server.tasks.running",
            [self._observe_running],
            "{task}",
            METRICS["a2a.server.tasks.running"][2],
        )
        meter.create_observable_up_down_counter(
            "a2a.server.streams.open",
            [self._observe_streams],
            "{stream}",
            METRICS["a2a.server.streams.open"][2],
        )
        meter.create_observable_gauge(
            "a2a.server.push.queue.depth",
            [self._observe_queue],
            "{delivery}",
            METRICS["a2a.server.push.queue.depth"][2],
        )
        self.refused_requests = _Tally(self, meter, "a2a.server.requests.refused", "{request}")
        self.finished_tasks = _Tally(self, meter, "a2a.server.tasks.finished", "{task}")
        self.stream_events = _Tally(self, meter, "a2a.server.stream.events", "{event}")
        self.push_deliveries = _Tally(self, meter, "a2a.server.push.deliveries", "{delivery}")
        self.push_retries = _Tally(self, meter, "a2a.server.push.retries", "{attempt}")
        self.recoveries = _Tally(self, meter, "a2a.server.executions.recovered", "{execution}")
        self.push_duration = meter.create_histogram(
            "a2a.server.push.duration", "s", METRICS["a2a.server.push.duration"][2]
        )
        self.backend_duration = meter.create_histogram(
            "a2a.server.backend.operation.duration",
            "s",
            METRICS["a2a.server.backend.operation.duration"][2],
        )
        #: The span of each task's running execution, for its status and artifact events.
        self._agent_spans: dict[str, Span] = {}
        # Metric attributes are few distinct dicts: built once each, reused.
        self._attributes: dict[tuple[Any, ...], Mapping[str, Any]] = {}
        if log_correlation:
            correlate_logs()

    # --- helpers ------------------------------------------------------------------------

    def _observe_running(self, options: metrics.CallbackOptions) -> list[metrics.Observation]:
        return [metrics.Observation(len(self._agent_spans))]

    def _observe_streams(self, options: metrics.CallbackOptions) -> list[metrics.Observation]:
        return [
            metrics.Observation(count, self.attributes("a2a.operation", operation))
            for operation, count in list(self._open_streams.items())
        ]

    def _observe_queue(self, options: metrics.CallbackOptions) -> list[metrics.Observation]:
        return [metrics.Observation(self._queue_depth)]

    def attributes(self, *key: Any) -> Mapping[str, Any]:
        """The metric attributes of ``key``: ``(name, value, name, value...)``, cached."""
        found = self._attributes.get(key)
        if found is None:
            found = self._attributes[key] = dict(zip(key[::2], key[1::2], strict=True))
        return found

    def _incoming(self, request: HttpRequest) -> tuple[otel_context.Context | None, SpanKind]:
        """The parent of a call's span: a span already current (an HTTP instrumentation's),
        else the trace context the request carries (``None``: a new trace)."""
        current = otel_context.get_current()
        # An empty context (no HTTP instrumentation): no span to look for.
        if current and trace.get_current_span(current).get_span_context().is_valid:
            return None, SpanKind.INTERNAL
        propagator = self._propagator or propagate.get_global_textmap()
        if propagator is not self._fields[0]:
            self._fields = (propagator, tuple(propagator.fields))
        headers = request.headers
        carrier: dict[str, str] = {}
        for name in self._fields[1]:
            value = headers.get(name)
            if value is not None:
                carrier[name] = value
        if not carrier:
            return None, SpanKind.SERVER
        return propagator.extract(carrier), SpanKind.SERVER

    # --- Observer -----------------------------------------------------------------------

    def call_started(self, request: HttpRequest, call: Call) -> CallObservation:
        """A span for the call, parented as the module docstring says."""
        parent, kind = self._incoming(request)
        operation = call.operation
        attributes: dict[str, Any] = {
            "a2a.operation": operation.value,
            "a2a.binding": call.binding,
            "a2a.protocol.version": call.version,
        }
        if call.binding == "jsonrpc":
            method = operation.value if call.dialect == "1.0" else OPERATIONS[operation].v0_3_method
            attributes["rpc.system"] = "jsonrpc"
            attributes["rpc.method"] = method
            if call.request_id is not None:
                attributes["rpc.jsonrpc.request_id"] = str(call.request_id)
            name = str(method)
        elif call.binding == "grpc":
            # OpenTelemetry's RPC conventions for gRPC: "<service>/<method>".
            attributes["rpc.system"] = "grpc"
            attributes["rpc.service"] = GRPC_SERVICE
            attributes["rpc.method"] = operation.value
            name = f"{GRPC_SERVICE}/{operation.value}"
        else:
            attributes["http.request.method"] = request.method
            attributes["url.path"] = request.path
            name = f"{request.method} {operation.value}"
        if call.extensions:
            attributes["a2a.extensions"] = list(call.extensions)
        if call.tenant:
            attributes["a2a.tenant"] = call.tenant
        task_id = _task_id_of(call)
        if task_id:
            attributes["a2a.task.id"] = task_id
        span = self.tracer.start_span(name, parent, kind, attributes)
        return _CallSpan(self, span, call, parent)

    def request_refused(self, request: HttpRequest, refusal: Refusal) -> None:
        """Counted (no span: the HTTP server's instrumentation, if any, has one; and a flood
        of garbage then costs a dict update per request)."""
        self.refused_requests.add(
            1, ("a2a.binding", refusal.binding, "a2a.outcome", refusal.reason)
        )

    def task_changed(self, task: Task, event: StreamResponse) -> None:
        """An event on the span of the task's execution (or the current span: a cancel's)."""
        update = event.artifact_update
        if update is not None and update.append and not update.last_chunk:
            return  # one event per artifact and one for its last chunk, not per chunk
        if event.task is not None:
            return  # the task's creation: its execution's span has just begun
        span = self._agent_spans.get(task.id) or trace.get_current_span()
        if not span.is_recording():  # none, or not sampled: no event to build
            if event.status_update is not None:
                self._maybe_finished(event)
            return
        status = event.status_update
        if status is not None:
            state = status.status.state.value
            span.add_event("a2a.task.status", {"a2a.task.state": state})
            self._maybe_finished(event)
        elif update is not None:
            span.add_event(
                "a2a.task.artifact",
                {
                    "a2a.artifact.id": update.artifact.artifact_id,
                    "a2a.artifact.append": update.append,
                    "a2a.artifact.last_chunk": update.last_chunk,
                },
            )

    def _maybe_finished(self, event: StreamResponse) -> None:
        assert event.status_update is not None
        state = event.status_update.status.state
        if state in TERMINAL_STATES:
            self.finished_tasks.add(1, ("a2a.task.state", state.value))

    def push_context(self) -> object:
        """The current context: the delivery's span is its child."""
        return otel_context.get_current()

    def push_context_headers(self) -> Mapping[str, str]:
        """The current context as the propagator writes it (``traceparent``, ``tracestate``,
        ``baggage`` by default), for a delivery made elsewhere or later; empty without a
        valid span or baggage."""
        carrier: dict[str, str] = {}
        (self._propagator or propagate.get_global_textmap()).inject(carrier)
        return carrier

    def push_started(self, context: object, task_id: str, origin: str) -> PushObservation:
        """A CLIENT span for the delivery (see the module docstring): a child of
        ``context``, an OpenTelemetry context (`push_context`) or the headers of one
        (`push_context_headers`, read with the propagator)."""
        parent: otel_context.Context | None = None
        if isinstance(context, otel_context.Context):
            parent = context
        elif isinstance(context, Mapping) and context:
            propagator = self._propagator or propagate.get_global_textmap()
            parent = propagator.extract(context, otel_context.Context())
        scheme, _, hostport = origin.partition("://")
        host, _, port = hostport.rpartition(":") if hostport.count(":") else (hostport, "", "")
        attributes: dict[str, Any] = {
            "http.request.method": "POST",
            "server.address": host.strip("[]") or hostport,
            "url.scheme": scheme,
            "a2a.task.id": task_id,
        }
        if port.isdigit():
            attributes["server.port"] = int(port)
        span = self.tracer.start_span("POST", parent, SpanKind.CLIENT, attributes)
        return _PushSpan(self, span, trace.set_span_in_context(span, parent))

    def push_dropped(self, task_id: str, reason: str) -> None:
        """Counted as a delivery of outcome ``dropped``."""
        self.push_deliveries.add(1, ("a2a.push.outcome", "dropped", "a2a.push.reason", reason))

    def push_queue_depth(self, pending: int) -> None:
        """The gauge's new value."""
        self._queue_depth = pending

    def backend_operation(self, operation: str, seconds: float, error: bool) -> None:
        """One measurement of the backend's histogram."""
        key: tuple[str, ...] = ("a2a.backend.operation", operation)
        if error:
            key += ("error.type", "error")
        self.backend_duration.record(seconds, self.attributes(*key))

    def attempt_started(
        self, invocation: Invocation, recorded: Mapping[str, str]
    ) -> ExecutionObservation:
        """The ``invoke_agent`` span of a recovered attempt: no call started it, so it
        continues the trace its task recorded (``recorded``, the first attempt's agent span:
        every attempt of a task is in one trace, a child of the first), or starts one of
        its own when there is none; ``a2a.attempt`` says which."""
        parent = otel_context.Context()  # never whatever happens to be current here
        if recorded:
            propagator = self._propagator or propagate.get_global_textmap()
            parent = propagator.extract(recorded, parent)
        span = self.tracer.start_span(
            f"invoke_agent {self.agent_name}",
            parent,
            SpanKind.INTERNAL,
            {
                "gen_ai.operation.name": "invoke_agent",
                "gen_ai.agent.name": self.agent_name,
                "gen_ai.conversation.id": invocation.context_id,
                "a2a.task.id": invocation.task_id,
                "a2a.attempt": invocation.attempt,
            },
        )
        self._agent_spans[invocation.task_id] = span
        context = trace.set_span_in_context(span, parent)
        return _AgentSpan(self, span, invocation.task_id, context)

    def execution_recovered(self, task_id: str, outcome: str, attempt: int) -> None:
        """Counted by outcome; when a span is current (a recovery made inside a traced
        operation), an event on it names the task and the attempt."""
        self.recoveries.add(1, ("a2a.recovery.outcome", outcome))
        span = trace.get_current_span()
        if span.is_recording():
            span.add_event(
                "a2a.execution.recovered",
                {"a2a.task.id": task_id, "a2a.recovery.outcome": outcome, "a2a.attempt": attempt},
            )


def _task_id_of(call: Call) -> str:
    """The task a call names in its request (``""``: none, or a new task)."""
    request = call.request
    if call.operation in _BY_ID:
        return str(getattr(request, "id", ""))
    task_id = getattr(request, "task_id", None)
    if isinstance(task_id, str):
        return task_id
    message = getattr(request, "message", None)
    return str(getattr(message, "task_id", "") or "")


#: Operations whose request's ``id`` is a task id.
_BY_ID: Final = frozenset({Operation.GET_TASK, Operation.CANCEL_TASK, Operation.SUBSCRIBE_TO_TASK})


class _Attached:
    """Makes a context current, and no longer at exit (``trace.use_span`` without its
    generator, its exception recording and its status setting: a third of the cost)."""

    __slots__ = ("_context", "_token")

    def __init__(self, context: otel_context.Context) -> None:
        self._context = context
        self._token: Token[otel_context.Context] | None = None

    def __enter__(self) -> object:
        self._token = otel_context.attach(self._context)
        return None

    def __exit__(self, *_: object) -> None:
        if self._token is not None:
            otel_context.detach(self._token)


class _Tally:
    """A counter counted here, in a dict, and read by the SDK when it collects (an
    observable counter): recording a measurement through the SDK costs several
    microseconds, adding to an int a few dozen nanoseconds."""

    __slots__ = ("_observer", "counts")

    def __init__(
        self, observer: OpenTelemetryObserver, meter: metrics.Meter, name: str, unit: str
    ) -> None:
        self._observer = observer
        #: The count of each attribute key (``(name, value, ...)``, see `attributes`).
        self.counts: dict[tuple[Any, ...], int] = {}
        meter.create_observable_counter(name, [self._observe], unit, METRICS[name][2])

    def add(self, amount: int, key: tuple[Any, ...]) -> None:
        """Count ``amount`` more under ``key``."""
        self.counts[key] = self.counts.get(key, 0) + amount

    def _observe(self, options: metrics.CallbackOptions) -> list[metrics.Observation]:
        attributes = self._observer.attributes
        # list(): one step under the GIL, so a collection on the reader's thread never
        # sees the dict change size while it iterates.
        return [metrics.Observation(n, attributes(*key)) for key, n in list(self.counts.items())]


class _CallSpan:
    """The observation of one call: its span, and the metrics it records when it ends."""

    __slots__ = ("_call", "_context", "_events", "_observer", "_outcome", "_span", "_start")

    def __init__(
        self,
        observer: OpenTelemetryObserver,
        span: Span,
        call: Call,
        parent: otel_context.Context | None,
    ) -> None:
        self._observer = observer
        self._span = span
        self._call = call
        # The call's span in the context it continues: the incoming request's (its
        # baggage too) or the current one. The agent's context derives from it.
        self._context = trace.set_span_in_context(span, parent)
        self._start = time.perf_counter()
        self._outcome = "ok"
        self._events = 0

    def activated(self) -> contextlib.AbstractContextManager[object]:
        return _Attached(self._context)

    def execution_started(self, invocation: Invocation) -> ExecutionObservation:
        span = self._span
        # One call, one lock, rather than one per attribute.
        span.set_attributes(
            {"a2a.task.id": invocation.task_id, "a2a.context.id": invocation.context_id}
        )
        observer = self._observer
        agent_span = observer.tracer.start_span(
            f"invoke_agent {observer.agent_name}",
            self._context,
            SpanKind.INTERNAL,
            {
                "gen_ai.operation.name": "invoke_agent",
                "gen_ai.agent.name": observer.agent_name,
                "gen_ai.conversation.id": invocation.context_id,
                "a2a.task.id": invocation.task_id,
            },
        )
        observer._agent_spans[invocation.task_id] = agent_span
        # The agent runs in a task of its own, which may not have been started from
        # inside the call: its context is given, not inherited.
        context = trace.set_span_in_context(agent_span, self._context)
        return _AgentSpan(observer, agent_span, invocation.task_id, context)

    def stream_opened(self) -> None:
        streams = self._observer._open_streams
        operation = self._call.operation.value
        streams[operation] = streams.get(operation, 0) + 1

    def event_sent(self, event: StreamResponse) -> None:
        self._events += 1  # counted once, when the stream closes

    def stream_closed(self, error: BaseException | None) -> None:
        observer = self._observer
        observer._open_streams[self._call.operation.value] -= 1
        if self._events:
            observer.stream_events.add(self._events, ())
        span = self._span
        span.set_attribute("a2a.stream.events", self._events)
        if isinstance(error, GeneratorExit):
            span.set_attribute("a2a.stream.closed_by", "client")
        elif error is not None:
            self._outcome = type(error).__name__
            span.set_status(Status(StatusCode.ERROR, type(error).__name__))
            span.set_attribute("error.type", type(error).__name__)
        self._end()

    def finished(self, error: A2AError | None) -> None:
        span = self._span
        call = self._call
        if error is not None:
            self._outcome = error.reason
            span.set_attribute("error.type", error.reason)
            if call.binding == "jsonrpc":
                span.set_attribute("rpc.jsonrpc.error_code", error.code)
            elif call.binding == "grpc":
                span.set_attribute("rpc.grpc.status_code", GRPC_CODES[error.grpc_status])
            else:
                span.set_attribute("http.response.status_code", error.http_status)
            if error.http_status >= 500:
                span.set_status(Status(StatusCode.ERROR, error.reason))
        elif call.binding == "rest":
            span.set_attribute("http.response.status_code", 200)
        elif call.binding == "grpc":
            span.set_attribute("rpc.grpc.status_code", 0)
        if error is not None or not call.streaming:
            self._end()

    def _end(self) -> None:
        self._span.end()
        observer = self._observer
        call = self._call
        attributes = observer.attributes(
            "a2a.operation",
            call.operation.value,
            "a2a.binding",
            call.binding,
            "a2a.outcome",
            self._outcome,
        )
        observer.call_duration.record(time.perf_counter() - self._start, attributes)


class _AgentSpan:
    """The observation of one execution: the ``invoke_agent`` span."""

    __slots__ = ("_context", "_observer", "_span", "_task_id")

    def __init__(
        self,
        observer: OpenTelemetryObserver,
        span: Span,
        task_id: str,
        context: otel_context.Context,
    ) -> None:
        self._observer = observer
        self._span = span
        self._task_id = task_id
        self._context = context

    def activated(self) -> contextlib.AbstractContextManager[object]:
        return _Attached(self._context)

    def ended(self, task: Task | None, error: BaseException | None) -> None:
        observer = self._observer
        span = self._span
        if observer._agent_spans.get(self._task_id) is span:
            del observer._agent_spans[self._task_id]
        if task is not None:
            span.set_attribute("a2a.task.state", task.status.state.value)
        if error is not None:
            # The type only: an exception's text may quote what the agent was handling.
            span.set_attribute("error.type", type(error).__name__)
            span.set_status(Status(StatusCode.ERROR, type(error).__name__))
        span.end()


class _PushSpan:
    """The observation of one webhook delivery: its CLIENT span."""

    __slots__ = ("_context", "_observer", "_span", "_start")

    def __init__(
        self, observer: OpenTelemetryObserver, span: Span, context: otel_context.Context
    ) -> None:
        self._observer = observer
        self._span = span
        #: The delivery's span in the context of the event's writer (its baggage too).
        self._context = context
        self._start = time.perf_counter()

    def activated(self) -> contextlib.AbstractContextManager[object]:
        return _Attached(self._context)

    def headers(self) -> Sequence[tuple[str, str]]:
        carrier: dict[str, str] = {}
        propagator = self._observer._propagator or propagate.get_global_textmap()
        propagator.inject(carrier, self._context)
        return list(carrier.items())

    def attempted(self, attempt: int, outcome: str, retry: bool) -> None:
        self._span.add_event(
            "a2a.push.attempt_failed",
            {"a2a.push.attempt": attempt, "a2a.push.reason": outcome, "a2a.push.retry": retry},
        )
        if retry:
            self._observer.push_retries.add(1, ())

    def finished(self, outcome: str) -> None:
        span = self._span
        observer = self._observer
        span.set_attribute("a2a.push.outcome", outcome)
        if outcome != "delivered":
            span.set_status(Status(StatusCode.ERROR, outcome))
            span.set_attribute("error.type", outcome)
        span.end()
        observer.push_deliveries.add(1, ("a2a.push.outcome", outcome))
        observer.push_duration.record(
            time.perf_counter() - self._start, observer.attributes("a2a.push.outcome", outcome)
        )


# --- log correlation ---------------------------------------------------------------------

_installed: Callable[..., logging.LogRecord] | None = None
_install_lock = threading.Lock()


def correlate_logs() -> None:
    """Give every log record the ids of the span current where it is logged (idempotent).

    A log record factory (so that records of every logger get them, the library's
    ``a2a_core.*``, ``a2a_starlette``, ``a2a_aiohttp``, ``a2aserve_redis``, ``a2a_sql`` and
    yours; a filter would see only one logger's own): ``otelTraceID`` and ``otelSpanID``
    (the names of ``opentelemetry-instrumentation-logging``), also as ``trace_id`` and
    ``span_id``, in hex; ``"0"`` without a valid span. Use them in a format:
    ``"%(levelname)s %(name)s trace=%(trace_id)s span=%(span_id)s %(message)s"``.
    """
    global _installed
    with _install_lock:
        if _installed is not None:
            return
        previous = logging.getLogRecordFactory()

        def factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
            record = previous(*args, **kwargs)
            context = trace.get_current_span().get_span_context()
            if context.is_valid:
                trace_id = format(context.trace_id, "032x")
                span_id = format(context.span_id, "016x")
            else:
                trace_id = span_id = "0"
            record.otelTraceID = record.trace_id = trace_id
            record.otelSpanID = record.span_id = span_id
            return record

        _installed = previous
        logging.setLogRecordFactory(factory)


def uncorrelate_logs() -> None:
    """Undo :func:`correlate_logs` (tests)."""
    global _installed
    with _install_lock:
        if _installed is not None:
            logging.setLogRecordFactory(_installed)
            _installed = None


def configure_from_environment(log_level: int = logging.INFO) -> Callable[[], None]:
    """Set the OpenTelemetry SDK up from the standard ``OTEL_*`` environment variables (see
    ``a2a_core.otel._environment``: the exporters of ``OTEL_TRACES_EXPORTER`` and
    ``OTEL_METRICS_EXPORTER``, ``otlp`` by default); its providers become the global ones,
    log records get the trace and span ids (`correlate_logs`), and the root logger, when it
    has no handler yet, a format that shows them at ``log_level``. Returns what flushes and
    shuts the providers down: call it once the server has stopped. Needs
    ``opentelemetry-sdk``; raises `OpenTelemetrySetupError` without it, or without the
    exporter asked for."""
    shutdown = install_providers()
    correlate_logs()
    logging.basicConfig(level=log_level, format=LOG_FORMAT)
    return shutdown
