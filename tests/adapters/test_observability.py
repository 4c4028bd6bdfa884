"""Observation over real HTTP, on both adapters: OpenTelemetry spans and metrics
(``a2a_core.otel``, with the SDK's in-memory exporter and reader), the seam itself
(``a2a_core.server.observe``: several observers at once, a networked backend's timings),
correlated logs, and health checks with each adapter's route.

Every test serves on 127.0.0.1 through the contract harness (``adapters.contract``), which
stops everything it started and fails on any error logged that the test did not expect.
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import pytest
from anyio.abc import SocketStream
from anyio.streams.buffered import BufferedByteReceiveStream
from opentelemetry import baggage, trace
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

from a2a_core.call import Call
from a2a_core.http import HttpRequest
from a2a_core.otel import OpenTelemetryObserver, correlate_logs, uncorrelate_logs
from a2a_core.server import A2AServer, PushOptions, TaskContext, TimestampExtension
from a2a_core.server.observe import CallObservation, NoOpObservation, NoOpObserver, Observers
from adapters.contract import Harness, make_card, send_params

pytestmark = pytest.mark.anyio

TRACE_ID = "0af7651916cd43dd8448eb211c80319c"
PARENT_ID = "b7ad6b7169203331"
TRACEPARENT = {"traceparent": f"00-{TRACE_ID}-{PARENT_ID}-01"}


# --- OpenTelemetry SDK in memory ---------------------------------------------------------


@dataclass
class Otel:
    """An SDK tracer and meter provider that keep everything in memory."""

    spans: InMemorySpanExporter
    reader: InMemoryMetricReader
    observer: OpenTelemetryObserver

    def finished(self) -> list[ReadableSpan]:
        return list(self.spans.get_finished_spans())

    def named(self, name: str) -> list[ReadableSpan]:
        return [s for s in self.finished() if s.name == name]

    async def wait_for(self, name: str, count: int = 1) -> list[ReadableSpan]:
        """The finished spans called ``name``, once there are ``count`` (spans of an
        execution or a delivery end after the reply that the test waited for)."""
        with anyio.fail_after(10):
            while len(self.named(name)) < count:
                await anyio.sleep(0.01)
        return self.named(name)

    def metrics(self) -> dict[str, list[tuple[dict[str, Any], Any]]]:
        """Every metric's points: name -> [(attributes, value or histogram count)]."""
        out: dict[str, list[tuple[dict[str, Any], Any]]] = {}
        data = self.reader.get_metrics_data()
        assert data is not None
        for resource in data.resource_metrics:
            for scope in resource.scope_metrics:
                for metric in scope.metrics:
                    out[metric.name] = [
                        (dict(p.attributes or {}), getattr(p, "value", getattr(p, "count", None)))
                        for p in metric.data.data_points
                    ]
        return out

    def units(self) -> dict[str, str]:
        data = self.reader.get_metrics_data()
        assert data is not None
        return {
            m.name: m.unit
            for r in data.resource_metrics
            for s in r.scope_metrics
            for m in s.metrics
        }


@pytest.fixture
def otel() -> Iterator[Otel]:
    spans = InMemorySpanExporter()
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(spans))
    reader = InMemoryMetricReader()
    meter_provider = MeterProvider(metric_readers=[reader])
    observer = OpenTelemetryObserver(
        agent_name="Contract agent",
        tracer_provider=tracer_provider,
        meter_provider=meter_provider,
        log_correlation=False,
    )
    try:
        yield Otel(spans, reader, observer)
    finally:
        tracer_provider.shutdown()
        meter_provider.shutdown()


def child_of(span: ReadableSpan, parent: ReadableSpan) -> bool:
    return span.parent is not None and span.parent.span_id == parent.context.span_id


def hex_trace(span: ReadableSpan) -> str:
    return format(span.context.trace_id, "032x")


def all_values(span: ReadableSpan) -> str:
    """Every attribute and event attribute of a span, as text (to look for leaks)."""
    parts = [repr(dict(span.attributes or {}))]
    parts += [repr(dict(event.attributes or {})) for event in span.events]
    return " ".join(parts)


# --- a webhook receiver ------------------------------------------------------------------


