"""The servers the benchmarks drive, one per process: ours, the official SDK's, bare ones.

    uv run python bench/servers.py KIND --port N [--stack h11|httptools] [--cpu 0]

Kinds:

- ``a2aserve-starlette``: :class:`A2AServer` behind ``A2AStarlette`` (plain ASGI) on uvicorn;
- ``a2aserve-aiohttp``: :class:`A2AServer` behind ``add_routes`` on aiohttp;
- ``sdk``: the official ``a2a-sdk`` server (its JSON-RPC, REST and card routes on one
  Starlette app, ``DefaultRequestHandler``, ``InMemoryTaskStore``) on uvicorn;
- ``bare-starlette`` / ``bare-aiohttp``: the ceiling. A framework endpoint per scenario that
  decodes the same request body with msgspec and answers a fixed, pre-encoded result; the
  same card bytes (with ETag, 304 on ``If-None-Match``); SSE endpoints that write frames of
  the same shape, one stream or fanned out to many subscribers.

Every A2A server runs the same agent (see :class:`BenchAgent` and :class:`SdkExecutor`):

- ``stream N``: one artifact in N chunks (``append``/``lastChunk``), then completed;
- ``hold N``: working, then waits until released, then streams N chunks and completes
  (the fan-out scenario subscribes its clients while the task is held);
- ``release TASK_ID``: releases a held task; answered with a message;
- anything else: echo (a completed task with the text as its artifact).

``--stack`` picks uvicorn's HTTP parser and event loop: ``h11`` (pure Python h11 on the
asyncio loop, what ``pip install uvicorn`` gives) or ``httptools`` (httptools on uvloop,
what ``uvicorn[standard]`` picks). aiohttp always uses its own C parser on the asyncio loop.
``--cpu`` pins the process to one core. The server listens on 127.0.0.1 only.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import os
import resource
import uuid
from collections.abc import AsyncIterator
from typing import Any

import msgspec

from a2a_core.protocol import ProtocolOptions

HOST = "127.0.0.1"
KINDS = (
    "a2aserve-starlette",
    "a2aserve-aiohttp",
    "a2aserve-bridged",
    "sdk",
    "bare-starlette",
    "bare-aiohttp",
)
STACKS = ("h11", "httptools")
CARD_PATH = "/.well-known/agent-card.json"


def raise_fd_limit() -> None:
    """Allow as many open files as the hard limit does (idle-subscriber benchmarks)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def chunk_text(i: int) -> str:
    """The text of chunk ``i`` of a streamed artifact (the same for every server)."""
    return f"chunk {i}"


# --- ours --------------------------------------------------------------------------------


