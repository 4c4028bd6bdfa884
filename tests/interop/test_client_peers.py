"""Our client (`A2AClient`) and our command line (``a2aserve``) against the official servers.

The peers (``peers/README.md``): a2a-sdk 1.3.0 (v1.0), a2a-sdk 0.3.26 (v0.3) and
@a2a-js/sdk 1.3.0 (v1.0), each serving the same agent over JSON-RPC and HTTP+JSON. Every
operation runs on each peer and each interface its card lists, through one connection per
peer and binding (module scope); the command line runs as a subprocess
(``python -m a2a_core``), since its ``main`` runs its own event loop.

What differs between the peers, and what the tests below pin:

- the 0.3 peer's card is v0.3 (``url``, ``additionalInterfaces``); the client reads it into
  the v1.0 model (interfaces with ``protocolVersion`` ``0.3``), and its tasks and events
  arrive in the v1.0 model too (its REST binding's ``TASK_STATE_CANCELLED`` included);
- ListTasks is not in v0.3: `NotInDialectError`, raised before anything is sent;
- an unknown task: the v1.0 peers answer TASK_NOT_FOUND (JSON-RPC ``-32001``, REST 404 with
  an ErrorInfo), the 0.3 peer ``-32001`` over JSON-RPC but a bare
  ``404 {"message": "Task not found"}`` over REST (an `AgentError` with no code);
- canceling a canceled task: the a2a-sdk peers answer TaskNotCancelable (0.3 REST: a bare
  409), the JS peer returns the canceled task;
- a subscription to a task then canceled: the v1.0 peers send a snapshot then the canceled
  status; the 0.3 peer ends the subscription without a word, and refuses the client's
  resubscription (JSON-RPC: an error event; REST: an event stream it aborts), so the
  client yields the task as GetTask returns it;
- no peer sends SSE ids, so a cut stream is resumed by a fresh SubscribeToTask: the v1.0
  peers start it with a task snapshot, the 0.3 peer sends only the later updates (what
  happened in between is lost), and a task that ended meanwhile is fetched (GetTask).
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import anyio
import pytest

from a2a_core import codec
from a2a_core.client import (
    A2AClient,
    AgentError,
    Endpoint,
    NotInDialectError,
    ReceivedEvent,
    RetryPolicy,
)
from a2a_core.errors import TaskNotCancelableError, TaskNotFoundError
from a2a_core.types import (
    Artifact,
    Part,
    Role,
    StreamResponse,
    Task,
    TaskState,
)
from helpers.tcp_proxy import TcpProxy
from interop.peers.fixtures import PEERS
from interop.peers.peers import Peer

pytestmark = [pytest.mark.interop, pytest.mark.anyio]

BINDINGS = ("JSONRPC", "HTTP+JSON")
CHUNKS = [f"chunk {i}" for i in range(5)]
OPEN_STATES = (TaskState.SUBMITTED, TaskState.WORKING)
#: How long any one scenario may take (the agent's slowest, ``slow``, takes 3 s).
LIMIT = 20.0


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    """Module scope, so that the connections below are shared by the module's tests."""
    return "asyncio"


# --- one connection per peer and binding -------------------------------------------------


@dataclass
class Target:
    """A peer, the binding under test, and our client connected to it over that binding."""

    peer: Peer
    binding: str
    client: A2AClient

    @property
    def legacy(self) -> bool:
        return self.peer.protocol_version == "0.3"

    @property
    def interface_url(self) -> str:
        return self.peer.jsonrpc_url if self.binding == "JSONRPC" else self.peer.rest_url


@pytest.fixture(
    scope="module",
    params=[(p, b) for p in PEERS for b in BINDINGS],
    ids=lambda param: f"{param[0]}-{'jsonrpc' if param[1] == 'JSONRPC' else 'rest'}",
)
def peer_binding(request: pytest.FixtureRequest) -> tuple[Peer, str]:
    name, binding = request.param
    started: Peer = request.getfixturevalue(f"{name}_peer")
    return started, binding


@pytest.fixture(scope="module")
async def target(peer_binding: tuple[Peer, str], anyio_backend: str) -> AsyncIterator[Target]:
    peer, binding = peer_binding
    async with await A2AClient.connect(peer.base_url, bindings=[binding], timeout=LIMIT) as client:
        yield Target(peer, binding, client)