@dataclass
class Receiver:
    """Records the requests it receives and answers each 200."""

    port: int = 0
    requests: list[dict[str, Any]] = field(default_factory=list)

    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/hook"

    async def handle(self, stream: SocketStream) -> None:
        async with stream:
            buffered = BufferedByteReceiveStream(stream)
            while True:
                try:
                    head = await buffered.receive_until(b"\r\n\r\n", 65536)
                except (anyio.IncompleteRead, anyio.EndOfStream, anyio.BrokenResourceError):
                    return
                lines = head.decode("latin-1").split("\r\n")[1:]
                headers = {
                    k.strip().lower(): v.strip() for k, _, v in (x.partition(":") for x in lines)
                }
                length = int(headers.get("content-length", "0"))
                body = await buffered.receive_exactly(length) if length else b""
                self.requests.append({"headers": headers, "body": json.loads(body)})
                await stream.send(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")

    async def wait_for(self, count: int) -> None:
        with anyio.fail_after(10):
            while len(self.requests) < count:
                await anyio.sleep(0.01)


@asynccontextmanager
async def receiving() -> AsyncIterator[Receiver]:
    receiver = Receiver()
    listener = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=0)
    receiver.port = listener.extra(anyio.abc.SocketAttribute.local_port)
    async with listener, anyio.create_task_group() as tg:
        tg.start_soon(listener.serve, receiver.handle)
        try:
            yield receiver
        finally:
            tg.cancel_scope.cancel()


# --- agents --------------------------------------------------------------------------------

#: What the agents saw of the current span: trace id and span id, in hex.
seen: list[tuple[str, str]] = []


def _remember_span() -> None:
    context = trace.get_current_span().get_span_context()
    seen.append((format(context.trace_id, "032x"), format(context.span_id, "016x")))


async def echo(ctx: TaskContext) -> str:
    _remember_span()
    return ctx.text


async def chunks(ctx: TaskContext) -> AsyncIterator[str]:
    _remember_span()
    for word in ("one", "two", "three"):
        yield word


async def forever(ctx: TaskContext) -> None:
    await ctx.working()
    await anyio.sleep_forever()


async def broken(ctx: TaskContext) -> str:
    raise RuntimeError("the agent broke while reading: SECRET-CONTENT")


# --- traces ----------------------------------------------------------------------------------


async def test_blocking_send_continues_the_incoming_trace_into_the_agent(
    harness: Harness, otel: Otel
) -> None:
    seen.clear()
    server = A2AServer(echo, card=make_card(), observer=otel.observer)
    async with harness.serve(server) as live:
        result = await live.result("SendMessage", send_params("hello"), id=7, headers=TRACEPARENT)
    task = result["task"]
    (call,) = await otel.wait_for("SendMessage")
    (agent,) = await otel.wait_for("invoke_agent Contract agent")
    assert call.kind is SpanKind.SERVER
    assert hex_trace(call) == TRACE_ID
    assert call.parent is not None and format(call.parent.span_id, "016x") == PARENT_ID
    assert call.parent.is_remote
    assert dict(call.attributes or {}) == {
        "rpc.system": "jsonrpc",
        "rpc.method": "SendMessage",
        "rpc.jsonrpc.request_id": "7",
        "a2a.operation": "SendMessage",
        "a2a.binding": "jsonrpc",
        "a2a.protocol.version": "1.0",
        "a2a.task.id": task["id"],
        "a2a.context.id": task["contextId"],
    }
    assert call.status.status_code is StatusCode.UNSET
    # The agent's span: a child of the call, current while the agent ran.
    assert child_of(agent, call)
    assert agent.kind is SpanKind.INTERNAL
    assert dict(agent.attributes or {}) == {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": "Contract agent",
        "gen_ai.conversation.id": task["contextId"],
        "a2a.task.id": task["id"],
        "a2a.task.state": "TASK_STATE_COMPLETED",
    }
    assert seen == [(TRACE_ID, format(agent.context.span_id, "016x"))]
    events = [(e.name, dict(e.attributes or {})) for e in agent.events]
    artifact_id = task["artifacts"][0]["artifactId"]
    assert events == [
        (
            "a2a.task.artifact",
            {
                "a2a.artifact.id": artifact_id,
                "a2a.artifact.append": False,
                "a2a.artifact.last_chunk": False,
            },
        ),
        ("a2a.task.status", {"a2a.task.state": "TASK_STATE_COMPLETED"}),
    ]
    assert "hello" not in all_values(call) + all_values(agent)  # no message content


