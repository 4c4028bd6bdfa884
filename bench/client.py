"""Our A2A client against the official SDK's, from one process, against one bare endpoint.

    uv run python bench/client.py [--duration 8] [--rounds 4] [--concurrency 16]
        [--events 100] [--scenarios send,get,stream] [--clients ours,sdk,httpx] [--markdown]
        [--wait-idle S]

The clients call the same endpoint, in one run, one after the other, in rounds that rotate
through them (a machine whose speed drifts drifts under all alike); the table gives the
median round. What is measured is the *client*: the endpoint does next to nothing.

**The endpoint** (``--serve PORT``, started by the run, one process on 127.0.0.1 pinned to
core 0) is not an A2A library: a raw ``asyncio.Protocol`` on uvloop (when installed) that
splits keep-alive HTTP/1.1 requests on ``Content-Length``, decodes only the JSON-RPC ``id``
and ``method`` of a POST (msgspec, the ``id`` kept as raw bytes) and writes pre-encoded
bytes with that id spliced in: a completed `Task` for ``SendMessage`` (as ``{"task": ...}``)
and ``GetTask``; for ``SendStreamingMessage`` an SSE stream (chunked, one HTTP chunk per
frame, ``id:`` and ``data:`` lines as our server writes them) of ``--events`` events: the
task submitted, artifact chunks, and a completed status update; the agent card at
``/.well-known/agent-card.json`` (v1.0, one JSON-RPC 1.0 interface, streaming). No framework,
no router, no per-request object: a request costs the server a few microseconds, so the
client's cost dominates the round trip. (uvicorn with a tiny ASGI app would cost the server
tens of microseconds per request and per stream frame, of the same order as what we measure.)

**The clients**, each connected once (the card read once), then driven from this process,
pinned to core 1, on one asyncio loop, with their default settings:

- ``ours``: ``A2AClient.connect(url)``; ``send("hello")``, ``get_task(id)``,
  ``stream("hello")`` (its events counted);
- ``sdk``: the official ``a2a-sdk``: the card read by ``A2ACardResolver``, then two
  ``BaseClient`` from ``ClientFactory(ClientConfig(...)).create(card)`` sharing one
  ``httpx.AsyncClient`` (the SDK picks blocking ``SendMessage`` or ``SendStreamingMessage``
  from ``ClientConfig.streaming``, so blocking sends need ``streaming=False``);
  ``send_message(SendMessageRequest(message=Message(...)))`` (its one result),
  ``get_task(GetTaskRequest(id=...))``, ``send_message`` on the streaming client;
- ``httpx``: the floor of any client on httpx: the same JSON-RPC calls built as dicts,
  posted with ``httpx.AsyncClient`` alone, the replies (each SSE frame's data) decoded into
  plain objects by msgspec, nothing checked or modelled.

Each scenario (``send``: blocking SendMessage with a short text; ``get``: GetTask;
``stream``: SendStreamingMessage of ``--events`` events, reported in events/s) is measured
with one caller (sequential awaits) and with ``--concurrency`` callers (tasks sharing the one
client): for ``--duration`` seconds per client, split into ``--rounds`` rounds, after
``--warmup`` seconds before the first. Reported per client: calls/s (events/s), p50 and p99
latency of a call (of a whole stream), and the client's CPU time per call (per event),
``time.process_time()`` of this process over the calls made: the number that says most
about a client, and that the other work on a shared machine disturbs least. Ratios: each
row's CPU per call over the SDK's (``CPU ÷sdk``), and its rate over every client's with as
many callers (``÷ours``, ``÷sdk``, ``÷httpx``).

Where a client's time goes: sample this process with py-spy (the endpoint is a child
process, not sampled), e.g. ``uv run --group bench py-spy record -r 500 -f raw -o out.txt --
python bench/client.py --clients ours --scenarios send --concurrency 1 --rounds 1``.

opentelemetry-api is installed in the dev environment (no provider configured): the SDK's
``@trace_class`` spans and our client's trace-context injection run as they would in an
application that has OpenTelemetry installed but not set up.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import datetime as dt
import gc
import itertools
import json
import os
import statistics
import sys
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any, Final, cast

import msgspec

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

import harness  # noqa: E402
import run as bench_run  # noqa: E402

SERVER_CPU, CLIENT_CPU = 0, 1
CARD_PATH: Final = "/.well-known/agent-card.json"
TEXT: Final = "hello"
TASK_ID: Final = "task-1"

# --- the endpoint ------------------------------------------------------------------------

_ID: Final = b"@ID@"
"""Where a reply's JSON-RPC id goes in its template."""