def our_server(base_url: str, backend: Any = None, agent: Any = None) -> Any:
    """The A2AServer of the benchmarks (in-memory store and event log, default bounds,
    unless a ``backend`` is given: ``bench/sql_bench.py``), running the benchmarks' agent,
    or ``agent`` (the SDK's executor through its bridge: ``a2aserve-bridged``)."""
    import anyio

    from a2a_core.server import A2AServer, TaskContext

    try:
        from a2a_core.server._messages import new_id
    except ImportError:  # a --baseline checkout from before the runtime's modules were private
        try:
            from a2a_core.server.messages import new_id  # type: ignore[no-redef]
        except ImportError:  # ... or from before server.messages existed
            from a2a_core.server.agent import new_id  # type: ignore[attr-defined,no-redef]
    from a2a_core.types import (
        AgentCapabilities,
        AgentCard,
        AgentSkill,
        Message,
        Part,
        Role,
    )

    gates: dict[str, anyio.Event] = {}

    async def stream(ctx: TaskContext, count: int) -> None:
        artifact_id = await ctx.artifact(chunk_text(0), name="story", last_chunk=count == 1)
        for i in range(1, count):
            await ctx.artifact(
                chunk_text(i), artifact_id=artifact_id, append=True, last_chunk=i == count - 1
            )
        await ctx.complete()

    async def native(ctx: TaskContext) -> Any:
        command, _, rest = ctx.text.partition(" ")
        if command == "stream":
            await stream(ctx, int(rest))
            return None
        if command == "hold":
            await ctx.working()
            gate = gates.setdefault(ctx.task_id, anyio.Event())
            await gate.wait()
            gates.pop(ctx.task_id, None)
            await stream(ctx, int(rest))
            return None
        if command == "release":
            gates.setdefault(rest, anyio.Event()).set()
            return Message(message_id=new_id(), role=Role.AGENT, parts=[Part(text="released")])
        return ctx.text

    if agent is None:
        agent = native
    card = AgentCard(
        name="Bench",
        description="Echoes the text it receives; streams chunks on request.",
        supported_interfaces=[],
        version="1.0.0",
        capabilities=AgentCapabilities(streaming=True),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[
            AgentSkill(
                id="echo",
                name="Echo",
                description="Echoes the message text.",
                tags=["echo"],
                examples=["hello"],
            )
        ],
    )
    # A fixed Last-Modified, so that every process serves the very same card bytes.
    modified = dt.datetime(2025, 1, 1, tzinfo=dt.UTC)
    options: dict[str, Any] = {} if backend is None else {"backend": backend}
    observer = bench_observer(os.environ.get(OBSERVER_ENV, "none"))
    if observer is not None:  # none: also what a --baseline checkout (no such option) runs
        options["observer"] = observer
    try:
        protocol = ProtocolOptions(last_modified=modified)
    except TypeError:  # a --baseline checkout from before ProtocolOptions(last_modified=)
        return A2AServer(agent, card=card, base_url=base_url, last_modified=modified, **options)
    try:
        from a2a_core.server import StreamOptions

        # Every subscriber of the fan-out and the memory runs comes from this one machine:
        # no limit per client address (the bare servers have none either).
        options["streams"] = StreamOptions(max_streams_per_peer=None)
    except (ImportError, TypeError):  # a --baseline checkout from before the limit
        pass
    return A2AServer(agent, card=card, base_url=base_url, protocol=protocol, **options)


#: Which observer `our_server` runs with (`bench_observer`): ``none``, ``noop`` or ``otel``.
OBSERVER_ENV = "A2A_BENCH_OBSERVER"


def bench_observer(mode: str) -> Any:
    """The observer of a benchmark mode: ``none`` (no observer at all), ``noop`` (the seam
    with an observer that does nothing), ``otel`` (`OpenTelemetryObserver` on the SDK: a
    ``BatchSpanProcessor`` exporting to nowhere, and a ``MeterProvider`` whose periodic
    reader exports to nowhere: the SDK's full cost, none of an exporter's I/O) or
    ``otel-sampled`` (the same, recording one trace in ten); ``otel-floor``: the same SDK
    set-up under the least instrumentation could do (`_floor_observer`)."""
    if mode == "none":
        return None
    if mode == "noop":
        from a2a_core.server.observe import NoOpObserver

        return NoOpObserver()
    if mode not in ("otel", "otel-sampled", "otel-floor"):
        raise SystemExit(f"unknown observer mode {mode!r}")
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import (
        MetricExporter,
        MetricExportResult,
        PeriodicExportingMetricReader,
    )
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult

    from a2a_core.otel import OpenTelemetryObserver

    class NoSpans(SpanExporter):
        def export(self, spans: Any) -> SpanExportResult:
            return SpanExportResult.SUCCESS

    class NoMetrics(MetricExporter):
        def export(self, metrics_data: Any, timeout_millis: float = 0, **_: Any) -> Any:
            return MetricExportResult.SUCCESS

        def force_flush(self, timeout_millis: float = 0) -> bool:
            return True

        def shutdown(self, timeout_millis: float = 0, **_: Any) -> None:
            pass

    from opentelemetry.sdk.trace.sampling import ParentBased, TraceIdRatioBased

    # otel-sampled: a tenth of the traces recorded, as a busy deployment would sample.
    sampler = ParentBased(TraceIdRatioBased(0.1)) if mode == "otel-sampled" else None
    tracer_provider = TracerProvider(sampler=sampler)
    tracer_provider.add_span_processor(BatchSpanProcessor(NoSpans()))
    reader = PeriodicExportingMetricReader(NoMetrics(), export_interval_millis=10_000)
    meter_provider = MeterProvider(metric_readers=[reader])
    if mode == "otel-floor":
        return _floor_observer(tracer_provider, meter_provider)
    return OpenTelemetryObserver(
        agent_name="Bench", tracer_provider=tracer_provider, meter_provider=meter_provider
    )