async def test_a_call_without_trace_context_starts_a_trace(harness: Harness, otel: Otel) -> None:
    server = A2AServer(echo, card=make_card(), observer=otel.observer)
    async with harness.serve(server) as live:
        await live.result("SendMessage", send_params("hello"))
    (call,) = await otel.wait_for("SendMessage")
    (agent,) = await otel.wait_for("invoke_agent Contract agent")
    assert call.parent is None
    assert child_of(agent, call)


async def test_stream_span_lasts_until_the_stream_ends(harness: Harness, otel: Otel) -> None:
    server = A2AServer(chunks, card=make_card(), observer=otel.observer)
    async with harness.serve(server) as live:
        stream = await live.stream_rpc(
            "SendStreamingMessage", send_params("go"), id="s1", headers=TRACEPARENT
        )
        assert stream.status == 200
        frames = len(stream.frames)
    (call,) = await otel.wait_for("SendStreamingMessage")
    (agent,) = await otel.wait_for("invoke_agent Contract agent")
    assert hex_trace(call) == TRACE_ID and child_of(agent, call)
    attributes = dict(call.attributes or {})
    assert attributes["rpc.jsonrpc.request_id"] == "s1"
    assert attributes["a2a.stream.events"] == frames
    # The call ends with its stream: after the agent's last event was sent.
    assert call.end_time is not None and agent.end_time is not None
    assert call.end_time >= max(e.timestamp for e in agent.events)
    states = [dict(e.attributes or {}).get("a2a.task.state") for e in agent.events]
    assert states[-1] == "TASK_STATE_COMPLETED"
    # One event per artifact (its chunks are not events each: a stream may have thousands).
    assert [e.name for e in agent.events].count("a2a.task.artifact") == 1


async def test_cancel(harness: Harness, otel: Otel) -> None:
    server = A2AServer(forever, card=make_card(), observer=otel.observer)
    async with harness.serve(server) as live:
        sent = await live.result(
            "SendMessage", send_params("wait", configuration={"returnImmediately": True})
        )
        task_id = sent["task"]["id"]
        await live.wait_for_state(task_id, "TASK_STATE_WORKING")
        canceled = await live.result("CancelTask", {"id": task_id}, headers=TRACEPARENT)
        assert canceled["status"]["state"] == "TASK_STATE_CANCELED"
    (cancel,) = await otel.wait_for("CancelTask")
    (agent,) = await otel.wait_for("invoke_agent Contract agent")
    assert dict(cancel.attributes or {})["a2a.task.id"] == task_id
    assert hex_trace(cancel) == TRACE_ID  # the cancel continues its caller's trace
    assert dict(agent.attributes or {})["a2a.task.state"] == "TASK_STATE_CANCELED"
    states = [dict(e.attributes or {}).get("a2a.task.state") for e in agent.events]
    assert states == ["TASK_STATE_WORKING", "TASK_STATE_CANCELED"]
    assert agent.status.status_code is not StatusCode.ERROR  # a cancel is no failure


async def test_failed_agent(harness: Harness, otel: Otel) -> None:
    correlate_logs()
    try:
        server = A2AServer(broken, card=make_card(), observer=otel.observer)
        async with harness.serve(server, expect_errors=True) as live:
            result = await live.result("SendMessage", send_params("hi"), headers=TRACEPARENT)
            assert result["task"]["status"]["state"] == "TASK_STATE_FAILED"
            records = [r for r in live.errors if "agent raised" in r.getMessage()]
    finally:
        uncorrelate_logs()
    (call,) = await otel.wait_for("SendMessage")
    (agent,) = await otel.wait_for("invoke_agent Contract agent")
    assert agent.status.status_code is StatusCode.ERROR
    assert dict(agent.attributes or {})["error.type"] == "RuntimeError"
    assert dict(agent.attributes or {})["a2a.task.state"] == "TASK_STATE_FAILED"
    assert "SECRET" not in all_values(agent) + str(agent.status.description)
    assert call.status.status_code is StatusCode.UNSET  # the call itself succeeded
    # The failure is logged with the task id and the agent's trace and span.
    (record,) = records
    assert result["task"]["id"] in record.getMessage()
    assert record.levelno == logging.ERROR
    assert record.trace_id == TRACE_ID  # type: ignore[attr-defined]
    assert record.span_id == format(agent.context.span_id, "016x")  # type: ignore[attr-defined]


