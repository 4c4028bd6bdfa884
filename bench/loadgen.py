"""The Python load generator: keep-alive HTTP/1.1 requests and SSE stream clients.

``bench/run.py`` runs it in its own process, pinned to the core the server does not use:

    python bench/loadgen.py '{"mode": "requests", ...}'   # prints one JSON line of results

Modes:

- ``requests``: ``connections`` keep-alive connections each send one pre-built request,
  read the reply (Content-Length or chunked), and send the next, for ``duration`` seconds
  after ``warmup`` seconds; the result holds the count, the elapsed time, p50/p99 latency
  and the number of replies with an unexpected status. The fallback when wrk is absent.
- ``stream``: one client sends a streaming request and reads the SSE reply to its end,
  ``repeat`` times; events counted per stream, events/s over all streams.
- ``fanout``: a held task (``hold``), ``subscribers`` clients subscribe and read its first
  frame, then one request releases it and the agent streams ``chunks`` chunks to all of
  them; events/s is every frame every subscriber received after its first, over the time
  from the release to the last subscriber's end.

Requests are raw bytes on asyncio streams (uvloop when installed): an HTTP client library
would cost more CPU than the servers under test. Frames are counted by their ``data:``
field. Every loop is bounded by a deadline.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import sys
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from typing import Any, Final

_CRLF2 = b"\r\n\r\n"
_DATA = b"data:"
_LAST_CHUNK = b"\r\n0\r\n\r\n"


def build_request(
    method: str, path: str, port: int, headers: dict[str, str] | None = None, body: bytes = b""
) -> bytes:
    """An HTTP/1.1 keep-alive request as bytes."""
    lines = [f"{method} {path} HTTP/1.1", f"Host: 127.0.0.1:{port}"]
    for name, value in (headers or {}).items():
        lines.append(f"{name}: {value}")
    if body or method == "POST":
        lines.append(f"Content-Length: {len(body)}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body


@dataclass
class Response:
    status: int
    headers: bytes
    body: bytes


async def read_response(reader: asyncio.StreamReader) -> Response:
    """One non-streamed response (Content-Length, chunked, or none for 204/304)."""
    head = await reader.readuntil(_CRLF2)
    status = int(head[9:12])
    lower = head.lower()
    if status in (204, 304):
        return Response(status, head, b"")
    at = lower.find(b"\r\ncontent-length:")
    if at >= 0:
        end = lower.index(b"\r\n", at + 2)
        length = int(lower[at + 17 : end])
        return Response(status, head, await reader.readexactly(length))
    if b"\r\ntransfer-encoding: chunked" in lower:
        body = bytearray()
        while True:
            size = int((await reader.readuntil(b"\r\n"))[:-2].split(b";")[0], 16)
            chunk = await reader.readexactly(size + 2)
            if size == 0:
                break
            body += chunk[:-2]
        return Response(status, head, bytes(body))
    return Response(status, head, await reader.read())


def percentile(sorted_values: list[float], pct: float) -> float:
    if not sorted_values:
        return float("nan")
    index = min(len(sorted_values) - 1, max(0, round(pct / 100 * len(sorted_values)) - 1))
    return sorted_values[index]


# --- requests ----------------------------------------------------------------------------


@dataclass
class RequestsResult:
    requests: int = 0
    seconds: float = 0.0
    p50_ms: float = float("nan")
    p99_ms: float = float("nan")
    errors: int = 0


#: The messageId of the bench's request templates (``MESSAGE_ID`` in bench/run.py).
MESSAGE_MARKER: Final = b"m-0000000000"


def fresh_ids(request: bytes) -> Iterator[bytes]:
    """``request`` again and again, each time with a new messageId of the same length (its
    ``Content-Length`` holds), so that each one is new work for a server that deduplicates
    a message sent again; ``request`` itself when it holds no messageId (a card)."""
    cut = request.find(MESSAGE_MARKER)
    if cut < 0:
        yield from itertools.repeat(request)
        return
    head, tail = request[: cut + 2], request[cut + len(MESSAGE_MARKER) :]
    run = os.urandom(2).hex().encode()
    for n in itertools.count():
        yield head + run + b"%06d" % (n % 1_000_000) + tail


async def run_requests(spec: dict[str, Any]) -> RequestsResult:
    port = spec["port"]
    requests = fresh_ids(request_bytes(port, spec["request"]))
    expect = spec["expect_status"]
    connections = spec["connections"]
    warmup, duration = spec["warmup"], spec["duration"]
    start = time.perf_counter()
    measure_from = start + warmup
    stop = measure_from + duration
    latencies: list[float] = []
    errors = 0
    counted = 0

    async def worker() -> None:
        nonlocal errors, counted
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        try:
            while True:
                sent = time.perf_counter()
                if sent >= stop:
                    return
                writer.write(next(requests))
                response = await read_response(reader)
                done = time.perf_counter()
                if sent >= measure_from:
                    counted += 1
                    latencies.append(done - sent)
                    if response.status != expect:
                        errors += 1
        finally:
            writer.close()

    await asyncio.wait_for(
        asyncio.gather(*(worker() for _ in range(connections))), timeout=warmup + duration + 30
    )
    elapsed = time.perf_counter() - measure_from
    latencies.sort()
    return RequestsResult(
        requests=counted,
        seconds=elapsed,
        p50_ms=percentile(latencies, 50) * 1000,
        p99_ms=percentile(latencies, 99) * 1000,
        errors=errors,
    )


# --- streams -----------------------------------------------------------------------------


@dataclass
class StreamResult:
    events: int = 0
    seconds: float = 0.0
    durations_ms: list[float] = field(default_factory=list)
    errors: int = 0


async def open_stream(port: int, request: bytes) -> tuple[asyncio.StreamReader, Any, bytes]:
    """Send a streaming request; return the reader, the writer and the body bytes so far."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port, limit=1 << 20)
    writer.write(request)
    head = await reader.readuntil(_CRLF2)
    if head[9:12] != b"200" or b"text/event-stream" not in head.lower():
        writer.close()
        raise RuntimeError(f"not a stream: {head[:200]!r}")
    return reader, writer, b""