def _floor_observer(tracer_provider: Any, meter_provider: Any) -> Any:
    """``otel-floor``: the least any OpenTelemetry instrumentation of the issue's
    telemetry asks of the SDK per blocking call: two spans (the call's and the agent's) with
    no attributes and no events, nothing made current, and one measurement of the call's
    duration. Not a usable observer (no attributes, no parentage): the SDK's own floor,
    measured in the same run as `OpenTelemetryObserver`."""
    import time

    from a2a_core.server.observe import NoOpObservation, NoOpObserver

    tracer = tracer_provider.get_tracer("floor")
    duration = meter_provider.get_meter("floor").create_histogram("d", "s")
    attributes = {"a2a.operation": "SendMessage", "a2a.binding": "jsonrpc", "a2a.outcome": "ok"}

    class Execution(NoOpObservation):
        __slots__ = ("span",)

        def __init__(self) -> None:
            self.span = tracer.start_span("invoke_agent")

        def ended(self, task: Any, error: Any) -> None:
            self.span.end()

    class CallSpan(NoOpObservation):
        __slots__ = ("span", "start", "streaming")

        def __init__(self, streaming: bool) -> None:
            self.span = tracer.start_span("SendMessage")
            self.start = time.perf_counter()
            self.streaming = streaming

        def execution_started(self, invocation: Any) -> Any:
            return Execution()

        def finished(self, error: Any = None) -> None:
            if error is not None or not self.streaming:  # a stream's ends when it closes
                self.end()

        def stream_closed(self, error: Any) -> None:
            self.end()

        def end(self) -> None:
            self.span.end()
            duration.record(time.perf_counter() - self.start, attributes)

    class Floor(NoOpObserver):
        def call_started(self, request: Any, call: Any) -> Any:
            return CallSpan(call.streaming)

    return Floor()


def card_response(base_url: str) -> tuple[bytes, list[tuple[str, str]]]:
    """Our card's bytes and headers, for the bare endpoints to serve the very same."""
    from a2a_core.http import HttpRequest, HttpResponse

    server = our_server(base_url)
    reply = server.protocol.receive_request(HttpRequest("GET", CARD_PATH))
    assert isinstance(reply, HttpResponse)
    assert reply.status == 200
    return reply.body, list(reply.headers)


def run_uvicorn(app: Any, port: int, stack: str) -> None:
    import uvicorn

    loop = "uvloop" if stack == "httptools" else "asyncio"
    uvicorn.run(
        app,
        host=HOST,
        port=port,
        http=stack,
        loop=loop,
        log_level="warning",
        access_log=False,
        lifespan="on",
        backlog=4096,
        timeout_keep_alive=30,
    )


def run_aiohttp(app: Any, port: int) -> None:
    from aiohttp import web

    web.run_app(app, host=HOST, port=port, print=None, access_log=None, backlog=4096)


def serve_a2a_starlette(port: int, stack: str) -> None:
    from a2a_starlette import A2AStarlette

    run_uvicorn(A2AStarlette(our_server(f"http://{HOST}:{port}")), port, stack)


def serve_a2a_bridged(port: int, stack: str) -> None:
    """Our Starlette adapter serving the SDK's executor (`sdk_executor`) through
    ``a2a_bridges.sdk.from_executor``: an SDK user's agent, moved over unchanged."""
    from a2a_bridges.sdk import from_executor
    from a2a_starlette import A2AStarlette

    server = our_server(f"http://{HOST}:{port}", agent=from_executor(sdk_executor()))
    run_uvicorn(A2AStarlette(server), port, stack)