def _task(state: str) -> dict[str, Any]:
    return {
        "id": TASK_ID,
        "contextId": "ctx-1",
        "status": {"state": state, "timestamp": "2026-01-01T00:00:00Z"},
    }


def _completed_task() -> dict[str, Any]:
    """What an echo agent answers: the message in the history, the text as an artifact."""
    return {
        **_task("TASK_STATE_COMPLETED"),
        "artifacts": [{"artifactId": "art-1", "parts": [{"text": TEXT}]}],
        "history": [
            {
                "messageId": "m-1",
                "role": "ROLE_USER",
                "parts": [{"text": TEXT}],
                "taskId": TASK_ID,
                "contextId": "ctx-1",
            }
        ],
    }


def stream_events(count: int) -> list[dict[str, Any]]:
    """The ``count`` events (at least 2) of a stream: the task submitted, ``count - 2``
    artifact chunks, the task completed."""
    chunks = [
        {
            "artifactUpdate": {
                "taskId": TASK_ID,
                "contextId": "ctx-1",
                "artifact": {"artifactId": "art-1", "parts": [{"text": f"chunk {i}"}]},
                "append": i > 0,
                "lastChunk": i == count - 3,
            }
        }
        for i in range(count - 2)
    ]
    done = {
        "statusUpdate": {
            "taskId": TASK_ID,
            "contextId": "ctx-1",
            "status": {"state": "TASK_STATE_COMPLETED", "timestamp": "2026-01-01T00:00:01Z"},
        }
    }
    return [{"task": _task("TASK_STATE_SUBMITTED")}, *chunks, done]