async def test_error_reply_is_on_the_call_span(harness: Harness, otel: Otel) -> None:
    server = A2AServer(echo, card=make_card(), observer=otel.observer)
    async with harness.serve(server) as live:
        error = await live.error("GetTask", {"id": "missing"})
        assert error["code"] == -32001
        response = await live.rest("GET", "/tasks/missing")
        assert response.status_code == 404
        ok = await live.rest("POST", "/message:send", send_params("rest"))
        assert ok.status_code == 200
    rpc, rest = await otel.wait_for("GetTask", 1), otel.named("GET GetTask")
    attributes = dict(rpc[0].attributes or {})
    assert attributes["error.type"] == "TASK_NOT_FOUND"
    assert attributes["rpc.jsonrpc.error_code"] == -32001
    assert attributes["a2a.task.id"] == "missing"
    assert rpc[0].status.status_code is StatusCode.UNSET  # the client's mistake
    (rest_get,) = rest
    attributes = dict(rest_get.attributes or {})
    assert attributes["http.request.method"] == "GET"
    assert attributes["url.path"] == "/tasks/missing"
    assert attributes["http.response.status_code"] == 404
    assert attributes["a2a.binding"] == "rest"
    assert "rpc.system" not in attributes
    (rest_send,) = await otel.wait_for("POST SendMessage")
    assert dict(rest_send.attributes or {})["http.response.status_code"] == 200


async def test_tenant_and_extensions_are_attributes(harness: Harness, otel: Otel) -> None:
    extension = TimestampExtension()
    server = A2AServer(echo, card=make_card(), observer=otel.observer, extensions=[extension])
    async with harness.serve(server) as live:
        response = await live.rest(
            "POST",
            "/acme/message:send",
            send_params("hi"),
            headers={"A2A-Extensions": extension.uri},
        )
        assert response.status_code == 200
    (call,) = await otel.wait_for("POST SendMessage")
    attributes = dict(call.attributes or {})
    assert attributes["a2a.tenant"] == "acme"
    assert attributes["a2a.extensions"] == (extension.uri,)


async def test_webhook_delivery_continues_the_trace(harness: Harness, otel: Otel) -> None:
    server = A2AServer(
        chunks,
        card=make_card(push=True),
        observer=otel.observer,
        push=PushOptions(allow_hosts=["127.0.0.1"]),
    )
    # The receiver inside: the harness checks that no task started while it served is left.
    async with harness.serve(server) as live, receiving() as receiver:
        config = {"url": receiver.url(), "token": "tok-SECRET"}
        stream = await live.stream_rpc(
            "SendStreamingMessage",
            send_params("go", configuration={"taskPushNotificationConfig": config}),
            headers=TRACEPARENT,
        )
        assert stream.status == 200
        events = len(stream.frames) - 1  # the webhook gets every event after the task
        await receiver.wait_for(events)
        deliveries = await otel.wait_for("POST", events)
    (agent,) = await otel.wait_for("invoke_agent Contract agent")
    for request in receiver.requests:
        _, trace_id, span_id, _ = request["headers"]["traceparent"].split("-")
        assert trace_id == TRACE_ID
        assert span_id in {format(d.context.span_id, "016x") for d in deliveries}
    for delivery in deliveries:
        assert delivery.kind is SpanKind.CLIENT
        assert child_of(delivery, agent)
        attributes = dict(delivery.attributes or {})
        assert attributes["a2a.push.outcome"] == "delivered"
        assert attributes["server.address"] == "127.0.0.1"
        assert attributes["server.port"] == receiver.port
        assert "SECRET" not in all_values(delivery)
    metrics = otel.metrics()
    assert metrics["a2a.server.push.deliveries"] == [({"a2a.push.outcome": "delivered"}, events)]