async def drain_stream(reader: asyncio.StreamReader, first: bytes = b"") -> int:
    """Read a chunked SSE body to its end; the number of ``data:`` fields in it."""
    count = first.count(_DATA)
    tail = first[-8:]
    while True:
        data = await reader.read(1 << 18)
        if not data:
            return count
        window = tail + data
        count += window.count(_DATA) - tail.count(_DATA)
        tail = window[-8:]
        if tail.endswith(_LAST_CHUNK):
            return count


async def read_first_frame(reader: asyncio.StreamReader) -> bytes:
    """Read until the first complete frame has arrived; the bytes read."""
    data = b""
    while b"\n\n" not in data and b"\r\n\r\n" not in data:
        more = await reader.read(1 << 16)
        if not more:
            raise RuntimeError("stream ended before its first frame")
        data += more
    return data


async def run_stream(spec: dict[str, Any]) -> StreamResult:
    port = spec["port"]
    requests = fresh_ids(request_bytes(port, spec["request"]))
    result = StreamResult()
    deadline = time.perf_counter() + spec["time_limit"]
    for index in range(spec["warmup"] + spec["repeat"]):
        if index >= spec["warmup"] + 1 and time.perf_counter() > deadline:
            break  # at least one measured stream; more only while time allows
        started = time.perf_counter()
        reader, writer, _ = await open_stream(port, next(requests))
        try:
            events = await asyncio.wait_for(drain_stream(reader), timeout=spec["stream_timeout"])
        finally:
            writer.close()
        elapsed = time.perf_counter() - started
        if index < spec["warmup"]:
            continue
        if events < spec["min_events"]:
            result.errors += 1
        result.events += events
        result.seconds += elapsed
        result.durations_ms.append(elapsed * 1000)
    return result