def card_bytes(base_url: str) -> bytes:
    return json.dumps(
        {
            "name": "Bench",
            "description": "A fixed endpoint for the client benchmark.",
            "supportedInterfaces": [
                {"url": base_url, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
            ],
            "version": "1.0.0",
            "capabilities": {"streaming": True},
            "defaultInputModes": ["text/plain"],
            "defaultOutputModes": ["text/plain"],
            "skills": [{"id": "echo", "name": "Echo", "description": "Echoes.", "tags": ["echo"]}],
        },
        separators=(",", ":"),
    ).encode()


def _envelope(result: Any) -> bytes:
    """A JSON-RPC result whose id is the placeholder ``_ID`` (a JSON string; spliced raw)."""
    placeholder = _ID.decode()
    text = json.dumps(
        {"jsonrpc": "2.0", "id": placeholder, "result": result}, separators=(",", ":")
    )
    return text.encode().replace(b'"' + _ID + b'"', _ID)


class _Call(msgspec.Struct):
    method: str
    id: msgspec.Raw = msgspec.Raw(b"null")


class Replies:
    """The endpoint's pre-encoded replies; a reply is its template's pieces joined by the
    request's raw id (cached per id length: the chunk sizes and Content-Length depend on it)."""

    def __init__(self, base_url: str, events: int) -> None:
        card = card_bytes(base_url)
        self.card = (
            b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
            b"content-length: %d\r\n\r\n%b" % (len(card), card)
        )
        self._json = {
            "SendMessage": _envelope({"task": _completed_task()}),
            "GetTask": _envelope(_completed_task()),
        }
        self._frames = [
            b"id: %d\ndata: %b\n\n" % (i, _envelope(event))
            for i, event in enumerate(stream_events(events))
        ]
        self._error = _envelope(None).replace(
            b'"result":null', b'"error":{"code":-32601,"message":"Method not found"}'
        )
        self._cache: dict[tuple[str, int], list[bytes]] = {}
        self._decode = msgspec.json.Decoder(_Call).decode

    def answer(self, body: bytes) -> bytes:
        try:
            call = self._decode(body)
        except msgspec.DecodeError:
            return b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\n"
        raw_id = bytes(call.id)
        key = (call.method, len(raw_id))
        pieces = self._cache.get(key)
        if pieces is None:
            pieces = self._cache[key] = self._template(call.method, len(raw_id))
        return raw_id.join(pieces)

    def _template(self, method: str, id_length: int) -> list[bytes]:
        if method == "SendStreamingMessage":
            head = (
                b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
                b"cache-control: no-cache\r\ntransfer-encoding: chunked\r\n\r\n"
            )
            chunks = [
                b"%x\r\n%b\r\n" % (len(frame) - len(_ID) + id_length, frame)
                for frame in self._frames
            ]
            template = head + b"".join(chunks) + b"0\r\n\r\n"
        else:
            body = self._json.get(method, self._error)
            length = len(body) - len(_ID) + id_length
            template = (
                b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
                b"content-length: %d\r\n\r\n%b" % (length, body)
            )
        return template.split(_ID)


class EndpointProtocol(asyncio.Protocol):
    """Keep-alive HTTP/1.1 cut on ``Content-Length``: GET answers the card, POST a reply."""

    def __init__(self, replies: Replies) -> None:
        self.replies = replies
        self.buffer = bytearray()
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)  # uvloop's is not a subclass

    def data_received(self, data: bytes) -> None:
        buffer = self.buffer
        buffer += data
        while True:
            end = buffer.find(b"\r\n\r\n")
            if end < 0:
                return
            head = bytes(buffer[:end]).lower()
            at = head.find(b"\r\ncontent-length:")
            length = 0
            if at >= 0:
                stop = head.find(b"\r\n", at + 2)
                length = int(head[at + 17 : stop if stop >= 0 else None])
            total = end + 4 + length
            if len(buffer) < total:
                return
            body = bytes(buffer[end + 4 : total])
            del buffer[:total]
            transport = self.transport
            if transport is None:
                return
            if head.startswith(b"get "):
                transport.write(self.replies.card)
            else:
                transport.write(self.replies.answer(body))


def serve(port: int, events: int) -> None:
    """Run the endpoint on 127.0.0.1:``port`` until SIGTERM/SIGINT."""
    import signal

    with contextlib.suppress(ImportError):
        import uvloop

        asyncio.set_event_loop_policy(uvloop.EventLoopPolicy())

    async def main() -> None:
        replies = Replies(f"http://127.0.0.1:{port}", events)
        loop = asyncio.get_running_loop()
        stop = asyncio.Event()
        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(signum, stop.set)
        server = await loop.create_server(
            lambda: EndpointProtocol(replies), "127.0.0.1", port, backlog=1024
        )
        async with server:
            await stop.wait()

    asyncio.run(main())


# --- the clients -------------------------------------------------------------------------


def expect(condition: bool, what: object) -> None:
    """A client's answer as the endpoint sent it, or the run stops (before any load)."""
    if not condition:
        raise RuntimeError(f"unexpected answer: {what!r}")


class Driver:
    """One client, connected: a call per scenario; ``stream`` returns its event count."""

    key: str
    label: str

    async def send(self) -> None:
        raise NotImplementedError

    async def get(self) -> None:
        raise NotImplementedError

    async def stream(self) -> int:
        raise NotImplementedError

    async def check(self, events: int) -> None:
        """One call of each kind, their results checked (before any load)."""
        raise NotImplementedError

    async def aclose(self) -> None:
        raise NotImplementedError