# --- helpers -----------------------------------------------------------------------------


def texts(parts: list[Part]) -> list[str]:
    return [part.text for part in parts if isinstance(part.text, str)]


def status_text(task: Task) -> list[str]:
    message = task.status.message
    return texts(message.parts) if message is not None else []


def artifact_texts(artifacts: list[Artifact]) -> list[str]:
    return [text for artifact in artifacts for text in texts(artifact.parts)]


def state_of(event: StreamResponse) -> TaskState | None:
    """The task state an event carries (a snapshot's or a status update's)."""
    if event.task is not None:
        return event.task.status.state
    if event.status_update is not None:
        return event.status_update.status.state
    return None


def task_id_of(event: StreamResponse) -> str:
    if event.task is not None:
        return event.task.id
    if event.status_update is not None:
        return event.status_update.task_id
    assert event.artifact_update is not None, event
    return event.artifact_update.task_id


def chunk_texts(events: list[ReceivedEvent]) -> list[str]:
    return [
        text
        for received in events
        if received.event.artifact_update is not None
        for text in texts(received.event.artifact_update.artifact.parts)
    ]


def assert_no_repeat(events: list[ReceivedEvent]) -> None:
    """No event yielded twice: no two events with the same ProtoJSON."""
    encoded = [codec.encode(received.event) for received in events]
    repeated = [e for e in encoded if encoded.count(e) > 1]
    assert not repeated, f"events yielded twice: {repeated}"