async def post(port: int, request: bytes) -> Response:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(request)
        return await read_response(reader)
    finally:
        writer.close()


async def _subscribe_one(
    port: int, request: bytes, sem: asyncio.Semaphore
) -> tuple[asyncio.StreamReader, Any, bytes]:
    """Open one subscription and read its first frame (the task snapshot)."""
    async with sem:
        reader, writer, _ = await open_stream(port, request)
        return reader, writer, await read_first_frame(reader)


async def _drain_after(reader: asyncio.StreamReader, first: bytes, ends: list[float]) -> int:
    """Read a subscription to its end; the frames after the first ones; note when it ended."""
    events = await drain_stream(reader, first)
    ends.append(time.perf_counter())
    return events - first.count(_DATA)


def request_bytes(port: int, template: dict[str, Any], **values: object) -> bytes:
    """Build a request from its template, with ``{name}`` replaced in its path and body."""
    path, body = template["path"], template.get("body", "")
    for name, value in values.items():
        path = path.replace("{" + name + "}", str(value))
        body = body.replace("{" + name + "}", str(value))
    return build_request(template["method"], path, port, template.get("headers"), body.encode())


def _task_id(body: bytes) -> str:
    doc = json.loads(body)
    if "id" in doc and "result" not in doc:
        return str(doc["id"])  # the bare endpoint's hold reply
    return str(doc["result"]["task"]["id"])


async def run_fanout(spec: dict[str, Any]) -> StreamResult:
    port = spec["port"]
    result = StreamResult()
    deadline = time.perf_counter() + spec["time_limit"]
    for index in range(spec["warmup"] + spec["repeat"]):
        if index >= spec["warmup"] + 1 and time.perf_counter() > deadline:
            break
        chunks = spec["warmup_chunks"] if index < spec["warmup"] else spec["chunks"]
        hold = await post(port, request_bytes(port, spec["hold"], n=chunks))
        if hold.status != 200:
            raise RuntimeError(f"hold failed: {hold.status} {hold.body[:200]!r}")
        task_id = _task_id(hold.body)
        subscribe = request_bytes(port, spec["subscribe"], id=task_id)
        sem = asyncio.Semaphore(64)  # a bounded connect rate, for the listen backlog
        streams = await asyncio.wait_for(
            asyncio.gather(
                *(_subscribe_one(port, subscribe, sem) for _ in range(spec["subscribers"]))
            ),
            timeout=spec["stream_timeout"],
        )
        ends: list[float] = []
        try:
            drains = [asyncio.ensure_future(_drain_after(r, f, ends)) for r, _, f in streams]
            released = time.perf_counter()
            reply = await post(port, request_bytes(port, spec["release"], id=task_id, n=chunks))
            if reply.status != 200:
                raise RuntimeError(f"release failed: {reply.status} {reply.body[:200]!r}")
            counts = await asyncio.wait_for(asyncio.gather(*drains), spec["stream_timeout"])
        finally:
            for _, writer, _ in streams:
                writer.close()
        if index < spec["warmup"]:
            continue
        result.events += sum(counts)
        result.seconds += max(ends) - released
        result.durations_ms.extend((end - released) * 1000 for end in ends)
        result.errors += sum(1 for c in counts if c < spec["min_events"])
    return result


def main() -> None:
    spec = json.loads(sys.argv[1])
    if spec.get("cpu") is not None and hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {spec["cpu"]})
    try:
        import uvloop

        runner: Any = uvloop.run
    except ImportError:  # pragma: no cover - uvloop is a bench dependency
        runner = asyncio.run
    modes = {"requests": run_requests, "stream": run_stream, "fanout": run_fanout}
    result = runner(modes[spec["mode"]](spec))
    print(json.dumps(asdict(result)))


if __name__ == "__main__":
    main()