async def test_incoming_baggage_reaches_the_agent_and_the_webhook(
    harness: Harness, otel: Otel
) -> None:
    seen_baggage: list[object] = []

    async def reads_baggage(ctx: TaskContext) -> AsyncIterator[str]:
        seen_baggage.append(baggage.get_baggage("deployment.region"))
        yield "one"

    server = A2AServer(
        reads_baggage,
        card=make_card(push=True),
        observer=otel.observer,
        push=PushOptions(allow_hosts=["127.0.0.1"]),
    )
    headers = {**TRACEPARENT, "baggage": "deployment.region=eu-west"}
    async with harness.serve(server) as live, receiving() as receiver:
        config = {"url": receiver.url()}
        stream = await live.stream_rpc(
            "SendStreamingMessage",
            send_params("go", configuration={"taskPushNotificationConfig": config}),
            headers=headers,
        )
        assert stream.status == 200
        events = len(stream.frames) - 1
        await receiver.wait_for(events)
        await otel.wait_for("POST", events)
    assert seen_baggage == ["eu-west"]
    assert events >= 2
    for request in receiver.requests:
        assert request["headers"]["baggage"] == "deployment.region=eu-west"
        assert request["headers"]["traceparent"].split("-")[1] == TRACE_ID


# --- metrics -------------------------------------------------------------------------------


async def test_metrics_after_a_known_sequence(harness: Harness, otel: Otel) -> None:
    server = A2AServer(chunks, card=make_card(), observer=otel.observer)
    async with harness.serve(server) as live:
        for n in range(2):
            await live.result("SendMessage", send_params("go", mid=f"m{n}"))
        await live.error("GetTask", {"id": "missing"})
        # Refused before they became calls: counted apart, by binding and reason.
        garbage = await live.client.post(
            live.url("/"), content=b"{oops", headers={"content-type": "application/json"}
        )
        assert garbage.json()["error"]["code"] == -32700
        await live.error("NoSuchMethod", {})
        await live.error("NoSuchMethod", {})
        stream = await live.stream_rpc("SendStreamingMessage", send_params("go", mid="m3"))
        frames = len(stream.frames)
        await otel.wait_for("invoke_agent Contract agent", 3)
        metrics = otel.metrics()
    calls = {
        (a["a2a.operation"], a["a2a.binding"], a["a2a.outcome"]): count
        for a, count in metrics["rpc.server.call.duration"]
    }
    assert calls == {
        ("SendMessage", "jsonrpc", "ok"): 2,
        ("GetTask", "jsonrpc", "TASK_NOT_FOUND"): 1,
        ("SendStreamingMessage", "jsonrpc", "ok"): 1,
    }
    refused = {
        (a["a2a.binding"], a["a2a.outcome"]): count
        for a, count in metrics["a2a.server.requests.refused"]
    }
    assert refused == {("jsonrpc", "JSON_PARSE"): 1, ("jsonrpc", "METHOD_NOT_FOUND"): 2}
    assert metrics["a2a.server.tasks.finished"] == [({"a2a.task.state": "TASK_STATE_COMPLETED"}, 3)]
    assert metrics["a2a.server.tasks.running"] == [({}, 0)]
    assert metrics["a2a.server.streams.open"] == [({"a2a.operation": "SendStreamingMessage"}, 0)]
    assert metrics["a2a.server.stream.events"] == [({}, frames)]
    units = otel.units()
    assert units["rpc.server.call.duration"] == "s"
    assert units["a2a.server.tasks.finished"] == "{task}"
    assert units["a2a.server.stream.events"] == "{event}"
    assert units["a2a.server.requests.refused"] == "{request}"