class Ours(Driver):
    key = "ours"
    label = "`a2a_core.client.A2AClient`, `connect` then `send`, `get_task`, `stream`"

    def __init__(self, client: Any) -> None:
        self.client = client

    @classmethod
    async def connect(cls, url: str) -> Ours:
        from a2a_core.client import A2AClient

        return cls(await A2AClient.connect(url))

    async def send(self) -> None:
        await self.client.send(TEXT)

    async def get(self) -> None:
        await self.client.get_task(TASK_ID)

    async def stream(self) -> int:
        count = 0
        async for _ in self.client.stream(TEXT):
            count += 1
        return count

    async def check(self, events: int) -> None:
        from a2a_core.types import Task, TaskState

        task = await self.client.send(TEXT)
        expect(isinstance(task, Task) and task.status.state is TaskState.COMPLETED, task)
        expect(task.artifacts[0].parts[0].text == TEXT, task)
        got = await self.client.get_task(TASK_ID)
        expect(got.id == TASK_ID and got.status.state is TaskState.COMPLETED, got)
        received = [r async for r in self.client.stream(TEXT)]
        expect(len(received) == events and received[-1].last, received[-1])
        update = received[-1].event.status_update
        expect(update is not None and update.status.state is TaskState.COMPLETED, update)

    async def aclose(self) -> None:
        await self.client.aclose()


class Sdk(Driver):
    key = "sdk"
    label = "the official a2a-sdk, `BaseClient` from `ClientFactory`"

    def __init__(self, http: Any, blocking: Any, streaming: Any) -> None:
        self.http = http
        self.blocking = blocking
        self.streaming = streaming

    @classmethod
    async def connect(cls, url: str) -> Sdk:
        import httpx
        from a2a.client import A2ACardResolver, ClientConfig, ClientFactory

        http = httpx.AsyncClient()
        card = await A2ACardResolver(http, url).get_agent_card()
        blocking = ClientFactory(ClientConfig(streaming=False, httpx_client=http)).create(card)
        streaming = ClientFactory(ClientConfig(streaming=True, httpx_client=http)).create(card)
        return cls(http, blocking, streaming)

    @staticmethod
    def _request() -> Any:
        from a2a.types import Message, Part, Role, SendMessageRequest

        message = Message(
            message_id=str(uuid.uuid4()), role=Role.ROLE_USER, parts=[Part(text=TEXT)]
        )
        return SendMessageRequest(message=message)

    async def send(self) -> None:
        async for _ in self.blocking.send_message(self._request()):
            pass

    async def get(self) -> None:
        from a2a.types import GetTaskRequest

        await self.blocking.get_task(GetTaskRequest(id=TASK_ID))

    async def stream(self) -> int:
        count = 0
        async for _ in self.streaming.send_message(self._request()):
            count += 1
        return count

    async def check(self, events: int) -> None:
        from a2a.types import GetTaskRequest, TaskState

        replies = [r async for r in self.blocking.send_message(self._request())]
        expect(len(replies) == 1 and replies[0].HasField("task"), replies)
        task = replies[0].task
        expect(task.status.state == TaskState.TASK_STATE_COMPLETED, task)
        expect(task.artifacts[0].parts[0].text == TEXT, task)
        got = await self.blocking.get_task(GetTaskRequest(id=TASK_ID))
        expect(got.id == TASK_ID and got.status.state == TaskState.TASK_STATE_COMPLETED, got)
        received = [r async for r in self.streaming.send_message(self._request())]
        expect(len(received) == events, len(received))
        last = received[-1]
        expect(last.status_update.status.state == TaskState.TASK_STATE_COMPLETED, last)

    async def aclose(self) -> None:
        await self.blocking.close()
        await self.streaming.close()
        await self.http.aclose()