def keys_of(value: Any) -> Iterator[str]:
    """Every member name in a JSON value, except inside ``metadata`` (free-form)."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield key
            if key != "metadata":
                yield from keys_of(item)
    elif isinstance(value, list):
        for item in value:
            yield from keys_of(item)


def values_of(value: Any, name: str) -> Iterator[Any]:
    """Every value of a member ``name`` anywhere in a JSON value."""
    if isinstance(value, dict):
        for key, item in value.items():
            if key == name:
                yield item
            yield from values_of(item, name)
    elif isinstance(value, list):
        for item in value:
            yield from values_of(item, name)


def assert_v1_json(value: Any) -> None:
    """v1.0 ProtoJSON: camelCase, no ``kind``, ``parts`` not ``content``, enum names."""
    keys = set(keys_of(value))
    assert not {"kind", "content", "final"} & keys, keys
    assert not [k for k in keys if "_" in k], keys
    states = list(values_of(value, "state"))
    assert all(str(s).startswith("TASK_STATE_") for s in states), states
    roles = list(values_of(value, "role"))
    assert all(str(r).startswith("ROLE_") for r in roles), roles


async def collect(stream: AsyncIterator[ReceivedEvent]) -> list[ReceivedEvent]:
    events: list[ReceivedEvent] = []
    with anyio.fail_after(LIMIT):
        async for received in stream:
            events.append(received)
    return events


async def start_wait(client: A2AClient) -> Task:
    """A ``wait`` task, sent without waiting (a blocking send of it never returns)."""
    task = await client.send("wait", return_immediately=True)
    assert isinstance(task, Task)
    assert task.status.state in OPEN_STATES
    return task


# --- the card ----------------------------------------------------------------------------


async def test_connect_reads_the_card(target: Target) -> None:
    client, peer = target.client, target.peer
    card = client.card
    assert card is not None
    interfaces = [(i.protocol_binding, i.url) for i in card.supported_interfaces]
    assert interfaces == [("JSONRPC", peer.jsonrpc_url), ("HTTP+JSON", peer.rest_url)]
    # The 0.3 card's protocolVersion "0.3.0" is the version of each interface read from it.
    assert {i.protocol_version for i in card.supported_interfaces} == {peer.protocol_version}
    assert card.capabilities.streaming is True
    endpoint = client.endpoint
    assert endpoint.card_binding == target.binding
    assert endpoint.url == target.interface_url
    assert endpoint.dialect == peer.protocol_version


# --- send, get, cancel -------------------------------------------------------------------


async def test_send_hello_completes(target: Target) -> None:
    task = await target.client.send("hello")
    assert isinstance(task, Task)
    assert task.status.state is TaskState.COMPLETED
    assert artifact_texts(task.artifacts) == ["echo: hello"]
    assert status_text(task) == ["echo: hello"]
    assert task.history and texts(task.history[0].parts) == ["hello"]
    assert task.history[0].role is Role.USER


async def test_get_task_after_send(target: Target) -> None:
    sent = await target.client.send("again")
    assert isinstance(sent, Task)
    got = await target.client.get_task(sent.id)
    assert (got.id, got.context_id) == (sent.id, sent.context_id)
    assert got.status.state is TaskState.COMPLETED
    assert artifact_texts(got.artifacts) == ["echo: again"]


async def test_get_unknown_task(target: Target) -> None:
    with pytest.raises(AgentError) as caught:
        await target.client.get_task("no-such-task")
    error = caught.value
    if target.legacy and target.binding == "HTTP+JSON":
        # a2a-sdk 0.3's REST binding answers the HTTP status with {"message"} alone: no
        # code, no reason (its own client raises a bare HTTP error too).
        assert (error.http_status, error.code, error.reason) == (404, None, None)
        assert error.message == "Task not found"
        assert error.error_type is None
    else:
        assert error.error_type is TaskNotFoundError, repr(error)
        assert error.code == -32001
        assert error.http_status == (404 if target.binding == "HTTP+JSON" else 200)


async def test_cancel_a_waiting_task(target: Target) -> None:
    client = target.client
    task = await start_wait(client)
    canceled = await client.cancel_task(task.id)
    assert canceled.id == task.id
    assert canceled.status.state is TaskState.CANCELED
    assert (await client.get_task(task.id)).status.state is TaskState.CANCELED
    # Canceling it again: the a2a-sdk servers refuse, the JS one returns the task.
    if target.peer.name == "js":
        again = await client.cancel_task(task.id)
        assert (again.id, again.status.state) == (task.id, TaskState.CANCELED)
        return
    with pytest.raises(AgentError) as caught:
        await client.cancel_task(task.id)
    error = caught.value
    if target.legacy and target.binding == "HTTP+JSON":
        assert (error.http_status, error.code, error.error_type) == (409, None, None)
        assert error.message.startswith("Task cannot be canceled"), error.message
    else:
        assert error.error_type is TaskNotCancelableError, repr(error)


async def test_ask_then_answer(target: Target) -> None:
    client = target.client
    asked = await client.send("ask")
    assert isinstance(asked, Task)
    assert asked.status.state is TaskState.INPUT_REQUIRED
    assert status_text(asked) == ["what next?"]
    answered = await client.send("A", task_id=asked.id, context_id=asked.context_id)
    assert isinstance(answered, Task)
    assert (answered.id, answered.context_id) == (asked.id, asked.context_id)
    assert answered.status.state is TaskState.COMPLETED
    assert status_text(answered) == ["got: A"]


async def test_list_tasks(target: Target) -> None:
    client = target.client
    if target.legacy:
        with pytest.raises(NotInDialectError, match=r"ListTasks is not part of A2A 0\.3"):
            await client.list_tasks()
        # Refused before anything is sent: the same with no server at all.
        nowhere = Endpoint("http://127.0.0.1:9/a2a", client.endpoint.binding, "0.3")
        async with A2AClient(nowhere, retry=RetryPolicy(attempts=1)) as unreachable:
            with pytest.raises(NotInDialectError):
                await unreachable.list_tasks()
        return
    sent = await client.send("listed")
    assert isinstance(sent, Task)
    page = await client.list_tasks(context_id=sent.context_id)
    assert [task.id for task in page.tasks] == [sent.id]
    assert page.tasks[0].status.state is TaskState.COMPLETED
    assert page.total_size == 1
    assert page.next_page_token == ""


# --- streams -----------------------------------------------------------------------------


async def test_stream_yields_the_chunks(target: Target) -> None:
    events = await collect(target.client.stream("stream"))
    first = events[0].event
    assert first.task is not None and first.task.status.state is TaskState.SUBMITTED
    assert chunk_texts(events) == CHUNKS
    updates = [r.event.artifact_update for r in events if r.event.artifact_update is not None]
    assert len({u.artifact.artifact_id for u in updates}) == 1
    assert [u.append for u in updates] == [False, True, True, True, True]
    assert [u.last_chunk for u in updates] == [False, False, False, False, True]
    assert state_of(events[-1].event) is TaskState.COMPLETED
    assert [r.last for r in events] == [False] * (len(events) - 1) + [True]
    assert all(r.event_id is None for r in events)  # no peer sends SSE ids
    for received in events:  # the 0.3 peer's too: kind, final, content... read into v1.0
        assert_v1_json(json.loads(codec.encode(received.event)))
    assert_no_repeat(events)
    assert {task_id_of(r.event) for r in events} == {first.task.id}


async def test_subscribe_then_cancel(target: Target) -> None:
    client = target.client
    task = await start_wait(client)
    events: list[ReceivedEvent] = []
    started = anyio.Event()

    async def follow() -> None:
        async for received in client.subscribe(task.id):
            events.append(received)
            started.set()

    with anyio.fail_after(LIMIT):
        async with anyio.create_task_group() as group:
            group.start_soon(follow)
            if target.legacy:
                # The 0.3 peer sends nothing on subscribing: give the subscription time to
                # be registered before the cancellation it should report.
                await anyio.sleep(1.0)
            else:
                await started.wait()  # the v1.0 peers begin with the task's snapshot
            canceled = await client.cancel_task(task.id)
    assert canceled.status.state is TaskState.CANCELED
    assert [r.last for r in events] == [False] * (len(events) - 1) + [True]
    last = events[-1].event
    assert state_of(last) is TaskState.CANCELED
    if target.legacy:
        # a2a-sdk 0.3 ends the subscription without the canceled status; the client
        # resubscribes, is refused (JSON-RPC: an error event; REST: an aborted event
        # stream) and yields the task as GetTask returns it.
        assert len(events) == 1
        assert last.task is not None and last.task.id == task.id
    else:
        snapshot = events[0].event.task
        assert snapshot is not None and snapshot.id == task.id
        assert snapshot.status.state in OPEN_STATES
        assert [e.event.status_update is not None for e in events[1:]] == [True] * (len(events) - 1)
    assert_no_repeat(events)


def proxied_url(url: str, port: int) -> str:
    return urlsplit(url)._replace(netloc=f"127.0.0.1:{port}").geturl()


@pytest.fixture
def proxy(target: Target) -> Iterator[TcpProxy]:
    """A TCP proxy in front of the peer, to cut its streams."""
    port = urlsplit(target.peer.base_url).port
    assert port is not None
    with TcpProxy("127.0.0.1", port) as running:
        yield running


@pytest.mark.parametrize("text", ["stream", "slow"])
async def test_cut_stream_resumes(target: Target, proxy: TcpProxy, text: str) -> None:
    """A stream cut after its second event is resumed and ends with the task's final state.

    No peer sends SSE ids, so the resumption carries no Last-Event-ID and cannot be a
    replay: the client subscribes, then fetches the task (GetTask: what it missed is in
    it); the v1.0 peers open the subscription with a task snapshot too (dropped when it
    equals the fetched one), the 0.3 peer with nothing. A snapshot may hold again
    what was seen: it is the task's state, not a repeated event. So what is asserted: the
    updates (status and artifact events) are never yielded twice and keep their order, and
    nothing is lost: every chunk arrives as an update or in a snapshot, on every peer.
    ``slow`` (3 s) is still working when the client comes back; ``stream`` (~0.25 s) may
    have ended, then the fetched task ends the stream.
    """
    connected = target.client.endpoint
    endpoint = Endpoint(
        proxied_url(target.interface_url, proxy.port), connected.binding, connected.dialect
    )
    retry = RetryPolicy(backoff=0.05)
    events: list[ReceivedEvent] = []
    async with A2AClient(endpoint, card=target.client.card, timeout=LIMIT, retry=retry) as client:
        with anyio.fail_after(LIMIT):
            async for received in client.stream(text):
                events.append(received)
                if len(events) == 2:
                    proxy.cut()
                    proxy.restore()
    assert [state_of(r.event) for r in events[:2]] == [TaskState.SUBMITTED, TaskState.WORKING]
    assert [r.last for r in events] == [False] * (len(events) - 1) + [True]
    final = events[-1].event
    assert state_of(final) is TaskState.COMPLETED
    updates = [r for r in events if r.event.task is None]
    assert_no_repeat(updates)
    expected = CHUNKS if text == "stream" else ["echo: slow"]
    streamed = chunk_texts(events)
    assert streamed == sorted(streamed, key=expected.index)  # in order, none twice
    snapshots = [r.event.task for r in events[2:] if r.event.task is not None]
    in_snapshots = {t for task in snapshots for t in artifact_texts(task.artifacts)}
    if final.task is not None:
        # The task had ended when the client came back: the fetched task holds it all.
        assert artifact_texts(final.task.artifacts) == expected
    else:
        assert snapshots, "a resumption without ids starts from the task as it is"
        assert set(streamed) | in_snapshots == set(expected)
    if text == "slow":
        # Deterministic: the agent is asleep when the client comes back.
        assert final.status_update is not None
        assert streamed == expected
        assert snapshots[0].status.state is TaskState.WORKING
        # The fetched task, and the v1.0 peers' own snapshot unless it is the same task.
        assert 1 <= len(snapshots) <= (1 if target.legacy else 2)


# --- the command line --------------------------------------------------------------------


@dataclass
class Run:
    """One ``a2aserve`` run: its exit code, stdout and stderr."""

    code: int
    out: str
    err: str

    def json(self) -> Any:
        assert self.code == 0, self.err
        return json.loads(self.out)

    def lines(self) -> list[Any]:
        assert self.code == 0, self.err
        return [json.loads(line) for line in self.out.splitlines()]


async def a2aserve(*args: str) -> Run:
    """``python -m a2a_core ARGS`` in a subprocess (its ``main`` runs its own event loop)."""
    with anyio.fail_after(60):
        done = await anyio.run_process(
            [sys.executable, "-m", "a2a_core", *args], check=False, stdin=subprocess.DEVNULL
        )
    return Run(done.returncode, done.stdout.decode(), done.stderr.decode())


@dataclass
class CliRuns:
    """Every command line run against one peer (made at once, in parallel)."""

    peer: Peer
    runs: dict[str, Run]

    def __getitem__(self, key: str) -> Run:
        return self.runs[key]


@pytest.fixture(scope="module", params=PEERS)
def cli_peer(request: pytest.FixtureRequest) -> Peer:
    started: Peer = request.getfixturevalue(f"{request.param}_peer")
    return started


@pytest.fixture(scope="module")
async def cli(cli_peer: Peer, anyio_backend: str) -> CliRuns:
    url = cli_peer.base_url
    own = cli_peer.protocol_version
    runs: dict[str, Run] = {}
    alone = {
        "card": ("card", url, "-o", "json"),
        "stream-jsonrpc": ("send", url, "stream", "--stream", "--binding", "jsonrpc", "-o", "json"),
        "stream-rest": (
            "send",
            *(url, "stream", "--stream", "--binding", "http-json", "--a2a-version", own),
            *("-o", "json"),
        ),
        "unknown": ("get", url, "nope"),
    }
    if own == "0.3":  # its REST binding answers errors in its own way
        alone["unknown-rest"] = ("get", url, "nope", "--binding", "http-json")
    limiter = anyio.CapacityLimiter(4)  # two cores, shared

    async def run(key: str, *args: str) -> Run:
        async with limiter:
            runs[key] = await a2aserve(*args)
        return runs[key]

    async def one(key: str) -> None:
        await run(key, *alone[key])

    async def send_then_get() -> None:
        sent = await run("send", "send", url, "hello", "--binding", "http-json", "-o", "json")
        if sent.code == 0:
            task = json.loads(sent.out)
            await run("get", "get", url, task["id"], "-o", "json")
            await run("list", "list", url, "--context-id", task["contextId"], "-o", "json")

    async def wait_then_cancel() -> None:
        sent = await run("wait", "send", url, "wait", "--no-wait", "-o", "json")
        if sent.code == 0:
            task_id = json.loads(sent.out)["id"]
            await run("cancel", "cancel", url, task_id, "--binding", "http-json", "-o", "json")

    async with anyio.create_task_group() as group:
        for key in alone:
            group.start_soon(one, key)
        group.start_soon(send_then_get)
        group.start_soon(wait_then_cancel)
    return CliRuns(cli_peer, runs)


def part_texts(parts: list[dict[str, Any]]) -> list[str]:
    return [part["text"] for part in parts if "text" in part]


def test_cli_card(cli: CliRuns) -> None:
    peer = cli.peer
    card = cli["card"].json()
    assert not {"url", "preferredTransport", "additionalInterfaces", "protocolVersion"} & set(
        card
    ), sorted(card)
    interfaces = [
        (i["protocolBinding"], i["protocolVersion"], i["url"]) for i in card["supportedInterfaces"]
    ]
    version = peer.protocol_version
    assert interfaces == [
        ("JSONRPC", version, peer.jsonrpc_url),
        ("HTTP+JSON", version, peer.rest_url),
    ]
    assert card["capabilities"]["streaming"] is True


def test_cli_send_then_get(cli: CliRuns) -> None:
    sent = cli["send"].json()
    assert_v1_json(sent)
    assert sent["status"]["state"] == "TASK_STATE_COMPLETED"
    assert [part_texts(a["parts"]) for a in sent["artifacts"]] == [["echo: hello"]]
    assert part_texts(sent["history"][0]["parts"]) == ["hello"]
    got = cli["get"].json()
    assert_v1_json(got)
    assert (got["id"], got["contextId"]) == (sent["id"], sent["contextId"])
    assert got["status"]["state"] == "TASK_STATE_COMPLETED"


def test_cli_cancel(cli: CliRuns) -> None:
    waiting = cli["wait"].json()
    assert waiting["status"]["state"] in ("TASK_STATE_SUBMITTED", "TASK_STATE_WORKING")
    canceled = cli["cancel"].json()
    assert_v1_json(canceled)
    # The 0.3 peer's REST binding spells it TASK_STATE_CANCELLED: read into v1.0.
    assert (canceled["id"], canceled["status"]["state"]) == (waiting["id"], "TASK_STATE_CANCELED")


@pytest.mark.parametrize("binding", ["jsonrpc", "rest"])
def test_cli_stream(cli: CliRuns, binding: str) -> None:
    events = cli[f"stream-{binding}"].lines()
    for event in events:
        assert len(event) == 1 and next(iter(event)) in ("task", "statusUpdate", "artifactUpdate")
        assert_v1_json(event)
    assert "eventId" not in json.dumps(events)  # no peer sends SSE ids
    assert events[0]["task"]["status"]["state"] == "TASK_STATE_SUBMITTED"
    chunks = [
        part_texts(e["artifactUpdate"]["artifact"]["parts"])
        for e in events
        if "artifactUpdate" in e
    ]
    assert chunks == [[chunk] for chunk in CHUNKS]
    assert events[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"
    assert len({json.dumps(e, sort_keys=True) for e in events}) == len(events)


def test_cli_unknown_task(cli: CliRuns) -> None:
    run = cli["unknown"]  # over JSON-RPC, the card's first interface
    assert run.code == 1, run
    assert run.out == ""
    assert run.err.startswith("error: TASK_NOT_FOUND -32001: "), run.err
    if cli.peer.protocol_version == "0.3":
        # a2a-sdk 0.3's REST error: the HTTP status and a message, no code nor reason.
        rest = cli["unknown-rest"]
        assert (rest.code, rest.out, rest.err) == (1, "", "error: HTTP 404: Task not found\n")


def test_cli_list(cli: CliRuns) -> None:
    run = cli["list"]
    if cli.peer.protocol_version == "0.3":
        assert run.code == 2, run
        assert "ListTasks is not part of A2A 0.3" in run.err, run.err
        return
    page = run.json()
    assert_v1_json(page)
    sent = cli["send"].json()
    assert [(task["id"], task["contextId"]) for task in page["tasks"]] == [
        (sent["id"], sent["contextId"])
    ]
    assert page["totalSize"] == 1


async def test_cli_no_agent(sdk_v1_peer: Peer, sdk_v0_3_peer: Peer) -> None:
    """Exit 3 when no card is found (404) or nothing listens; exit 3 also when the card
    lists no interface in the version asked for."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{sock.getsockname()[1]}"
    runs: dict[str, Run] = {}
    commands = {
        "no-card": ("card", sdk_v1_peer.base_url + "/nowhere"),
        "closed": ("send", closed, "hello"),
        "version": ("send", sdk_v0_3_peer.base_url, "hello", "--a2a-version", "1.0"),
    }

    async def run(key: str) -> None:
        runs[key] = await a2aserve(*commands[key])

    async with anyio.create_task_group() as group:
        for key in commands:
            group.start_soon(run, key)
    for key, done in runs.items():
        assert done.code == 3, (key, done)
        assert done.out == "", key
        assert done.err.startswith("a2aserve: "), (key, done.err)
    assert "404" in runs["no-card"].err, runs["no-card"].err
    assert "lists no interface with version 1.0" in runs["version"].err, runs["version"].err