async def test_a_trace_not_sampled_records_no_span_and_still_counts(harness: Harness) -> None:
    from opentelemetry.sdk.trace.sampling import ALWAYS_OFF

    spans = InMemorySpanExporter()
    tracer_provider = TracerProvider(sampler=ALWAYS_OFF)
    tracer_provider.add_span_processor(SimpleSpanProcessor(spans))
    reader = InMemoryMetricReader()
    meter_provider = MeterProvider(metric_readers=[reader])
    observer = OpenTelemetryObserver(
        tracer_provider=tracer_provider, meter_provider=meter_provider, log_correlation=False
    )
    seen.clear()
    server = A2AServer(echo, card=make_card(), observer=observer)
    try:
        async with harness.serve(server) as live:
            await live.result("SendMessage", send_params("hello"))
        assert spans.get_finished_spans() == ()
        # The agent still runs in a (non-recording) span of a valid trace: its own calls
        # carry that trace on, marked not sampled.
        ((trace_id, span_id),) = seen
        assert trace_id != "0" * 32 and span_id != "0" * 16
        otel = Otel(spans, reader, observer)
        metrics = otel.metrics()
        assert metrics["a2a.server.tasks.finished"] == [
            ({"a2a.task.state": "TASK_STATE_COMPLETED"}, 1)
        ]
        ((attributes, count),) = metrics["rpc.server.call.duration"]
        assert (attributes["a2a.outcome"], count) == ("ok", 1)
    finally:
        tracer_provider.shutdown()
        meter_provider.shutdown()


# --- the seam --------------------------------------------------------------------------------


class Outcome(NoOpObservation):
    """A call's observation of its own: only the outcome."""

    def __init__(self, outcomes: list[tuple[str, str]], operation: str) -> None:
        self.outcomes = outcomes
        self.operation = operation

    def finished(self, error: Any = None) -> None:
        self.outcomes.append((self.operation, "ok" if error is None else error.reason))


class Outcomes(NoOpObserver):
    """An observer of its own: the outcome of each call."""

    def __init__(self) -> None:
        self.outcomes: list[tuple[str, str]] = []

    def call_started(self, request: HttpRequest, call: Call) -> CallObservation:
        return Outcome(self.outcomes, call.operation.value)


async def test_several_observers_hear_every_call(harness: Harness, otel: Otel) -> None:
    mine = Outcomes()
    server = A2AServer(echo, card=make_card(), observer=Observers(mine, otel.observer))
    async with harness.serve(server) as live:
        await live.result("SendMessage", send_params("hello"), headers=TRACEPARENT)
        await live.error("GetTask", {"id": "missing"})
    assert mine.outcomes == [("SendMessage", "ok"), ("GetTask", "TASK_NOT_FOUND")]
    (agent,) = await otel.wait_for("invoke_agent Contract agent")
    assert hex_trace(agent) == TRACE_ID


class Carrier(NoOpObserver):
    """An observer of its own with a context to carry, and what it was handed back."""

    def __init__(self, headers: dict[str, str]) -> None:
        self.headers = headers
        self.contexts: list[object] = []

    def push_context_headers(self) -> dict[str, str]:
        return self.headers

    def push_started(self, context: object, task_id: str, origin: str) -> NoOpObservation:
        self.contexts.append(context)
        return NoOpObservation()


def test_push_context_headers_of_the_seam(otel: Otel) -> None:
    """Nothing to carry without a trace; several observers' headers merged, and the mapping
    handed back to each of them (a tuple of `push_context` still works); OpenTelemetry's
    are the W3C headers of the current span, which its `push_started` continues."""
    assert NoOpObserver().push_context_headers() == {}
    assert otel.observer.push_context_headers() == {}  # no span is current
    one, two = Carrier({"a": "1", "b": "1"}), Carrier({"b": "2"})
    both = Observers(one, two, NoOpObserver())
    assert both.push_context_headers() == {"a": "1", "b": "2"}
    carried = both.push_context_headers()
    both.push_started(carried, "t", "http://127.0.0.1:1").finished("delivered")
    assert one.contexts == two.contexts == [carried]
    both.push_started(both.push_context(), "t", "http://127.0.0.1:1").finished("delivered")
    assert one.contexts[1] is None

    with otel.observer.tracer.start_as_current_span("writer") as writer:
        headers = Observers(otel.observer).push_context_headers()
    written = writer.get_span_context()
    trace_id, span_id = format(written.trace_id, "032x"), format(written.span_id, "016x")
    assert headers["traceparent"].split("-")[1:3] == [trace_id, span_id]
    Observers(otel.observer).push_started(headers, "t", "http://127.0.0.1:1").finished("delivered")
    otel.observer.push_started({}, "t", "http://127.0.0.1:1").finished("delivered")
    continued, fresh = otel.named("POST")
    assert continued.kind is SpanKind.CLIENT
    assert continued.parent is not None and continued.parent.span_id == int(span_id, 16)
    assert hex_trace(continued) == trace_id
    assert fresh.parent is None and hex_trace(fresh) != trace_id  # empty: a new trace