def serve_a2a_aiohttp(port: int) -> None:
    from aiohttp import web

    from a2a_aiohttp import add_routes

    app = web.Application()
    add_routes(app, our_server(f"http://{HOST}:{port}"))
    run_aiohttp(app, port)


# --- the official SDK --------------------------------------------------------------------


def sdk_app(base_url: str, task_store: Any = None) -> Any:
    """The official SDK's server: JSON-RPC (v1.0 and v0.3), REST and the card, one app
    (its ``InMemoryTaskStore`` unless a ``task_store`` is given: ``bench/sql_bench.py``)."""
    from a2a.server.routes import (
        create_agent_card_routes,
        create_jsonrpc_routes,
        create_rest_routes,
    )
    from a2a.types import AgentInterface
    from starlette.applications import Starlette

    interfaces = [
        AgentInterface(url=f"{base_url}/", protocol_binding="JSONRPC", protocol_version="1.0"),
        AgentInterface(url=base_url, protocol_binding="HTTP+JSON", protocol_version="1.0"),
    ]
    handler, card = sdk_request_handler(interfaces, task_store)
    routes = [
        *create_agent_card_routes(card, cache_control="public, max-age=300"),
        *create_jsonrpc_routes(handler, rpc_url="/", enable_v0_3_compat=True),
        *create_rest_routes(handler, enable_v0_3_compat=True),
    ]
    return Starlette(routes=routes)


def sdk_executor() -> Any:
    """The benchmarks' agent on the SDK's executor API (`SdkExecutor`): what the SDK's
    handler runs, and what ``a2aserve-bridged`` runs through our bridge."""
    from a2a.helpers.proto_helpers import new_task_from_user_message
    from a2a.server.agent_execution import AgentExecutor, RequestContext
    from a2a.server.events import EventQueue
    from a2a.server.tasks import TaskUpdater
    from a2a.types import Message, Part, Role

    gates: dict[str, asyncio.Event] = {}

    class SdkExecutor(AgentExecutor):
        """The same agent as ours, on the SDK's executor API."""

        async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
            text = context.get_user_input()
            command, _, rest = text.partition(" ")
            if command == "release":
                gates.setdefault(rest, asyncio.Event()).set()
                await event_queue.enqueue_event(
                    Message(
                        message_id=str(uuid.uuid4()),
                        role=Role.ROLE_AGENT,
                        parts=[Part(text="released")],
                        context_id=context.context_id or "",
                    )
                )
                return
            task = context.current_task
            if task is None:
                assert context.message is not None
                task = new_task_from_user_message(context.message)
                await event_queue.enqueue_event(task)
            updater = TaskUpdater(event_queue, task.id, task.context_id)
            if command in ("stream", "hold"):
                if command == "hold":
                    await updater.start_work()
                    gate = gates.setdefault(task.id, asyncio.Event())
                    await gate.wait()
                    gates.pop(task.id, None)
                count = int(rest)
                artifact_id = str(uuid.uuid4())
                for i in range(count):
                    await updater.add_artifact(
                        [Part(text=chunk_text(i))],
                        artifact_id=artifact_id,
                        name="story" if i == 0 else None,
                        append=i > 0,
                        last_chunk=i == count - 1,
                    )
                await updater.complete()
                return
            await updater.add_artifact([Part(text=text)])
            await updater.complete()

        async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
            raise NotImplementedError

    return SdkExecutor()


