"""gRPC servers side by side: ours (`A2AServer` + ``a2a_grpc.GrpcServer``) against the official
SDK's (``GrpcHandler``), and a bare grpc.aio server, in one run, as ratios.

    uv run python bench/grpc_servers.py [--duration 8] [--rounds 4] [--concurrency 16]
        [--chunks 1000] [--servers ours,sdk,bare] [--scenarios send-1,send-n,stream]
        [--markdown] [--wait-idle S] [--no-pin] [--json PATH] [--py-spy OUT]

(Not ``bench/grpc.py``: the scripts here run with ``bench/`` first on ``sys.path``, so a
``grpc.py`` beside them would be imported as the ``grpc`` package by every one of them, the
SDK's server and client included.)

**The servers**, each in its own process on 127.0.0.1, pinned to core 0
(``os.sched_setaffinity``, before grpc starts its threads), on asyncio (grpc.aio), all
running for the whole run, running the same agent as ``bench/servers.py`` (echo; ``stream
N``: one artifact in N chunks, then completed):

- ``ours``: `A2AServer` (in-memory store and event log, ``bench/servers.py``'s
  ``our_server``) behind ``GrpcServer`` (``a2a_grpc``, generic raw-bytes handlers, our
  protobuf codec), with its default options;
- ``sdk``: a2a-sdk's gRPC server: ``GrpcHandler(DefaultRequestHandler(SdkExecutor,
  InMemoryTaskStore))`` added with ``a2a_pb2_grpc.add_A2AServiceServicer_to_server`` to a
  default ``grpc.aio.server()``;
- ``bare``: the ceiling of grpc.aio in Python: a generic raw-bytes handler that parses the
  request with upb and answers pre-encoded reply bytes (SendMessage: a completed task of the
  echo's shape; the stream: a task, N chunks encoded one by one with upb, a completed status).

**The driver** is this process, pinned to core 1: one ``grpc.aio`` channel per server and the
SDK's generated stub (``a2a_pb2_grpc.A2AServiceStub``) with metadata ``a2a-version: 1.0``,
the same client code for every server. Before measuring, it checks that each server answers
(SendMessage echoes the text in a completed task; a stream of 3 chunks arrives as a task,
3 chunks with ``lastChunk`` on the last, a completed status).

**Scenarios**: ``send-1``: blocking SendMessage with a short text, one caller awaiting each
call; ``send-n``: the same with ``--concurrency`` callers sharing the channel; ``stream``:
one client, SendStreamingMessage of ``--chunks`` chunks, one stream after the other
(events/s: every event received over the time of the streams). Each scenario gets
``--duration`` seconds per server in ``--rounds`` rounds that rotate through the servers
(``--warmup`` seconds first, in the first round); the table gives the median round:
calls/s (events/s), p50/p99 of a call (of a whole stream), the **server's CPU time per
call** (per event: user + system time of its process, from ``/proc``, all its threads) and
the part of it in the main thread (the event loop: handlers, our code, grpc.aio's Cython; the
rest is grpc's C-core poller and event-engine threads), the driver's CPU use over the round
(near 100 %: the driver, not the server, is the limit), and each row's rate divided by every
other's.

**What-if servers** (not in a default run; ``--servers ours,ours-no-md,ours-handle,bare,
bare-md``), to tell gRPC's own cost per call from ours:

- ``bare-md``: ``bare`` that also sends ``a2a-version`` with ``send_initial_metadata``, as
  our adapter does (in grpc.aio that is one more batch per call; left alone, the initial
  metadata goes out with the reply in one batch);
- ``ours-no-md``: ``ours`` with the adapter's ``_send_headers`` and ``_peer_certificate``
  patched out in its process (no initial metadata of its own, no ``auth_context()`` lookup):
  what those two cost. Not conformant (the reply lacks ``a2a-version``);
- ``ours-handle``: ``A2AServer.handle`` behind the smallest generic handler (fixed headers,
  SendMessage only): the floor of any adapter over our server.

``--py-spy OUT`` (one server only) samples the server process with py-spy
(``py-spy record -r 500 -f raw --threads --nonblocking``, from the bench group) over the
measured rounds and writes the collapsed stacks to OUT, each rooted at its thread.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import datetime as dt
import gc
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import asdict, dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any, Final

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
sys.path.insert(0, str(BENCH))

import run as bench_run  # noqa: E402

HOST: Final = "127.0.0.1"
SERVER_CPU, DRIVER_CPU = 0, 1
TEXT: Final = "hello"
V1: Final = (("a2a-version", "1.0"),)
#: The servers of a default run.
DEFAULT_KINDS: Final = ("ours", "sdk", "bare")
#: What-if servers for the profile (`--servers`): not in a default run.
WHAT_IF_KINDS: Final = ("bare-md", "ours-no-md", "ours-handle")
KINDS: Final = DEFAULT_KINDS + WHAT_IF_KINDS
#: Servers that answer SendMessage only (left out of the stream scenario).
SEND_ONLY: Final = frozenset({"ours-handle"})
LABELS: Final = {
    "ours": "`A2AServer` + `a2a_grpc.GrpcServer` (our codec, generic raw-bytes handlers)",
    "sdk": "a2a-sdk `GrpcHandler` + `DefaultRequestHandler` + `InMemoryTaskStore` on "
    "`grpc.aio.server()`",
    "bare": "grpc.aio generic handler: request parsed by upb, pre-encoded replies",
    "bare-md": "`bare` + `send_initial_metadata(a2a-version)` per call, as our adapter sends it",
    "ours-no-md": "what-if: `ours` with the adapter's `_send_headers` and `_peer_certificate` "
    "patched out (no initial metadata of its own, no auth-context lookup; not conformant: the "
    "reply lacks `a2a-version`)",
    "ours-handle": "what-if: `A2AServer.handle` behind a minimal generic handler (fixed "
    "headers, no metadata, no peer; SendMessage only)",
}


# --- the servers (one per process: --serve KIND --port N) ------------------------------------


async def _until_signalled() -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    await stop.wait()


async def serve_ours(port: int) -> None:
    import servers

    from a2a_grpc import GrpcServer

    server = servers.our_server(f"http://{HOST}:{port}")
    grpc_server = GrpcServer(server, host=HOST, port=port)
    await grpc_server.start()
    try:
        await _until_signalled()
    finally:
        await grpc_server.stop(grace=None)


async def serve_sdk(port: int) -> None:
    import grpc
    import servers
    from a2a.server.request_handlers.grpc_handler import GrpcHandler
    from a2a.types import AgentInterface, a2a_pb2_grpc

    interface = AgentInterface(
        url=f"{HOST}:{port}", protocol_binding="GRPC", protocol_version="1.0"
    )
    handler, _card = servers.sdk_request_handler([interface])
    server = grpc.aio.server()
    a2a_pb2_grpc.add_A2AServiceServicer_to_server(GrpcHandler(handler), server)  # type: ignore[no-untyped-call]
    if not server.add_insecure_port(f"{HOST}:{port}"):
        raise OSError(f"cannot listen on {HOST}:{port}")
    await server.start()
    try:
        await _until_signalled()
    finally:
        await server.stop(None)


def _bare_task() -> Any:
    """What the echo agent answers, as an a2a_pb2 Task (ids fixed, a real timestamp)."""
    from a2a.types import a2a_pb2 as pb
    from google.protobuf import timestamp_pb2

    task_id, context_id = "0f8a6c52-2d7e-4f61-9a7c-5c1f4ad1e8b3", "7d2b9e10-4c3a-4b8e"
    return pb.Task(
        id=task_id,
        context_id=context_id,
        status=pb.TaskStatus(
            state=pb.TASK_STATE_COMPLETED,
            timestamp=timestamp_pb2.Timestamp(seconds=1767225600, nanos=123000000),
        ),
        artifacts=[
            pb.Artifact(artifact_id="5c1f4ad1-e8b3-4f61", parts=[pb.Part(text=TEXT)]),
        ],
        history=[
            pb.Message(
                message_id="m-1",
                context_id=context_id,
                task_id=task_id,
                role=pb.ROLE_USER,
                parts=[pb.Part(text=TEXT)],
            )
        ],
    )


def bare_stream(count: int) -> Iterator[bytes]:
    """The events of a stream of ``count`` chunks, each encoded by upb as it is sent."""
    from a2a.types import a2a_pb2 as pb

    task = _bare_task()
    yield pb.StreamResponse(
        task=pb.Task(
            id=task.id,
            context_id=task.context_id,
            status=pb.TaskStatus(state=pb.TASK_STATE_SUBMITTED),
        )
    ).SerializeToString()
    for i in range(count):
        yield pb.StreamResponse(
            artifact_update=pb.TaskArtifactUpdateEvent(
                task_id=task.id,
                context_id=task.context_id,
                artifact=pb.Artifact(
                    artifact_id="5c1f4ad1-e8b3-4f61",
                    name="story" if i == 0 else "",
                    parts=[pb.Part(text=f"chunk {i}")],
                ),
                append=i > 0,
                last_chunk=i == count - 1,
            )
        ).SerializeToString()
    yield pb.StreamResponse(
        status_update=pb.TaskStatusUpdateEvent(
            task_id=task.id, context_id=task.context_id, status=task.status
        )
    ).SerializeToString()


async def serve_bare(port: int, *, initial_metadata: bool = False) -> None:
    import grpc
    from a2a.types import a2a_pb2 as pb

    service = pb.DESCRIPTOR.services_by_name["A2AService"].full_name
    reply = pb.SendMessageResponse(task=_bare_task()).SerializeToString()

    async def send(request: bytes, context: Any) -> bytes:
        pb.SendMessageRequest.FromString(request)
        if initial_metadata:
            await context.send_initial_metadata(V1)
        return reply

    async def stream(request: bytes, context: Any) -> AsyncIterator[bytes]:
        message = pb.SendMessageRequest.FromString(request).message
        if initial_metadata:
            await context.send_initial_metadata(V1)
        count = int(message.parts[0].text.partition(" ")[2] or 1)
        for event in bare_stream(count):
            yield event

    handlers: dict[str, Any] = {
        f"/{service}/SendMessage": grpc.unary_unary_rpc_method_handler(send),
        f"/{service}/SendStreamingMessage": grpc.unary_stream_rpc_method_handler(stream),
    }

    class Bare(grpc.GenericRpcHandler):
        def service(self, handler_call_details: Any) -> Any:
            return handlers.get(handler_call_details.method)

    server = grpc.aio.server()
    server.add_generic_rpc_handlers((Bare(),))
    if not server.add_insecure_port(f"{HOST}:{port}"):
        raise OSError(f"cannot listen on {HOST}:{port}")
    await server.start()
    try:
        await _until_signalled()
    finally:
        await server.stop(None)


async def serve_bare_md(port: int) -> None:
    await serve_bare(port, initial_metadata=True)


async def serve_ours_no_md(port: int) -> None:
    """``ours`` with two costs of the adapter patched out, in this process only: the initial
    metadata it sends on its own (one more gRPC batch per call) and the TLS certificate
    lookup (``auth_context()``) on a plaintext server."""
    import a2a_grpc._server as adapter

    async def no_headers(context: Any, headers: Any) -> None:
        return None

    adapter._send_headers = no_headers
    adapter._peer_certificate = lambda context: None
    await serve_ours(port)


async def serve_ours_handle(port: int) -> None:
    """`A2AServer.handle` behind the smallest generic handler: the request's bytes with fixed
    headers in, the reply's body out (SendMessage only): the adapter's floor."""
    import grpc
    import servers
    from a2a.types import a2a_pb2 as pb

    from a2a_core.http import Headers, HttpRequest

    server = servers.our_server(f"http://{HOST}:{port}")
    path = f"/{pb.DESCRIPTOR.services_by_name['A2AService'].full_name}/SendMessage"
    pairs = [("content-type", "application/grpc"), *V1]

    async def send(request: bytes, context: Any) -> bytes:
        reply = await server.handle(
            HttpRequest("POST", path, headers=Headers(pairs), body=request, peer=HOST)
        )
        body: bytes = reply.body
        return body

    handlers: dict[str, Any] = {path: grpc.unary_unary_rpc_method_handler(send)}

    class Handle(grpc.GenericRpcHandler):
        def service(self, handler_call_details: Any) -> Any:
            return handlers.get(handler_call_details.method)

    grpc_server = grpc.aio.server()
    grpc_server.add_generic_rpc_handlers((Handle(),))
    if not grpc_server.add_insecure_port(f"{HOST}:{port}"):
        raise OSError(f"cannot listen on {HOST}:{port}")
    async with server:
        await grpc_server.start()
        try:
            await _until_signalled()
        finally:
            await grpc_server.stop(None)


SERVE: Final[dict[str, Callable[[int], Any]]] = {
    "ours": serve_ours,
    "sdk": serve_sdk,
    "bare": serve_bare,
    "bare-md": serve_bare_md,
    "ours-no-md": serve_ours_no_md,
    "ours-handle": serve_ours_handle,
}


class ServerProcess:
    """``--serve KIND`` on a free port, pinned to core 0 (``--cpu``); its output in a
    temporary log; `stop` sends SIGTERM, then SIGKILL after 10 s."""

    def __init__(self, kind: str, pin: bool) -> None:
        self.kind = kind
        self.port = bench_run.free_port()
        self.address = f"{HOST}:{self.port}"
        command = [sys.executable, __file__, "--serve", kind, "--port", str(self.port)]
        if pin:
            command += ["--cpu", str(SERVER_CPU)]
        handle, self.log = tempfile.mkstemp(prefix=f"a2a-grpc-bench-{kind}-", suffix=".log")
        with os.fdopen(handle, "wb") as log:
            self.process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, cwd=ROOT)
        self.pid = self.process.pid

    def output(self) -> str:
        return Path(self.log).read_text(errors="replace")[-3000:]

    def cpu_seconds(self) -> tuple[float, float]:
        """User + system CPU time so far: of the process (all its threads), and of its main
        thread (the event loop; the others are grpc's poller and event-engine threads)."""
        return _cpu_of(f"/proc/{self.pid}/stat"), _cpu_of(f"/proc/{self.pid}/task/{self.pid}/stat")

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        with contextlib.suppress(OSError):
            os.unlink(self.log)


def _cpu_of(stat: str) -> float:
    with open(stat) as f:
        fields = f.read().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


# --- the driver ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Scenario:
    key: str
    title: str
    unit: str
    streaming: bool


SCENARIOS: Final = (
    Scenario("send-1", "SendMessage (blocking echo), 1 caller", "calls/s", False),
    Scenario(
        "send-n", "SendMessage (blocking echo), {concurrency} concurrent callers", "calls/s", False
    ),
    Scenario("stream", "SendStreamingMessage of {chunks} chunks, one client", "events/s", True),
)


def send_request(text: str) -> Any:
    from a2a.types import a2a_pb2 as pb

    message = pb.Message(message_id="m-1", role=pb.ROLE_USER, parts=[pb.Part(text=text)])
    return pb.SendMessageRequest(message=message)


class Driver:
    """One server's channel and stub, with the calls of the scenarios."""

    def __init__(self, server: ServerProcess, chunks: int) -> None:
        import grpc
        from a2a.types import a2a_pb2_grpc

        self.server = server
        self.key = server.kind
        self.chunks = chunks
        self.channel = grpc.aio.insecure_channel(server.address)
        self.stub = a2a_pb2_grpc.A2AServiceStub(self.channel)  # type: ignore[no-untyped-call]
        self.send_request = send_request(TEXT)
        self.stream_request = send_request(f"stream {chunks}")

    async def wait_ready(self, timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        while True:
            if self.server.process.poll() is not None:
                raise RuntimeError(f"{self.key} exited:\n{self.server.output()}")
            try:
                await asyncio.wait_for(self.channel.channel_ready(), 0.5)
                return
            except TimeoutError:
                if time.monotonic() > deadline:
                    raise RuntimeError(
                        f"{self.key} did not start:\n{self.server.output()}"
                    ) from None

    async def check(self) -> None:
        """The server answers as the agent should (before any load), or raise."""
        from a2a.types import a2a_pb2 as pb

        reply = await self.stub.SendMessage(self.send_request, metadata=V1)
        task = reply.task
        ok = (
            reply.WhichOneof("payload") == "task"
            and task.status.state == pb.TASK_STATE_COMPLETED
            and [p.text for a in task.artifacts for p in a.parts] == [TEXT]
        )
        if not ok:
            raise RuntimeError(f"{self.key}: unexpected SendMessage reply: {reply}")
        if self.key in SEND_ONLY:
            return
        events = [
            e async for e in self.stub.SendStreamingMessage(send_request("stream 3"), metadata=V1)
        ]
        kinds = [e.WhichOneof("payload") for e in events]
        chunks = [e.artifact_update for e in events if e.HasField("artifact_update")]
        ok = (
            kinds
            == [
                "task",
                "artifact_update",
                "artifact_update",
                "artifact_update",
                "status_update",
            ]
            and [p.text for c in chunks for p in c.artifact.parts]
            == ["chunk 0", "chunk 1", "chunk 2"]
            and [c.last_chunk for c in chunks] == [False, False, True]
            and events[-1].status_update.status.state == pb.TASK_STATE_COMPLETED
        )
        if not ok:
            raise RuntimeError(f"{self.key}: unexpected stream: {kinds} {events[-1]}")
        count = 0
        async for _ in self.stub.SendStreamingMessage(self.stream_request, metadata=V1):
            count += 1
        if count != self.chunks + 2:
            raise RuntimeError(f"{self.key}: a stream of {self.chunks} chunks had {count} events")

    async def send(self) -> int:
        await self.stub.SendMessage(self.send_request, metadata=V1)
        return 1

    async def stream(self) -> int:
        count = 0
        async for _ in self.stub.SendStreamingMessage(self.stream_request, metadata=V1):
            count += 1
        if count != self.chunks + 2:
            raise RuntimeError(f"{count} events, expected {self.chunks + 2}")
        return count

    async def aclose(self) -> None:
        await self.channel.close()


@dataclass
class Sample:
    """One round of one server in one scenario."""

    calls: int = 0
    events: int = 0
    errors: int = 0
    seconds: float = 0.0
    driver_cpu: float = 0.0
    server_cpu: float = 0.0
    server_main_cpu: float = 0.0
    latencies_ms: list[float] = field(default_factory=list)

    @property
    def rate(self) -> float:
        done = self.events if self.events else self.calls
        return done / self.seconds if self.seconds else 0.0

    @property
    def server_cpu_us(self) -> float:
        done = self.events if self.events else self.calls
        return self.server_cpu / done * 1e6 if done else 0.0

    @property
    def server_main_cpu_us(self) -> float:
        done = self.events if self.events else self.calls
        return self.server_main_cpu / done * 1e6 if done else 0.0


async def drive(driver: Driver, scenario: Scenario, callers: int, seconds: float) -> Sample:
    """Calls for ``seconds`` (a stream already begun finishes)."""
    sample = Sample()
    clock = time.perf_counter
    deadline = clock() + seconds
    call = driver.stream if scenario.streaming else driver.send

    async def caller() -> None:
        while clock() < deadline:
            began = clock()
            try:
                done = await call()
            except Exception as exc:  # counted, the first one shown
                if not sample.errors:
                    print(f"   {driver.key}: {exc!r}"[:300], flush=True)
                sample.errors += 1
                continue
            sample.latencies_ms.append((clock() - began) * 1e3)
            sample.calls += 1
            if scenario.streaming:
                sample.events += done

    gc.collect()
    server_cpu, driver_cpu, started = driver.server.cpu_seconds(), time.process_time(), clock()
    if callers == 1:
        await caller()
    else:
        async with asyncio.TaskGroup() as group:
            for _ in range(callers):
                group.create_task(caller())
    sample.seconds = clock() - started
    sample.driver_cpu = time.process_time() - driver_cpu
    after = driver.server.cpu_seconds()
    sample.server_cpu = after[0] - server_cpu[0]
    sample.server_main_cpu = after[1] - server_cpu[1]
    return sample


@dataclass
class Row:
    """A server in a scenario: its median round."""

    scenario: str
    server: str
    callers: int
    rate: float
    p50_ms: float | None
    p99_ms: float | None
    server_cpu_us: float
    server_main_cpu_us: float
    driver_cpu_pct: float
    calls: int
    errors: int
    round_rates: list[float]


def combine(scenario: Scenario, server: str, callers: int, samples: list[Sample]) -> Row:
    done = [s for s in samples if s.calls]
    errors = sum(s.errors for s in samples)
    if not done:
        return Row(scenario.key, server, callers, 0.0, None, None, 0.0, 0.0, 0.0, 0, errors, [])
    rates = [s.rate for s in done]
    median = sorted(done, key=lambda s: s.rate)[(len(done) - 1) // 2]
    return Row(
        scenario.key,
        server,
        callers,
        rate=statistics.median(rates),
        p50_ms=statistics.median(
            bench_run._percentile(sorted(s.latencies_ms), 50) or 0.0 for s in done
        ),
        p99_ms=statistics.median(
            bench_run._percentile(sorted(s.latencies_ms), 99) or 0.0 for s in done
        ),
        server_cpu_us=statistics.median(s.server_cpu_us for s in done),
        server_main_cpu_us=statistics.median(s.server_main_cpu_us for s in done),
        driver_cpu_pct=median.driver_cpu / median.seconds * 100 if median.seconds else 0.0,
        calls=sum(s.calls for s in done),
        errors=errors,
        round_rates=rates,
    )


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


async def measure(servers: list[ServerProcess], args: argparse.Namespace, run: Run) -> None:
    drivers = [Driver(server, args.chunks) for server in servers]
    spy: subprocess.Popen[bytes] | None = None
    try:
        for driver in drivers:
            await driver.wait_ready()
            await driver.check()
        print("every server answers as expected", flush=True)
        if args.py_spy:
            spy = subprocess.Popen(
                [
                    "py-spy",
                    "record",
                    "-r",
                    "500",
                    "-f",
                    "raw",
                    # One stack root per thread (the event loop apart from grpc's), and no
                    # pausing of the server to sample (which halves its rate).
                    "--threads",
                    "--nonblocking",
                    "-o",
                    str(args.py_spy),
                    "--pid",
                    str(servers[0].pid),
                ]
            )
            await asyncio.sleep(1.0)  # py-spy attaches
        rounds = max(1, args.rounds)
        per_round = args.duration / rounds
        for scenario in [s for s in SCENARIOS if s.key in args.scenario_keys]:
            callers = args.concurrency if scenario.key == "send-n" else 1
            print(f"== {scenario.key} ({callers} caller(s))", flush=True)
            cell = [d for d in drivers if not (scenario.streaming and d.key in SEND_ONLY)]
            samples: dict[str, list[Sample]] = {d.key: [] for d in cell}
            for index in range(rounds):
                shift = index % len(cell)
                for driver in cell[shift:] + cell[:shift]:
                    if index == 0 and args.warmup:
                        await drive(driver, scenario, callers, args.warmup)
                    samples[driver.key].append(await drive(driver, scenario, callers, per_round))
            for driver in cell:
                row = combine(scenario, driver.key, callers, samples[driver.key])
                run.rows.append(row)
                print(
                    f"   {driver.key:5} {bench_run._fmt_rate(row.rate):>8} {scenario.unit:8} "
                    f"p50 {bench_run._fmt_ms(row.p50_ms):>6} ms  "
                    f"p99 {bench_run._fmt_ms(row.p99_ms):>6} ms  "
                    f"server CPU {row.server_cpu_us:7.1f} µs "
                    f"(main {row.server_main_cpu_us:7.1f})  driver {row.driver_cpu_pct:3.0f} %"
                    f"  rounds {', '.join(bench_run._fmt_rate(r) for r in row.round_rates)}"
                    f"{'  errors ' + str(row.errors) if row.errors else ''}",
                    flush=True,
                )
    finally:
        if spy is not None:
            spy.send_signal(signal.SIGINT)
            try:
                spy.wait(30)
            except subprocess.TimeoutExpired:
                spy.kill()
        for driver in drivers:
            await driver.aclose()


# --- output --------------------------------------------------------------------------------


def _cpu(value: float) -> str:
    return f"{value:,.1f}" if value < 100 else f"{value:,.0f}"


def table(run: Run, scenario: Scenario, markdown: bool) -> list[str]:
    rows = [r for r in run.rows if r.scenario == scenario.key]
    if not rows:
        return []
    keys = [r.server for r in rows]
    per = "µs/event" if scenario.streaming else "µs/call"
    lat = "stream p50 / p99 ms" if scenario.streaming else "p50 / p99 ms"
    header = [
        "server",
        scenario.unit,
        lat,
        f"server CPU {per}",
        "of which main thread",
        "driver CPU",
    ]
    header += [f"÷{k}" for k in keys]
    body = []
    by_key = {r.server: r for r in rows}
    for row in rows:
        rate = bench_run._fmt_rate(row.rate) + (f" ({row.errors} err)" if row.errors else "")
        cells = [
            row.server,
            rate,
            f"{bench_run._fmt_ms(row.p50_ms)} / {bench_run._fmt_ms(row.p99_ms)}",
            _cpu(row.server_cpu_us),
            _cpu(row.server_main_cpu_us),
            f"{row.driver_cpu_pct:.0f} %",
        ]
        cells += [
            "·" if k == row.server else bench_run._ratio(row.rate, by_key[k].rate) for k in keys
        ]
        body.append(cells)
    title = scenario.title.format(**run.settings)
    if markdown:
        return [
            f"**{title}**",
            "",
            "| " + " | ".join(header) + " |",
            "|" + "|".join("---" if i == 0 else "---:" for i in range(len(header))) + "|",
            *("| " + " | ".join(cells) + " |" for cells in body),
            "",
        ]
    widths = [max(len(c[i]) for c in [header, *body]) for i in range(len(header))]
    lines = [title]
    for cells in [header, *body]:
        lines.append(
            "  ".join(
                c.ljust(widths[i]) if i == 0 else c.rjust(widths[i]) for i, c in enumerate(cells)
            )
        )
    return [*lines, ""]


def targets(run: Run) -> list[str]:
    lines = []
    for scenario in SCENARIOS:
        rows = {r.server: r for r in run.rows if r.scenario == scenario.key}
        ours, sdk = rows.get("ours"), rows.get("sdk")
        if ours and sdk and sdk.rate:
            ratio = ours.rate / sdk.rate
            met = "met" if ratio >= 10 else "MISSED"
            lines.append(f"{scenario.key:7} ours {ratio:.1f}x sdk (goal >= 10x: {met})")
    return ["**Targets**", "", "```", *lines, "```"] if lines else []


VERSIONS: Final = ("a2aserve-core", "a2a-sdk", "grpcio", "protobuf", "msgspec", "anyio")


def describe(run: Run) -> str:
    m, s = run.machine, run.settings
    versions = ", ".join(f"{k} {v}" for k, v in m["versions"].items())
    pin = (
        f"servers on core {SERVER_CPU}, driver on core {DRIVER_CPU}"
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
        f"- Pinning: {pin}; every process on asyncio (grpc.aio); one channel per server.",
        f"- Each scenario: {s['duration']:g} s per server in {s['rounds']} rounds rotating "
        f"through the servers (all running throughout), {s['warmup']:g} s warm-up before the "
        "first; the table gives the median round (rate, p50, p99, CPU each the median of the "
        "rounds).",
        f"- Versions: {versions}.",
        *(f"- `{key}`: {LABELS[key]}." for key in dict.fromkeys(r.server for r in run.rows)),
    ]
    return "\n".join(lines)


def render(run: Run, markdown: bool) -> str:
    lines: list[str] = []
    for scenario in SCENARIOS:
        lines += table(run, scenario, markdown)
    lines += targets(run)
    return "\n".join(lines)


def machine() -> dict[str, Any]:
    info = bench_run.machine()
    versions = {}
    for name in VERSIONS:
        with contextlib.suppress(metadata.PackageNotFoundError):
            versions[name] = metadata.version(name)
    info["versions"] = versions
    info.pop("wrk", None)
    return info


# --- main ----------------------------------------------------------------------------------


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--duration", type=float, default=8, help="seconds per server and scenario")
    parser.add_argument("--rounds", type=int, default=4, help="rounds the duration is split into")
    parser.add_argument("--warmup", type=float, default=1, help="seconds before the first round")
    parser.add_argument("--concurrency", type=int, default=16, help="callers of send-n")
    parser.add_argument("--chunks", type=int, default=1000, help="chunks per stream")
    parser.add_argument("--servers", default=",".join(DEFAULT_KINDS), help=f"of {','.join(KINDS)}")
    parser.add_argument(
        "--scenarios", default=",".join(s.key for s in SCENARIOS), help="send-1,send-n,stream"
    )
    parser.add_argument("--markdown", action="store_true", help="Markdown tables")
    parser.add_argument("--no-pin", action="store_true", help="do not pin to cores")
    parser.add_argument(
        "--wait-idle",
        type=float,
        default=0,
        metavar="S",
        help="wait up to S s for a 1-minute load average under 0.5",
    )
    parser.add_argument("--json", type=Path, default=BENCH / "results" / "grpc.json")
    parser.add_argument(
        "--py-spy",
        type=Path,
        metavar="OUT",
        help="sample the (one) server with py-spy into OUT (raw)",
    )
    parser.add_argument("--serve", choices=KINDS, help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--cpu", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    args.server_keys = args.servers.split(",")
    args.scenario_keys = args.scenarios.split(",")
    unknown = [k for k in args.server_keys if k not in KINDS]
    unknown += [k for k in args.scenario_keys if k not in {s.key for s in SCENARIOS}]
    if unknown:
        parser.error(f"unknown servers or scenarios: {', '.join(unknown)}")
    if args.chunks < 1:
        parser.error("--chunks must be at least 1")
    if args.py_spy and len(args.server_keys) != 1:
        parser.error("--py-spy samples one server: give one in --servers")
    return args


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    if args.serve is not None:
        if args.cpu is not None:
            os.sched_setaffinity(0, {args.cpu})  # before grpc starts its threads
        asyncio.run(SERVE[args.serve](args.port))
        return
    pin = bench_run.can_pin() and not args.no_pin
    load = bench_run.wait_for_idle(args.wait_idle, 0.5) if args.wait_idle else os.getloadavg()
    started = time.monotonic()
    run = Run(
        started=dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        command=" ".join(["uv run python bench/grpc_servers.py", *sys.argv[1:]]).strip(),
        settings={
            "duration": args.duration,
            "rounds": args.rounds,
            "warmup": args.warmup,
            "concurrency": args.concurrency,
            "chunks": args.chunks,
            "pinned": pin,
        },
        machine=machine(),
        load_before=load,
    )
    processes: list[ServerProcess] = []
    try:
        for kind in args.server_keys:
            processes.append(ServerProcess(kind, pin))
        if pin:
            os.sched_setaffinity(0, {DRIVER_CPU})
        asyncio.run(measure(processes, args, run))
    finally:
        for process in processes:
            process.stop()
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