async def test_a_networked_backend_is_timed(harness: Harness, otel: Otel, tmp_path: Path) -> None:
    from a2a_sql import SqlBackend

    backend = SqlBackend(f"sqlite+aiosqlite:///{tmp_path / 'tasks.db'}")
    server = A2AServer(echo, card=make_card(), backend=backend, observer=otel.observer)
    async with harness.serve(server) as live:
        task = (await live.result("SendMessage", send_params("hello")))["task"]
        await live.result("GetTask", {"id": task["id"]})
        health = await server.check_health()
    assert health.ok, health
    assert {"store", "event_log", "push_configs"} <= set(health.checks)
    operations = {
        a["a2a.backend.operation"]
        for a, _ in otel.metrics()["a2a.server.backend.operation.duration"]
    }
    # The echo's task is created answered, with its three events, in one write.
    assert {"store.create_logged_many", "store.get"} <= operations


# --- health --------------------------------------------------------------------------------


async def test_health_and_its_route(harness: Harness) -> None:
    server = A2AServer(echo, card=make_card(push=True))
    down = await server.check_health()
    assert not down.ok and down.status == 503
    assert ("retry-after", "5") in down.headers
    assert down.checks["server"] == "not running"
    async with harness.serve(server, health_path="/healthz") as live:
        response = await live.client.get(live.url("/healthz"))
        assert response.status_code == 200
        assert response.json() == {
            "status": "ok",
            "checks": {
                "server": "ok",
                "push_queue": "ok",
                "store": "ok",
                "event_log": "ok",
                "push_configs": "ok",
            },
        }
        assert response.headers["content-type"].startswith("application/json")
        assert response.headers["cache-control"] == "no-store"
        assert "retry-after" not in response.headers


# --- free when unused -------------------------------------------------------------------------

UNOBSERVED = """
import asyncio, socket, sys
import httpx, uvicorn
from aiohttp import web
from a2a_aiohttp import add_routes
from a2a_core.server import A2AServer
from a2a_core.types import AgentCapabilities, AgentCard, AgentSkill
from a2a_starlette import A2AStarlette

CARD = AgentCard(
    name="A", description="a", supported_interfaces=[], version="1",
    capabilities=AgentCapabilities(streaming=True), default_input_modes=["text/plain"],
    default_output_modes=["text/plain"], skills=[AgentSkill(id="s", name="s", description="s", tags=[])],
)
SEND = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": {
    "messageId": "m", "role": "ROLE_USER", "parts": [{"text": "hi"}]}}}

async def echo(ctx):
    return ctx.text

async def calls(url):
    async with httpx.AsyncClient(headers={"A2A-Version": "1.0"}) as client:
        assert (await client.post(url + "/", json=SEND)).status_code == 200
        stream = dict(SEND, method="SendStreamingMessage")
        assert (await client.post(url + "/", json=stream)).status_code == 200

async def main():
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    server = A2AServer(echo, card=CARD, base_url=f"http://127.0.0.1:{sock.getsockname()[1]}")
    uv = uvicorn.Server(uvicorn.Config(A2AStarlette(server), log_level="warning"))
    task = asyncio.create_task(uv.serve(sockets=[sock]))
    while not uv.started:
        await asyncio.sleep(0.01)
    await calls(f"http://127.0.0.1:{sock.getsockname()[1]}")
    uv.should_exit = True
    await task
    app = web.Application()
    add_routes(app, A2AServer(echo, card=CARD, base_url="http://127.0.0.1"))
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    await calls(f"http://127.0.0.1:{port}")
    await runner.cleanup()
    print(sorted(m for m in sys.modules if m.split(".")[0] == "opentelemetry"))

asyncio.run(main())
"""


def test_no_observer_imports_no_opentelemetry() -> None:
    """Serving on both adapters without an observer, in a fresh interpreter, never imports
    ``opentelemetry`` (installed here: the test environment has the SDK). Not through the
    harness: FastAPI imports it by itself when it is installed."""
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-c", UNOBSERVED],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "[]"
