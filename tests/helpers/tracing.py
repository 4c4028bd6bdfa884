"""OpenTelemetry's SDK in memory, for the tests of trace continuation across a backend's
durable push queue (Redis, SQL): an `OpenTelemetryObserver` whose finished spans are kept,
and an incoming W3C ``traceparent`` to continue."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import anyio
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind

from a2a_core.otel import OpenTelemetryObserver

TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
PARENT_ID = "00f067aa0ba902b7"
#: The headers of a request that continues the trace ``TRACE_ID``.
TRACEPARENT = {"traceparent": f"00-{TRACE_ID}-{PARENT_ID}-01"}
#: The name of the agent spans of ``Tracing.observer``.
AGENT_SPAN = "invoke_agent Traced agent"


@dataclass
class Tracing:
    """An observer on an SDK tracer provider that keeps every finished span."""

    spans: InMemorySpanExporter
    observer: OpenTelemetryObserver

    def finished(self, name: str) -> list[ReadableSpan]:
        return [s for s in self.spans.get_finished_spans() if s.name == name]

    async def wait_for(
        self, name: str, count: int = 1, timeout: float = 15.0
    ) -> list[ReadableSpan]:
        """The finished spans called ``name``, once there are ``count`` of them."""
        with anyio.fail_after(timeout):
            while len(self.finished(name)) < count:
                await anyio.sleep(0.02)
        return self.finished(name)

    async def deliveries(self, count: int) -> list[ReadableSpan]:
        """The webhook deliveries' CLIENT spans, once there are ``count``."""
        spans = await self.wait_for("POST", count)
        assert {s.kind for s in spans} == {SpanKind.CLIENT}
        return spans


@contextmanager
def tracing() -> Iterator[Tracing]:
    spans = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(spans))
    observer = OpenTelemetryObserver(
        agent_name="Traced agent", tracer_provider=provider, log_correlation=False
    )
    try:
        yield Tracing(spans, observer)
    finally:
        provider.shutdown()


def hex_ids(span: ReadableSpan) -> tuple[str, str]:
    """A span's trace id and span id, in hex (as a ``traceparent`` shows them)."""
    return format(span.context.trace_id, "032x"), format(span.context.span_id, "016x")


def parent_of(traceparent: str | None) -> tuple[str, str]:
    """The trace id and span id a ``traceparent`` header names."""
    assert traceparent is not None, "the webhook got no traceparent"
    _, trace_id, span_id, _ = traceparent.split("-")
    return trace_id, span_id


def assert_continued(
    traceparents: list[str | None], deliveries: list[ReadableSpan], agent: ReadableSpan
) -> None:
    """Every webhook request continued the incoming trace from a delivery span, and every
    delivery span is a child of the agent's span (which continues the incoming trace)."""
    assert hex_ids(agent)[0] == TRACE_ID
    delivery_ids = {hex_ids(d)[1] for d in deliveries}
    assert traceparents
    for header in traceparents:
        trace_id, span_id = parent_of(header)
        assert trace_id == TRACE_ID
        assert span_id in delivery_ids
    for delivery in deliveries:
        assert hex_ids(delivery)[0] == TRACE_ID
        assert delivery.parent is not None
        assert delivery.parent.span_id == agent.context.span_id
