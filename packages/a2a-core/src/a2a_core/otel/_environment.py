"""``configure_from_environment()``: the OpenTelemetry SDK set up from the standard
``OTEL_*`` environment variables (what ``a2aserve serve --otel`` does; needs
``opentelemetry-sdk``, not a dependency of ``a2aserve-core[otel]``, which needs the API only).

- ``OTEL_TRACES_EXPORTER`` and ``OTEL_METRICS_EXPORTER``: ``otlp`` (the standard default;
  needs ``opentelemetry-exporter-otlp``, over ``OTEL_EXPORTER_OTLP_PROTOCOL`` ``grpc`` or
  ``http/protobuf``), ``console`` (stdout, one JSON document per span or export) or
  ``none``; several separated by commas.
- The SDK reads the rest itself: ``OTEL_SERVICE_NAME`` and ``OTEL_RESOURCE_ATTRIBUTES``,
  ``OTEL_TRACES_SAMPLER``, ``OTEL_BSP_*`` (the batch span processor),
  ``OTEL_METRIC_EXPORT_INTERVAL``, ``OTEL_EXPORTER_OTLP_ENDPOINT`` and its kin, and
  ``OTEL_PROPAGATORS`` (W3C trace context and baggage by default).

The providers become the global ones, so an agent's own instrumented clients (an agent
calling another agent) use them too.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

__all__ = ["LOG_FORMAT", "OpenTelemetrySetupError", "install_providers"]

LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s [trace=%(trace_id)s span=%(span_id)s] %(message)s"


class OpenTelemetrySetupError(RuntimeError):
    """The SDK or an exporter the environment asks for is not installed, or an exporter is
    unknown: the message says which, and what to install or set."""


def _names(variable: str) -> list[str]:
    value = os.environ.get(variable, "otlp").strip().lower()
    return [name.strip() for name in value.split(",") if name.strip() and name.strip() != "none"]


def _otlp(kind: str) -> Any:
    """The OTLP exporter class of ``kind`` (``trace`` or ``metric``)."""
    protocol = os.environ.get("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc").strip().lower()
    module = "grpc" if protocol == "grpc" else "http"
    name = "OTLPSpanExporter" if kind == "trace" else "OTLPMetricExporter"
    path = f"opentelemetry.exporter.otlp.proto.{module}.{kind}_exporter"
    try:
        return getattr(__import__(path, fromlist=[name]), name)
    except ImportError:
        raise OpenTelemetrySetupError(
            f"the otlp exporter ({protocol}) is not installed: "
            "pip install opentelemetry-exporter-otlp, or set OTEL_TRACES_EXPORTER and "
            "OTEL_METRICS_EXPORTER to console or none"
        ) from None


def install_providers() -> Callable[[], None]:
    """Install the SDK's providers from the environment as the global ones; returns what
    flushes and shuts them down. Raises `OpenTelemetrySetupError`."""
    try:
        from opentelemetry import metrics, trace
        from opentelemetry.sdk.metrics import MeterProvider
        from opentelemetry.sdk.metrics.export import (
            ConsoleMetricExporter,
            PeriodicExportingMetricReader,
        )
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor, ConsoleSpanExporter
    except ImportError:
        raise OpenTelemetrySetupError(
            "the OpenTelemetry SDK is not installed: "
            "pip install opentelemetry-api opentelemetry-sdk"
        ) from None

    resource = Resource.create()  # OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES
    tracer_provider = TracerProvider(resource=resource)
    for name in _names("OTEL_TRACES_EXPORTER"):
        if name == "console":
            tracer_provider.add_span_processor(BatchSpanProcessor(ConsoleSpanExporter()))
        elif name == "otlp":
            tracer_provider.add_span_processor(BatchSpanProcessor(_otlp("trace")()))
        else:
            raise OpenTelemetrySetupError(f"unknown OTEL_TRACES_EXPORTER {name!r}")
    readers = []
    for name in _names("OTEL_METRICS_EXPORTER"):
        if name == "console":
            readers.append(PeriodicExportingMetricReader(ConsoleMetricExporter()))
        elif name == "otlp":
            readers.append(PeriodicExportingMetricReader(_otlp("metric")()))
        else:
            raise OpenTelemetrySetupError(f"unknown OTEL_METRICS_EXPORTER {name!r}")
    meter_provider = MeterProvider(resource=resource, metric_readers=readers)
    trace.set_tracer_provider(tracer_provider)
    metrics.set_meter_provider(meter_provider)

    def shutdown() -> None:
        # Shutting down flushes: the batch processor exports what it holds, the readers
        # collect and export once more.
        tracer_provider.shutdown()
        meter_provider.shutdown()

    return shutdown