def sdk_request_handler(interfaces: list[Any], task_store: Any = None) -> tuple[Any, Any]:
    """The official SDK's ``DefaultRequestHandler`` running the benchmarks' agent
    (`sdk_executor`) on its ``InMemoryTaskStore`` (unless a ``task_store`` is given),
    and its card listing ``interfaces``: what its HTTP routes (`sdk_app`) and its gRPC
    servicer (``bench/grpc_servers.py``) serve."""
    from a2a.server.request_handlers import DefaultRequestHandler
    from a2a.server.tasks import InMemoryTaskStore
    from a2a.types import AgentCapabilities, AgentCard, AgentSkill

    card = AgentCard(
        name="Bench",
        description="Echoes the text it receives; streams chunks on request.",
        supported_interfaces=interfaces,
        version="1.0.0",
        capabilities=AgentCapabilities(streaming=True),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[
            AgentSkill(
                id="echo",
                name="Echo",
                description="Echoes the message text.",
                tags=["echo"],
                examples=["hello"],
            )
        ],
    )
    handler = DefaultRequestHandler(
        agent_executor=sdk_executor(),
        task_store=InMemoryTaskStore() if task_store is None else task_store,
        agent_card=card,
    )
    return handler, card


def serve_sdk(port: int, stack: str) -> None:
    run_uvicorn(sdk_app(f"http://{HOST}:{port}"), port, stack)


# --- the bare endpoints (the ceiling) ----------------------------------------------------


class _Part(msgspec.Struct, rename="camel"):
    text: str | None = None
    kind: str | None = None


class _Message(msgspec.Struct, rename="camel"):
    message_id: str
    role: str
    parts: list[_Part]
    context_id: str | None = None
    task_id: str | None = None
    kind: str | None = None


class _SendParams(msgspec.Struct):
    message: _Message


class _Envelope(msgspec.Struct):
    jsonrpc: str
    id: int | str | None
    method: str
    params: _SendParams


_ENVELOPE = msgspec.json.Decoder(_Envelope)
_SEND_PARAMS = msgspec.json.Decoder(_SendParams)


def _fixed_task(v03: bool) -> dict[str, Any]:
    task_id, context_id = str(uuid.uuid4()), str(uuid.uuid4())
    when = "2025-01-01T00:00:00.000Z"
    user = {
        "messageId": "m1",
        "contextId": context_id,
        "taskId": task_id,
        "role": "user" if v03 else "ROLE_USER",
        "parts": [{"kind": "text", "text": "hello"} if v03 else {"text": "hello"}],
    }
    artifact = {
        "artifactId": str(uuid.uuid4()),
        "parts": [{"kind": "text", "text": "hello"} if v03 else {"text": "hello"}],
    }
    task: dict[str, Any] = {
        "id": task_id,
        "contextId": context_id,
        "status": {"state": "completed" if v03 else "TASK_STATE_COMPLETED", "timestamp": when},
        "artifacts": [artifact],
        "history": [user],
    }
    if v03:
        user["kind"] = "message"
        task["kind"] = "task"
    return task


#: The fixed replies: what our server answers to the echo request, byte for byte in shape.
FIXED_V1 = msgspec.json.encode({"jsonrpc": "2.0", "id": 1, "result": {"task": _fixed_task(False)}})
FIXED_V03 = msgspec.json.encode({"jsonrpc": "2.0", "id": 1, "result": _fixed_task(True)})
FIXED_REST = msgspec.json.encode({"task": _fixed_task(False)})


def decode_rpc(body: bytes) -> bytes:
    """Decode a JSON-RPC SendMessage (either dialect); the fixed reply in its dialect."""
    envelope = _ENVELOPE.decode(body)
    return FIXED_V03 if envelope.method == "message/send" else FIXED_V1


def decode_rest(body: bytes) -> bytes:
    _SEND_PARAMS.decode(body)
    return FIXED_REST


class _ArtifactChunk(msgspec.Struct, rename="camel", omit_defaults=True):
    artifact_id: str
    parts: list[dict[str, str]]
    name: str = ""


class _ArtifactUpdate(msgspec.Struct, rename="camel", omit_defaults=True):
    task_id: str
    context_id: str
    artifact: _ArtifactChunk
    append: bool = False
    last_chunk: bool = False


class _StreamResult(msgspec.Struct, rename="camel"):
    artifact_update: _ArtifactUpdate


class _Frame(msgspec.Struct):
    jsonrpc: str
    id: int
    result: _StreamResult


