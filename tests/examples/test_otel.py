"""``--otel`` on an example, as a user runs it: the conformance agent in a subprocess on each
adapter, the console exporters chosen by ``OTEL_*`` variables, and SIGTERM.

The batch span processor and the metric reader are told to wait ten minutes before they
export, so whatever reaches stdout was flushed by the shutdown that SIGTERM started: the
test fails if the providers are not shut down before uvicorn re-raises the signal.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest

EXAMPLES = Path(__file__).parents[2] / "examples"
TRACE_ID = "0af7651916cd43dd8448eb211c80319c"
TRACEPARENT = f"00-{TRACE_ID}-b7ad6b7169203331-01"


class _Hook(BaseHTTPRequestHandler):
    received: list[dict[str, str]]

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length", "0")))
        self.received.append({k.lower(): v for k, v in self.headers.items()})
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def webhook() -> Iterator[tuple[str, list[dict[str, str]]]]:
    """A webhook receiver on 127.0.0.1: its URL and the headers of what it received."""
    received: list[dict[str, str]] = []
    handler = type("Hook", (_Hook,), {"received": received})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}/hook", received
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def json_documents(text: str) -> list[dict[str, Any]]:
    """The JSON objects printed among other lines (the console exporters indent theirs)."""
    decoder = json.JSONDecoder()
    found, at = [], text.find("{")
    while at != -1:
        try:
            document, end = decoder.raw_decode(text, at)
        except json.JSONDecodeError:
            at = text.find("{", at + 1)
            continue
        found.append(document)
        at = text.find("{", end)
    return found


@pytest.mark.parametrize("adapter", ["starlette", "aiohttp"])
def test_otel_console_export_is_flushed_on_sigterm(
    adapter: str, webhook: tuple[str, list[dict[str, str]]], tmp_path: Path
) -> None:
    hook_url, received = webhook
    port = free_port()
    env = {
        **os.environ,
        "OTEL_TRACES_EXPORTER": "console",
        "OTEL_METRICS_EXPORTER": "console",
        "OTEL_BSP_SCHEDULE_DELAY": "600000",
        "OTEL_METRIC_EXPORT_INTERVAL": "600000",
        "OTEL_SERVICE_NAME": "conformance-agent",
    }
    out, err = tmp_path / "stdout", tmp_path / "stderr"
    command = [sys.executable, str(EXAMPLES / "conformance.py"), "--adapter", adapter]
    command += ["--host", "127.0.0.1", "--port", str(port), "--otel"]
    with out.open("wb") as stdout, err.open("wb") as stderr:
        process = subprocess.Popen(command, stdout=stdout, stderr=stderr, env=env)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            assert process.poll() is None, err.read_text()
            assert time.monotonic() < deadline, "the example did not start"
            try:
                if httpx.get(base + "/.well-known/agent-card.json").status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.05)
        params = {
            "message": {"messageId": "tck-stream-001-o", "role": "ROLE_USER", "parts": []},
            "configuration": {"taskPushNotificationConfig": {"url": hook_url}},
        }
        params["message"]["parts"] = [{"text": "hi"}]
        body = {"jsonrpc": "2.0", "id": "s-1", "method": "SendStreamingMessage", "params": params}
        headers = {"A2A-Version": "1.0", "traceparent": TRACEPARENT}
        reply = httpx.post(base + "/", json=body, headers=headers, timeout=10)
        assert reply.status_code == 200
        events = reply.text.count("data: ") - 1  # every event after the task snapshot
        while len(received) < events:
            assert time.monotonic() < deadline, received
            time.sleep(0.02)
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert all(r["traceparent"].split("-")[1] == TRACE_ID for r in received)
    documents = json_documents(out.read_text())
    spans = {d["name"]: d for d in documents if "context" in d}
    call = spans["SendStreamingMessage"]
    assert call["context"]["trace_id"] == f"0x{TRACE_ID}"
    assert call["kind"] == "SpanKind.SERVER"
    agent = spans["invoke_agent Conformance agent"]
    assert agent["parent_id"] == call["context"]["span_id"]
    deliveries = [d for d in documents if d.get("name") == "POST"]
    assert len(deliveries) == events
    assert {d["parent_id"] for d in deliveries} == {agent["context"]["span_id"]}
    assert call["resource"]["attributes"]["service.name"] == "conformance-agent"
    metric_names = {
        metric["name"]
        for document in documents
        for resource in document.get("resource_metrics", [])
        for scope in resource["scope_metrics"]
        for metric in scope["metrics"]
    }
    assert {"rpc.server.call.duration", "a2a.server.push.deliveries"} <= metric_names