class Httpx(Driver):
    """The floor of any client on httpx: the same requests, built as plain dicts, their
    replies decoded by msgspec into plain objects (no model, no check beyond the result)."""

    key = "httpx"
    label = "httpx alone (the floor): the same calls, replies decoded into dicts by msgspec"

    def __init__(self, http: Any, url: str) -> None:
        self.http = http
        self.url = url
        self.ids = itertools.count(1)
        self.headers = {"content-type": "application/json", "a2a-version": "1.0"}
        self.stream_headers = {**self.headers, "accept": "text/event-stream"}

    @classmethod
    async def connect(cls, url: str) -> Httpx:
        import httpx

        http = httpx.AsyncClient()
        card = msgspec.json.decode((await http.get(url + CARD_PATH)).content)
        return cls(http, card["supportedInterfaces"][0]["url"])

    def _body(self, method: str, params: dict[str, Any]) -> bytes:
        call = {"jsonrpc": "2.0", "id": next(self.ids), "method": method, "params": params}
        return msgspec.json.encode(call)

    def _message(self) -> dict[str, Any]:
        message = {"messageId": uuid.uuid4().hex, "role": "ROLE_USER", "parts": [{"text": TEXT}]}
        return {"message": message}

    async def _call(self, method: str, params: dict[str, Any]) -> Any:
        body = self._body(method, params)
        response = await self.http.post(self.url, content=body, headers=self.headers)
        return msgspec.json.decode(response.content)["result"]

    async def send(self) -> None:
        await self._call("SendMessage", self._message())

    async def get(self) -> None:
        await self._call("GetTask", {"id": TASK_ID})

    async def _events(self) -> list[Any]:
        body = self._body("SendStreamingMessage", self._message())
        events = []
        buffer = b""
        async with self.http.stream(
            "POST", self.url, content=body, headers=self.stream_headers
        ) as response:
            async for chunk in response.aiter_bytes():
                *frames, buffer = (buffer + chunk).split(b"\n\n")
                for frame in frames:
                    data = frame[frame.index(b"data: ") + 6 :]
                    events.append(msgspec.json.decode(data)["result"])
        return events

    async def stream(self) -> int:
        return len(await self._events())

    async def check(self, events: int) -> None:
        result = await self._call("SendMessage", self._message())
        expect(result["task"]["status"]["state"] == "TASK_STATE_COMPLETED", result)
        result = await self._call("GetTask", {"id": TASK_ID})
        expect(result["status"]["state"] == "TASK_STATE_COMPLETED", result)
        received = await self._events()
        expect(len(received) == events, len(received))
        last = received[-1]
        expect(last["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED", last)

    async def aclose(self) -> None:
        await self.http.aclose()


DRIVERS: Final[dict[str, Callable[[str], Awaitable[Driver]]]] = {
    "ours": Ours.connect,
    "sdk": Sdk.connect,
    "httpx": Httpx.connect,
}
LABELS: Final = {"ours": Ours.label, "sdk": Sdk.label, "httpx": Httpx.label}


# --- measuring ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Scenario:
    key: str
    title: str
    unit: str
    """What the rate counts: req/s, or events/s for a stream."""


SCENARIOS: Final = (
    Scenario("send", "SendMessage (blocking), JSON-RPC v1.0", "req/s"),
    Scenario("get", "GetTask, JSON-RPC v1.0", "req/s"),
    Scenario("stream", "SendStreamingMessage, a stream of {events} events", "events/s"),
)


@dataclass
class Sample:
    """One round of one client in one cell (scenario x callers)."""

    calls: int = 0
    events: int = 0
    errors: int = 0
    seconds: float = 0.0
    cpu: float = 0.0
    latencies_ms: list[float] = field(default_factory=list)

    @property
    def rate(self) -> float:
        """Calls per second (events per second for a stream)."""
        return (self.events or self.calls) / self.seconds if self.seconds else 0.0

    @property
    def cpu_us(self) -> float:
        """Client CPU per call (per event for a stream), µs."""
        count = self.events or self.calls
        return self.cpu / count * 1e6 if count else 0.0


async def drive(driver: Driver, scenario: str, callers: int, seconds: float) -> Sample:
    """``callers`` tasks calling ``driver`` until ``seconds`` have passed, each call timed."""
    sample = Sample()
    latencies = sample.latencies_ms
    call: Callable[[], Awaitable[Any]] = {
        "send": driver.send,
        "get": driver.get,
        "stream": driver.stream,
    }[scenario]
    counting = scenario == "stream"
    clock = time.perf_counter
    deadline = clock() + seconds

    async def caller() -> None:
        while clock() < deadline:
            began = clock()
            try:
                result = await call()
            except Exception as exc:  # counted, and the first shown: a run never dies of one
                if not sample.errors:
                    print(f"   {driver.key} {scenario}: {exc!r}", file=sys.stderr, flush=True)
                sample.errors += 1
                continue
            latencies.append((clock() - began) * 1e3)
            sample.calls += 1
            if counting:
                sample.events += result

    gc.collect()  # the garbage of the cell before is not this one's to collect
    cpu, started = time.process_time(), clock()
    if callers == 1:
        await caller()
    else:
        async with asyncio.TaskGroup() as group:
            for _ in range(callers):
                group.create_task(caller())
    sample.seconds = clock() - started
    sample.cpu = time.process_time() - cpu
    return sample


@dataclass
class Row:
    """A client in a cell: the median of its rounds."""

    scenario: str
    callers: int
    client: str
    rate: float
    p50_ms: float | None
    p99_ms: float | None
    cpu_us: float
    calls: int
    errors: int
    round_rates: list[float]


def combine(scenario: str, callers: int, client: str, samples: list[Sample]) -> Row:
    done = [s for s in samples if s.calls]
    if not done:
        return Row(
            scenario, callers, client, 0.0, None, None, 0.0, 0, sum(s.errors for s in samples), []
        )
    return Row(
        scenario,
        callers,
        client,
        rate=statistics.median(s.rate for s in done),
        p50_ms=statistics.median(
            bench_run._percentile(sorted(s.latencies_ms), 50) or 0 for s in done
        ),
        p99_ms=statistics.median(
            bench_run._percentile(sorted(s.latencies_ms), 99) or 0 for s in done
        ),
        cpu_us=statistics.median(s.cpu_us for s in done),
        calls=sum(s.calls for s in done),
        errors=sum(s.errors for s in samples),
        round_rates=[s.rate for s in done],
    )


# --- output ------------------------------------------------------------------------------


@dataclass
class Run:
    started: str
    command: str
    settings: dict[str, Any]
    machine: dict[str, Any]
    load_before: tuple[float, float, float]
    load_after: tuple[float, float, float] = (0.0, 0.0, 0.0)
    seconds: float = 0.0
    rows: list[Row] = field(default_factory=list)


def _cpu(value: float) -> str:
    return f"{value:,.1f}" if value < 100 else f"{value:,.0f}"


def table(run: Run, scenario: Scenario, markdown: bool) -> list[str]:
    """One scenario: a row per client and number of callers, each row's rate divided by
    every client's with as many callers, and its CPU per call divided by the SDK's."""
    rows = [r for r in run.rows if r.scenario == scenario.key]
    if not rows:
        return []
    keys = list(dict.fromkeys(r.client for r in rows))
    per_call = "µs/event" if scenario.key == "stream" else "µs/call"
    lat = "stream p50 / p99 ms" if scenario.key == "stream" else "p50 / p99 ms"
    header = ["client", "callers", scenario.unit, lat, f"CPU {per_call}", "CPU ÷sdk"]
    header += [f"÷{k}" for k in keys]
    body = []
    for row in rows:
        peers = {r.client: r for r in rows if r.callers == row.callers}
        sdk = peers.get("sdk")
        rate = bench_run._fmt_rate(row.rate) + (f" ({row.errors} err)" if row.errors else "")
        cells = [
            row.client,
            str(row.callers),
            rate,
            f"{bench_run._fmt_ms(row.p50_ms)} / {bench_run._fmt_ms(row.p99_ms)}",
            _cpu(row.cpu_us),
            "·"
            if row.client == "sdk"
            else bench_run._ratio(row.cpu_us, sdk.cpu_us if sdk else None),
        ]
        cells += [
            "·"
            if k == row.client
            else bench_run._ratio(row.rate, peers[k].rate if k in peers else None)
            for k in keys
        ]
        body.append(cells)
    title = scenario.title.format(events=run.settings["events"])
    if markdown:
        lines = [
            f"**{title}**",
            "",
            "| " + " | ".join(header) + " |",
            "|" + "|".join("---" if i == 0 else "---:" for i in range(len(header))) + "|",
            *("| " + " | ".join(cells) + " |" for cells in body),
        ]
        return [*lines, ""]
    widths = [max(len(c[i]) for c in [header, *body]) for i in range(len(header))]
    lines = [title]
    for cells in [header, *body]:
        lines.append(
            "  ".join(
                c.ljust(widths[i]) if i == 0 else c.rjust(widths[i]) for i, c in enumerate(cells)
            )
        )
    return [*lines, ""]


def describe(run: Run) -> str:
    m = run.machine
    s = run.settings
    versions = ", ".join(f"{k} {v}" for k, v in m["versions"].items())
    pin = (
        f"endpoint on core {SERVER_CPU}, clients on core {CLIENT_CPU}"
        if s["pinned"]
        else "not pinned"
    )
    lines = [
        f"- When: {run.started}, {run.seconds / 60:.1f} minutes.",
        f"- Command: `{run.command}`",
        f"- Machine: {m['cpu']}, {m['cores']} cores, {m['memory_gib']} GiB, Linux {m['kernel']}, "
        f"CPython {m['python']}.",
        "- Load average (1/5/15 min) before: {}; after: {}.".format(
            "/".join(f"{x:.2f}" for x in run.load_before),
            "/".join(f"{x:.2f}" for x in run.load_after),
        ),
        f"- Pinning: {pin}; the endpoint on {s['endpoint_loop']}, the clients on asyncio.",
        f"- Each cell: {s['duration']} s per client in {s['rounds']} rounds rotating through the "
        f"clients, {s['warmup']} s warm-up before the first; rates, latencies and CPU are the "
        f"median round. Callers: 1 and {s['concurrency']}.",
        f"- Versions: {versions}.",
        *(f"- `{key}`: {LABELS[key]}." for key in dict.fromkeys(r.client for r in run.rows)),
    ]
    return "\n".join(lines)


def render(run: Run, markdown: bool) -> str:
    lines: list[str] = []
    for scenario in SCENARIOS:
        lines += table(run, scenario, markdown)
    return "\n".join(lines)


VERSIONS: Final = (
    "a2aserve-core",
    "a2a-sdk",
    "httpx",
    "httpcore",
    "h11",
    "anyio",
    "msgspec",
    "protobuf",
    "opentelemetry-api",
    "uvloop",
)


def machine() -> dict[str, Any]:
    info = bench_run.machine()
    versions = {}
    for name in VERSIONS:
        with contextlib.suppress(metadata.PackageNotFoundError):
            versions[name] = metadata.version(name)
    info["versions"] = versions
    info.pop("wrk", None)
    return info


# --- the run -----------------------------------------------------------------------------


async def measure(url: str, args: argparse.Namespace, run: Run) -> None:
    drivers: list[Driver] = []
    try:
        for key in args.client_keys:
            driver = await DRIVERS[key](url)
            drivers.append(driver)
            await driver.check(args.events)
        rounds = max(1, args.rounds)
        per_round = args.duration / rounds
        for scenario in [s for s in SCENARIOS if s.key in args.scenario_keys]:
            for callers in dict.fromkeys((1, args.concurrency)):
                print(f"== {scenario.key}, {callers} caller(s)", flush=True)
                samples: dict[str, list[Sample]] = {d.key: [] for d in drivers}
                for index in range(rounds):
                    shift = index % len(drivers)
                    for driver in drivers[shift:] + drivers[:shift]:
                        if index == 0 and args.warmup:
                            await drive(driver, scenario.key, callers, args.warmup)
                        samples[driver.key].append(
                            await drive(driver, scenario.key, callers, per_round)
                        )
                for driver in drivers:
                    row = combine(scenario.key, callers, driver.key, samples[driver.key])
                    run.rows.append(row)
                    print(
                        f"   {driver.key:5} {bench_run._fmt_rate(row.rate):>9} {scenario.unit:8} "
                        f"p50 {bench_run._fmt_ms(row.p50_ms):>6} ms  "
                        f"p99 {bench_run._fmt_ms(row.p99_ms):>6} ms  "
                        f"CPU {_cpu(row.cpu_us):>7} µs"
                        f"{'  errors ' + str(row.errors) if row.errors else ''}",
                        flush=True,
                    )
    finally:
        for driver in drivers:
            await driver.aclose()


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--duration", type=float, default=8, help="seconds per client and cell")
    parser.add_argument("--rounds", type=int, default=4, help="rounds the duration is split into")
    parser.add_argument("--warmup", type=float, default=0.5, help="seconds before the first round")
    parser.add_argument("--concurrency", type=int, default=16, help="concurrent callers")
    parser.add_argument("--events", type=int, default=100, help="events per stream (>= 2)")
    parser.add_argument("--scenarios", default="send,get,stream", help="send,get,stream")
    parser.add_argument("--clients", default="ours,sdk,httpx", help="ours,sdk,httpx")
    parser.add_argument("--markdown", action="store_true", help="Markdown tables")
    parser.add_argument("--no-pin", action="store_true", help="do not pin to cores")
    parser.add_argument("--wait-idle", type=float, default=0, metavar="S",
                        help="wait up to S s for a 1-minute load average under 0.5")  # fmt: skip
    parser.add_argument("--json", type=Path, default=BENCH / "results" / "client.json")
    parser.add_argument("--serve", type=int, metavar="PORT", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    args.scenario_keys = args.scenarios.split(",")
    args.client_keys = args.clients.split(",")
    if args.events < 2:
        parser.error("--events must be at least 2")
    return args


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    if args.serve is not None:
        serve(args.serve, args.events)
        return
    pin = bench_run.can_pin() and not args.no_pin
    load = bench_run.wait_for_idle(args.wait_idle, 0.5) if args.wait_idle else os.getloadavg()
    started = time.monotonic()
    try:
        import uvloop  # noqa: F401

        endpoint_loop = "uvloop"
    except ImportError:
        endpoint_loop = "asyncio"
    run = Run(
        started=dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        command=" ".join(["uv run python bench/client.py", *sys.argv[1:]]).strip(),
        settings={
            "duration": args.duration,
            "rounds": args.rounds,
            "warmup": args.warmup,
            "concurrency": args.concurrency,
            "events": args.events,
            "pinned": pin,
            "endpoint_loop": endpoint_loop,
        },
        machine=machine(),
        load_before=load,
    )
    port = harness.free_port()
    command = [sys.executable, __file__, "--serve", str(port), "--events", str(args.events)]
    server = harness.ServerProcess(
        (harness.pinned(SERVER_CPU) if pin else []) + command,
        port,
        log_prefix="a2a-client-bench-",
        name="the endpoint",
    )
    try:
        if pin:
            os.sched_setaffinity(0, {CLIENT_CPU})
        asyncio.run(measure(server.url, args, run))
    finally:
        server.stop()
    run.load_after = os.getloadavg()
    run.seconds = time.monotonic() - started
    print()
    print(describe(run))
    print()
    print(render(run, markdown=args.markdown))
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(asdict(run), indent=1))


if __name__ == "__main__":
    main()