class BareStream:
    """SSE frames of the same shape as ours, encoded one by one with msgspec."""

    def __init__(self) -> None:
        self.task_id, self.context_id, self.artifact_id = (str(uuid.uuid4()) for _ in range(3))
        self.encoder = msgspec.json.Encoder()

    def frame(self, i: int, count: int) -> bytes:
        update = _ArtifactUpdate(
            task_id=self.task_id,
            context_id=self.context_id,
            artifact=_ArtifactChunk(
                self.artifact_id, [{"text": chunk_text(i)}], name="story" if i == 0 else ""
            ),
            append=i > 0,
            last_chunk=i == count - 1,
        )
        data = self.encoder.encode(_Frame("2.0", 1, _StreamResult(update)))
        return b"id: %d\ndata: %s\n\n" % (i + 1, data)

    def snapshot(self) -> bytes:
        return b'id: 0\ndata: {"jsonrpc":"2.0","id":1,"result":{"task":{"id":"%s"}}}\n\n' % (
            self.task_id.encode()
        )


class FanOut:
    """Held streams for the bare fan-out scenario: subscribers queue, release writes."""

    def __init__(self) -> None:
        self.subscribers: dict[str, list[asyncio.Queue[bytes | None]]] = {}
        self.background: set[asyncio.Task[None]] = set()

    def hold(self) -> str:
        key = str(uuid.uuid4())
        self.subscribers[key] = []
        return key

    def subscribe(self, key: str) -> asyncio.Queue[bytes | None]:
        queue: asyncio.Queue[bytes | None] = asyncio.Queue()
        self.subscribers[key].append(queue)
        return queue

    def release(self, key: str, count: int) -> None:
        task = asyncio.get_running_loop().create_task(self._produce(key, count))
        self.background.add(task)
        task.add_done_callback(self.background.discard)

    async def _produce(self, key: str, count: int) -> None:
        queues = self.subscribers.pop(key, [])
        stream = BareStream()
        for i in range(count):
            frame = stream.frame(i, count)
            for queue in queues:
                queue.put_nowait(frame)
            await asyncio.sleep(0)  # a producer that lets the writers run, as an agent does
        for queue in queues:
            queue.put_nowait(None)


async def fan_out_frames(
    stream: BareStream, queue: asyncio.Queue[bytes | None]
) -> AsyncIterator[bytes]:
    yield stream.snapshot()
    while (frame := await queue.get()) is not None:
        yield frame


async def single_stream_frames(count: int) -> AsyncIterator[bytes]:
    stream = BareStream()
    for i in range(count):
        yield stream.frame(i, count)


SSE_HEADERS = {"cache-control": "no-cache"}


def bare_starlette_app(base_url: str) -> Any:
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import Response, StreamingResponse
    from starlette.routing import Route

    card, card_headers = card_response(base_url)
    etag = dict(card_headers)["etag"]
    not_modified = [(k, v) for k, v in card_headers if k != "content-type"]
    fan_out = FanOut()

    async def rpc(request: Request) -> Response:
        return Response(decode_rpc(await request.body()), media_type="application/json")

    async def rest(request: Request) -> Response:
        return Response(decode_rest(await request.body()), media_type="application/json")

    async def agent_card(request: Request) -> Response:
        if request.headers.get("if-none-match") == etag:
            return Response(status_code=304, headers=dict(not_modified))
        return Response(card, headers=dict(card_headers))

    async def stream(request: Request) -> Response:
        count = int(request.query_params.get("n", "1000"))
        return StreamingResponse(
            single_stream_frames(count), media_type="text/event-stream", headers=SSE_HEADERS
        )

    async def hold(request: Request) -> Response:
        return Response(msgspec.json.encode({"id": fan_out.hold()}), media_type="application/json")

    async def subscribe(request: Request) -> Response:
        queue = fan_out.subscribe(request.path_params["key"])
        frames = fan_out_frames(BareStream(), queue)
        return StreamingResponse(frames, media_type="text/event-stream", headers=SSE_HEADERS)

    async def release(request: Request) -> Response:
        count = int(request.query_params.get("n", "1000"))
        fan_out.release(request.path_params["key"], count)
        return Response(b"{}", media_type="application/json")

    return Starlette(
        routes=[
            Route("/", rpc, methods=["POST"]),
            Route("/message:send", rest, methods=["POST"]),
            Route(CARD_PATH, agent_card, methods=["GET"]),
            Route("/bare/stream", stream, methods=["GET"]),
            Route("/bare/hold", hold, methods=["POST"]),
            Route("/bare/subscribe/{key}", subscribe, methods=["GET"]),
            Route("/bare/release/{key}", release, methods=["POST"]),
        ]
    )


def bare_aiohttp_app(base_url: str) -> Any:
    from aiohttp import web

    card, card_headers = card_response(base_url)
    etag = dict(card_headers)["etag"]
    not_modified = [(k, v) for k, v in card_headers if k != "content-type"]
    fan_out = FanOut()

    async def rpc(request: web.Request) -> web.Response:
        body = decode_rpc(await request.read())
        return web.Response(body=body, content_type="application/json")

    async def rest(request: web.Request) -> web.Response:
        body = decode_rest(await request.read())
        return web.Response(body=body, content_type="application/json")

    async def agent_card(request: web.Request) -> web.Response:
        if request.headers.get("if-none-match") == etag:
            return web.Response(status=304, headers=not_modified)
        return web.Response(body=card, headers=card_headers)

    async def sse(request: web.Request, frames: AsyncIterator[bytes]) -> web.StreamResponse:
        response = web.StreamResponse(headers={"content-type": "text/event-stream", **SSE_HEADERS})
        await response.prepare(request)
        async for frame in frames:
            await response.write(frame)
        await response.write_eof()
        return response

    async def stream(request: web.Request) -> web.StreamResponse:
        return await sse(request, single_stream_frames(int(request.query.get("n", "1000"))))

    async def hold(request: web.Request) -> web.Response:
        return web.json_response({"id": fan_out.hold()})

    async def subscribe(request: web.Request) -> web.StreamResponse:
        queue = fan_out.subscribe(request.match_info["key"])
        return await sse(request, fan_out_frames(BareStream(), queue))

    async def release(request: web.Request) -> web.Response:
        fan_out.release(request.match_info["key"], int(request.query.get("n", "1000")))
        return web.json_response({})

    app = web.Application()
    app.router.add_post("/", rpc)
    app.router.add_post("/message:send", rest)
    app.router.add_get(CARD_PATH, agent_card, allow_head=False)
    app.router.add_get("/bare/stream", stream, allow_head=False)
    app.router.add_post("/bare/hold", hold)
    app.router.add_get("/bare/subscribe/{key}", subscribe, allow_head=False)
    app.router.add_post("/bare/release/{key}", release)
    return app


# --- main --------------------------------------------------------------------------------


def serve(kind: str, port: int, stack: str) -> None:
    base_url = f"http://{HOST}:{port}"
    if kind == "a2aserve-starlette":
        serve_a2a_starlette(port, stack)
    elif kind == "a2aserve-aiohttp":
        serve_a2a_aiohttp(port)
    elif kind == "a2aserve-bridged":
        serve_a2a_bridged(port, stack)
    elif kind == "sdk":
        serve_sdk(port, stack)
    elif kind == "bare-starlette":
        run_uvicorn(bare_starlette_app(base_url), port, stack)
    elif kind == "bare-aiohttp":
        run_aiohttp(bare_aiohttp_app(base_url), port)
    else:
        raise SystemExit(f"unknown server kind {kind!r}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("kind", choices=KINDS)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--stack", choices=STACKS, default="h11")
    parser.add_argument("--cpu", type=int, help="pin this process to one core")
    args = parser.parse_args()
    if args.cpu is not None and hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {args.cpu})
    raise_fd_limit()
    serve(args.kind, args.port, args.stack)


if __name__ == "__main__":
    main()
