"""Push notifications: the in-memory config store, and webhook delivery against a real receiver.

The receiver is a minimal HTTP/1.1 server on 127.0.0.1 (anyio TCP, so it runs under asyncio
and trio alike) that records every request and answers from a per-test script. Tests never
send traffic anywhere else: SSRF refusals are checked with httpx's ``MockTransport`` as the
client and a resolver that records its calls, so a guard that failed to refuse would be
caught by the transport instead of reaching the network. Retry delays go through an injected
``sleep`` that records them. Nothing of ours is mocked; no test asserts a duration.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import math
from collections import defaultdict
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio
import httpx
import pytest
from anyio.abc import SocketAttribute, SocketStream
from anyio.streams.buffered import BufferedByteReceiveStream

from a2a_core import codec
from a2a_core.errors import LocalProtocolError
from a2a_core.server import (
    DeliveryRules,
    PushOptions,
    PushTarget,
    WebhookPolicy,
    WebhookPoster,
    WebhookPushSender,
)
from a2a_core.server._memory_push import InMemoryPushConfigStore, PushConfigLimitError
from a2a_core.server._webhook_guard import WebhookUrlRefusedError, check_webhook_url
from a2a_core.server.observe import NoOpObservation, NoOpObserver, PushObservation
from a2a_core.types import (
    Artifact,
    AuthenticationInfo,
    Message,
    Part,
    Role,
    StreamResponse,
    Task,
    TaskPushNotificationConfig,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
)

# --- values --------------------------------------------------------------------------------

WHEN = dt.datetime(2025, 1, 2, 3, 4, 5, tzinfo=dt.UTC)
STATUS = TaskStatus(
    state=TaskState.WORKING,
    timestamp=WHEN,
    message=Message(message_id="m1", role=Role.AGENT, parts=[Part(text="hi")]),
)
TASK = Task(
    id="t1",
    context_id="c1",
    status=STATUS,
    artifacts=[Artifact(artifact_id="a1", parts=[Part(data={"x": 1})])],
)


def status_event(seq: int = 1, task_id: str = "t1") -> StreamResponse:
    return StreamResponse(
        status_update=TaskStatusUpdateEvent(
            task_id=task_id, context_id="c1", status=STATUS, metadata={"seq": seq}
        )
    )


def target(
    url: str,
    *,
    config_id: str = "cfg",
    task_id: str = "t1",
    token: str = "",
    auth: AuthenticationInfo | None = None,
    legacy: bool = False,
) -> PushTarget:
    config = TaskPushNotificationConfig(
        id=config_id, task_id=task_id, url=url, token=token, authentication=auth
    )
    return PushTarget(config=config, legacy_v0_3=legacy)


class RecordingSleep:
    """An injected ``sleep``: records each delay and returns at once."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)
        await anyio.lowlevel.checkpoint()


# --- the receiver --------------------------------------------------------------------------


@dataclass
class Received:
    method: str
    path: str
    header_list: list[tuple[str, str]]
    body: bytes

    def header(self, name: str) -> str | None:
        values = [v for k, v in self.header_list if k == name.lower()]
        assert len(values) <= 1, f"header {name} sent {len(values)} times"
        return values[0] if values else None

    def json(self) -> Any:
        return json.loads(self.body)


#: Answers one request: a status code, or None to never answer.
Answer = Callable[[Received], Awaitable[int | None]]


async def always_ok(request: Received) -> int | None:
    return 200


@dataclass
class Receiver:
    """Records requests; answers each with ``answer(request)``."""

    answer: Answer = always_ok
    port: int = 0
    requests: list[Received] = field(default_factory=list)
    connections: int = 0
    open_connections: int = 0
    all_closed: anyio.Event = field(default_factory=anyio.Event)

    def url(self, path: str = "/hook") -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    async def handle(self, stream: SocketStream) -> None:
        self.connections += 1
        self.open_connections += 1
        try:
            async with stream:
                buffered = BufferedByteReceiveStream(stream)
                while True:
                    try:
                        head = await buffered.receive_until(b"\r\n\r\n", 65536)
                    except anyio.IncompleteRead:
                        return
                    request_line, *lines = head.decode("latin-1").split("\r\n")
                    method, path, _ = request_line.split(" ", 2)
                    headers = []
                    for line in lines:
                        name, _, value = line.partition(":")
                        headers.append((name.strip().lower(), value.strip()))
                    length = int(dict(headers).get("content-length", "0"))
                    body = await buffered.receive_exactly(length) if length else b""
                    request = Received(method, path, headers, body)
                    self.requests.append(request)
                    status = await self.answer(request)
                    if status is None:  # never answer; wait for the client to hang up
                        while await buffered.receive():
                            pass
                        return
                    extra = "Location: /elsewhere\r\n" if 300 <= status < 400 else ""
                    await stream.send(
                        f"HTTP/1.1 {status} X\r\n{extra}Content-Length: 2\r\n\r\nok".encode()
                    )
        except (anyio.EndOfStream, anyio.BrokenResourceError):
            return  # the client hung up
        finally:
            self.open_connections -= 1
            if self.open_connections == 0:
                self.all_closed.set()


@asynccontextmanager
async def receiving(answer: Answer = always_ok) -> AsyncIterator[Receiver]:
    """A receiver listening on 127.0.0.1 for the duration of the block."""
    receiver = Receiver(answer)
    listener = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=0)
    receiver.port = listener.extra(SocketAttribute.local_port)
    async with listener, anyio.create_task_group() as tg:
        tg.start_soon(listener.serve, receiver.handle)
        try:
            yield receiver
        finally:
            tg.cancel_scope.cancel()


def script(*statuses: int) -> Answer:
    """Answer with these statuses in turn, then 200."""
    queue = list(statuses)

    async def answer(request: Received) -> int | None:
        return queue.pop(0) if queue else 200

    return answer


def sender(**options: Any) -> WebhookPushSender:
    """A sender allowed to reach the receiver, with recorded sleeps unless given."""
    options.setdefault("policy", WebhookPolicy(("127.0.0.1",)))
    options.setdefault("sleep", RecordingSleep())
    return WebhookPushSender(**options)


# --- SSRF-test doubles: the network replaced, so a failing guard reaches nothing ----------


class NoNetwork:
    """An httpx client whose transport records requests and answers 200 without a socket."""

    def __init__(self) -> None:
        self.requests: list[httpx.Request] = []
        self.client = httpx.AsyncClient(transport=httpx.MockTransport(self._handle))

    def _handle(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        return httpx.Response(200)


class FakeDns:
    """A resolver with fixed answers that records every lookup."""

    def __init__(self, answers: dict[str, list[str]] | None = None) -> None:
        self.answers = answers or {}
        self.lookups: list[tuple[str, int]] = []

    async def __call__(self, host: str, port: int) -> Sequence[str]:
        self.lookups.append((host, port))
        if host not in self.answers:
            raise OSError(f"unknown host {host}")
        return self.answers[host]


# --- config store --------------------------------------------------------------------------


def config(task_id: str = "t1", config_id: str = "", url: str = "https://a.example/h") -> Any:
    return TaskPushNotificationConfig(id=config_id, task_id=task_id, url=url)


@pytest.mark.anyio
async def test_store_assigns_task_id_to_first_config_then_uuids() -> None:
    store = InMemoryPushConfigStore()
    first = await store.set(config())
    second = await store.set(config(url="https://b.example/h"))
    third = await store.set(config(url="https://c.example/h"))
    assert first.id == "t1"
    assert len(second.id) == 32
    assert int(second.id, 16) >= 0
    assert len({first.id, second.id, third.id}) == 3
    assert await store.list_configs("t1") == [first, second, third]
    assert await store.get("t1", second.id) == second
    assert await store.list_configs("t2") == []


@pytest.mark.anyio
async def test_store_keeps_explicit_ids_and_upserts_in_place() -> None:
    store = InMemoryPushConfigStore()
    await store.set(config(config_id="a", url="https://one.example/"))
    await store.set(config(config_id="b"))
    replaced = await store.set(config(config_id="a", url="https://two.example/"))
    assert replaced.id == "a"
    assert [(c.id, c.url) for c in await store.list_configs("t1")] == [
        ("a", "https://two.example/"),
        ("b", "https://a.example/h"),
    ]
    # The same config id on another task is another config.
    await store.set(config(task_id="t2", config_id="a"))
    assert [c.id for c in await store.list_configs("t2")] == ["a"]
    assert len(await store.list_configs("t1")) == 2


@pytest.mark.anyio
async def test_store_first_config_again_after_all_deleted_gets_task_id() -> None:
    store = InMemoryPushConfigStore()
    await store.set(config(config_id="x"))
    assert len((await store.set(config())).id) == 32  # not the first config of t1
    await store.delete_task("t1")
    assert (await store.set(config())).id == "t1"


@pytest.mark.anyio
async def test_store_get_and_delete_are_idempotent() -> None:
    store = InMemoryPushConfigStore()
    kept = await store.set(config(task_id="t2", config_id="k"))
    await store.set(config(config_id="a"))
    assert await store.get("t1", "nope") is None
    assert await store.get("nope", "a") is None
    await store.delete("t1", "a")
    await store.delete("t1", "a")
    await store.delete("nope", "a")
    assert await store.get("t1", "a") is None
    assert await store.list_configs("t1") == []
    assert await store.get("t2", "k") == kept


@pytest.mark.anyio
async def test_store_delete_task_removes_only_that_task() -> None:
    store = InMemoryPushConfigStore()
    await store.set(config(config_id="a"))
    await store.set(config(config_id="b"))
    other = await store.set(config(task_id="t2"))
    await store.delete_task("t1")
    await store.delete_task("t1")
    assert await store.list_configs("t1") == []
    assert await store.targets("t1") == []
    assert await store.list_configs("t2") == [other]


@pytest.mark.anyio
async def test_store_targets_carry_the_dialect() -> None:
    store = InMemoryPushConfigStore()
    v1 = await store.set(config(config_id="new"))
    v03 = await store.set(config(config_id="old"), legacy_v0_3=True)
    assert await store.targets("t1") == [
        PushTarget(config=v1, legacy_v0_3=False),
        PushTarget(config=v03, legacy_v0_3=True),
    ]


@pytest.mark.anyio
async def test_store_bounds_configs_per_task() -> None:
    store = InMemoryPushConfigStore(max_configs_per_task=3)
    for name in "abc":
        await store.set(config(config_id=name))
    with pytest.raises(PushConfigLimitError, match="at most 3") as info:
        await store.set(config(config_id="d"))
    assert isinstance(info.value, ValueError)
    with pytest.raises(PushConfigLimitError):
        await store.set(config())  # an assigned id counts as new too
    # Replacing an existing config is always allowed; other tasks have their own budget.
    await store.set(config(config_id="b", url="https://new.example/"))
    await store.set(config(task_id="t2", config_id="d"))
    assert [c.id for c in await store.list_configs("t1")] == ["a", "b", "c"]
    await store.delete("t1", "a")
    await store.set(config(config_id="d"))
    assert [c.id for c in await store.list_configs("t1")] == ["b", "c", "d"]


@pytest.mark.anyio
async def test_store_default_limit_is_ten() -> None:
    store = InMemoryPushConfigStore()
    for _ in range(10):
        await store.set(config())
    with pytest.raises(PushConfigLimitError):
        await store.set(config())
    assert len(await store.list_configs("t1")) == 10


@pytest.mark.anyio
async def test_store_refuses_config_without_task() -> None:
    store = InMemoryPushConfigStore()
    with pytest.raises(LocalProtocolError):
        await store.set(config(task_id=""))


def test_store_limit_must_be_positive() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        InMemoryPushConfigStore(max_configs_per_task=0)


# --- the static SSRF check -----------------------------------------------------------------

REFUSED_URLS = [
    ("http://localhost/hook", "loopback"),
    ("http://LOCALHOST./hook", "loopback"),
    ("http://api.localhost/hook", "loopback"),
    ("http://127.0.0.1/hook", "loopback"),
    ("http://127.1.2.3:8080/hook", "loopback"),
    ("http://0x7f.1/hook", "loopback"),
    ("http://2130706433/hook", "loopback"),
    ("http://[::1]/hook", "loopback"),
    ("http://[::ffff:127.0.0.1]/hook", "loopback"),
    ("http://[64:ff9b::7f00:1]/hook", "loopback"),
    ("http://[2002:7f00:1::]/hook", "loopback"),
    ("http://10.0.0.1/hook", "private"),
    ("http://172.16.5.4/hook", "private"),
    ("http://192.168.1.1/hook", "private"),
    ("http://100.64.0.1/hook", "private"),
    ("http://[fc00::1]/hook", "private"),
    ("http://[::ffff:10.0.0.1]/hook", "private"),
    ("http://169.254.169.254/latest/meta-data", "link-local"),
    ("http://[fe80::1]/hook", "link-local"),
    ("http://224.0.0.1/hook", "multicast"),
    ("http://[ff02::1]/hook", "multicast"),
    ("http://0.0.0.0/hook", "unspecified"),
    ("http://[::]/hook", "unspecified"),
    ("http://192.0.2.1/hook", "reserved"),
    ("http://240.0.0.1/hook", "reserved"),
    ("http://255.255.255.255/hook", "reserved"),
    ("ftp://x/hook", "http or https"),
    ("file:///etc/passwd", "http or https"),
    ("javascript:alert(1)", "http or https"),
    ("hook", "http or https"),
    ("https:///hook", "no host"),
    ("http://a.example:99999/", "not a valid URL"),
    ("http://a.example:port/", "not a valid URL"),
    ("http://[zz::1]/", "not a valid URL"),
    ("http://exa mple.com/", "not a valid URL"),
    ("http://a..example/", "not a valid URL"),
]


@pytest.mark.parametrize(("url", "reason"), REFUSED_URLS)
def test_check_refuses(url: str, reason: str) -> None:
    with pytest.raises(WebhookUrlRefusedError, match=reason):
        check_webhook_url(url)


@pytest.mark.parametrize(
    "url",
    [
        "https://example.com/hook",
        "http://webhooks.example:8443/x?token=1",
        "http://93.184.216.34/hook",
        "https://[2606:4700:4700::1111]/hook",
        "HTTPS://Example.COM/hook",
    ],
)
def test_check_accepts_public_urls(url: str) -> None:
    check_webhook_url(url)


def test_check_refusal_message_hides_path_and_query() -> None:
    with pytest.raises(WebhookUrlRefusedError) as info:
        check_webhook_url("http://10.0.0.1/secret-path?key=secret-query")
    assert "secret" not in str(info.value)
    assert "10.0.0.1" in str(info.value)


@pytest.mark.parametrize(
    ("url", "allow_hosts", "allow_private", "allowed"),
    [
        ("http://127.0.0.1:1234/h", ["127.0.0.1"], False, True),
        ("http://[::ffff:127.0.0.1]/h", ["127.0.0.1"], False, True),
        ("http://127.0.0.2/h", ["127.0.0.1/32"], False, False),
        ("http://127.0.0.2/h", ["127.0.0.0/8"], False, True),
        ("http://10.1.2.3/h", ["10.0.0.0/8"], False, True),
        ("http://[::1]/h", ["::1"], False, True),
        ("http://[::1]/h", ["[::1]"], False, True),
        ("http://localhost:8080/h", ["localhost"], False, True),
        ("http://LocalHost/h", ["localhost."], False, True),
        ("http://other.localhost/h", ["localhost"], False, False),
        ("http://10.0.0.1/h", [], True, True),
        ("http://192.168.0.7/h", [], True, True),
        ("http://[fd12::1]/h", [], True, True),
        ("http://127.0.0.1/h", [], True, False),
        ("http://169.254.169.254/h", [], True, False),
        ("http://localhost/h", [], True, False),
        ("ftp://127.0.0.1/h", ["127.0.0.1"], True, False),
    ],
)
def test_check_allow_options(
    url: str, allow_hosts: list[str], allow_private: bool, allowed: bool
) -> None:
    if allowed:
        check_webhook_url(url, allow_hosts=allow_hosts, allow_private=allow_private)
    else:
        with pytest.raises(WebhookUrlRefusedError):
            check_webhook_url(url, allow_hosts=allow_hosts, allow_private=allow_private)


def test_allow_hosts_must_be_a_collection_not_a_string() -> None:
    with pytest.raises(TypeError):
        check_webhook_url("http://127.0.0.1/", allow_hosts="127.0.0.1")
    for hosts in ("127.0.0.1", [""], [" "], [1], 5):
        with pytest.raises(ValueError, match="allow_hosts"):
            WebhookPolicy(hosts)  # type: ignore[arg-type]
        with pytest.raises(ValueError, match="allow_hosts"):
            PushOptions(allow_hosts=hosts)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="allow_private"):
        WebhookPolicy(allow_private="yes")  # type: ignore[arg-type]


def test_the_old_spelling_of_a_senders_policy_still_works_with_a_warning() -> None:
    with pytest.warns(DeprecationWarning, match="policy"):
        old = WebhookPushSender(allow_hosts=["hooks.internal"], allow_private=True)
    assert old.policy == WebhookPolicy(("hooks.internal",), allow_private=True)
    with pytest.raises(ValueError, match="give policy"):
        WebhookPushSender(policy=WebhookPolicy(), allow_private=True)


# --- delivery: bodies and headers ----------------------------------------------------------


@pytest.mark.anyio
async def test_v1_body_and_headers() -> None:
    auth = AuthenticationInfo(scheme="Bearer", credentials="s3cret")
    async with receiving() as rx:
        async with sender() as push:
            await push.deliver(
                [target(rx.url("/v1?x=1"), token="tok3n", auth=auth)], status_event(), TASK
            )
        assert push.delivered == 1
        assert push.failed == push.dropped == push.refused == push.cancelled == 0
    [request] = rx.requests
    assert request.method == "POST"
    assert request.path == "/v1?x=1"
    assert request.header("content-type") == "application/json"
    assert request.header("authorization") == "Bearer s3cret"
    assert request.header("x-a2a-notification-token") == "tok3n"
    assert request.body == codec.encode(status_event())
    assert request.json() == {
        "statusUpdate": {
            "taskId": "t1",
            "contextId": "c1",
            "status": {
                "state": "TASK_STATE_WORKING",
                "message": {"messageId": "m1", "role": "ROLE_AGENT", "parts": [{"text": "hi"}]},
                "timestamp": "2025-01-02T03:04:05Z",
            },
            "metadata": {"seq": 1},
        }
    }


@pytest.mark.anyio
async def test_v0_3_target_gets_the_v0_3_task() -> None:
    auth = AuthenticationInfo(scheme="Basic", credentials="dXNlcjpwdw==")
    async with receiving() as rx, sender(content_type="application/a2a+json") as push:
        await push.deliver(
            [target(rx.url("/old"), token="tok", auth=auth, legacy=True)],
            status_event(),
            TASK,
        )
    [request] = rx.requests
    assert request.header("content-type") == "application/json"  # whatever v1.0 uses
    assert request.header("authorization") == "Basic dXNlcjpwdw=="
    assert request.header("x-a2a-notification-token") == "tok"
    assert request.json() == {
        "kind": "task",
        "id": "t1",
        "contextId": "c1",
        "status": {
            "state": "working",
            "message": {
                "kind": "message",
                "role": "agent",
                "parts": [{"kind": "text", "text": "hi"}],
                "messageId": "m1",
            },
            "timestamp": "2025-01-02T03:04:05Z",
        },
        "artifacts": [{"artifactId": "a1", "parts": [{"kind": "data", "data": {"x": 1}}]}],
    }


@pytest.mark.anyio
async def test_one_event_to_targets_of_both_dialects() -> None:
    async with receiving() as rx:
        async with sender(content_type="application/a2a+json") as push:
            await push.deliver(
                [
                    target(rx.url("/new"), config_id="n"),
                    target(rx.url("/old"), config_id="o", legacy=True),
                ],
                status_event(),
                TASK,
            )
        assert push.delivered == 2
    by_path = {r.path: r for r in rx.requests}
    assert by_path["/new"].header("content-type") == "application/a2a+json"
    assert "statusUpdate" in by_path["/new"].json()
    assert by_path["/old"].header("content-type") == "application/json"
    assert by_path["/old"].json()["kind"] == "task"


@pytest.mark.anyio
async def test_no_credentials_no_auth_headers() -> None:
    async with receiving() as rx, sender() as push:
        await push.deliver([target(rx.url())], status_event(), TASK)
    [request] = rx.requests
    assert request.header("authorization") is None
    assert request.header("x-a2a-notification-token") is None
    assert request.header("content-type") == "application/json"


@pytest.mark.anyio
async def test_header_injection_is_refused_before_sending() -> None:
    net = NoNetwork()
    async with net.client, sender(client=net.client) as push:
        await push.deliver(
            [target("http://127.0.0.1/h", token="t\r\nX-Evil: 1")], status_event(), TASK
        )
    assert push.failed == 1
    assert net.requests == []


# --- delivery: retries and backoff ---------------------------------------------------------


@pytest.mark.anyio
async def test_retries_after_503_until_200() -> None:
    sleep = RecordingSleep()
    async with receiving(script(503, 503)) as rx:
        async with sender(sleep=sleep, jitter=0) as push:
            await push.deliver([target(rx.url())], status_event(), TASK)
        assert (push.delivered, push.failed) == (1, 0)
    assert len(rx.requests) == 3
    assert {r.body for r in rx.requests} == {codec.encode(status_event())}
    assert sleep.delays == [0.5, 1.0]


@pytest.mark.anyio
async def test_gives_up_after_the_retries() -> None:
    sleep = RecordingSleep()
    async with receiving(script(500, 500, 500, 500, 500)) as rx:
        async with sender(sleep=sleep, jitter=0) as push:
            await push.deliver([target(rx.url())], status_event(), TASK)
        assert (push.delivered, push.failed) == (0, 1)
    assert len(rx.requests) == 4
    assert sleep.delays == [0.5, 1.0, 2.0]


@pytest.mark.anyio
async def test_attempt_makes_one_attempt_and_says_when_the_next_is_due() -> None:
    # For a durable queue that keeps retries itself: the same policy, one attempt a call.
    sleep = RecordingSleep()
    async with receiving(script(503, 503, 503, 503, 404)) as rx:
        async with sender(sleep=sleep, jitter=0) as push:
            outcomes = [
                await push.attempt(target(rx.url()), status_event(), None, attempt=n)
                for n in range(4)
            ]
            assert [o.retry_in for o in outcomes] == [0.5, 1.0, 2.0, None]
            assert [o.delivered for o in outcomes] == [False] * 4
            assert outcomes[-1].reason == "HTTP 503"
            not_retried = await push.attempt(target(rx.url()), status_event(), None)
            assert (not_retried.delivered, not_retried.retry_in) == (False, None)
            done = await push.attempt(target(rx.url()), status_event(), None, attempt=2)
            assert (done.delivered, done.retry_in) == (True, None)
            # A v0.3 webhook's body is the task: without one it cannot be sent.
            legacy = await push.attempt(target(rx.url(), legacy=True), status_event(), None)
            assert (legacy.delivered, legacy.retry_in) == (False, None)
            sent = await push.attempt(target(rx.url(), legacy=True), status_event(), TASK)
            assert sent.delivered
        assert (push.delivered, push.failed) == (2, 3)
    assert sleep.delays == []  # the caller waits, not the sender
    assert len(rx.requests) == 7


class _Carried(NoOpObservation):
    """A delivery's observation that sends the context it was started with as a header."""

    def __init__(self, context: object) -> None:
        self.context = context

    def headers(self) -> Sequence[tuple[str, str]]:
        return [("x-context", json.dumps(self.context))]


class _ContextObserver(NoOpObserver):
    """An observer whose context is ``"here"`` in the calling task."""

    def push_context(self) -> object:
        return "here"

    def push_started(self, context: object, task_id: str, origin: str) -> PushObservation:
        return _Carried(context)


@pytest.mark.anyio
async def test_send_and_attempt_deliver_under_the_context_a_queue_kept() -> None:
    # A durable queue hands back the context it kept with the job (push_context_headers);
    # without one, the deliveries are under the calling task's (push_context).
    kept = {"traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}
    async with receiving() as rx:
        async with sender(observer=_ContextObserver()) as push:
            await push.send([target(rx.url())], status_event(), TASK, context=kept)
            await push.send([target(rx.url())], status_event(), TASK)
            assert (
                await push.attempt(target(rx.url()), status_event(), None, context=kept)
            ).delivered
            assert (await push.attempt(target(rx.url()), status_event(), None)).delivered
        assert push.delivered == 4
    sent = [json.loads(r.header("x-context") or "null") for r in rx.requests]
    assert sent == [kept, "here", kept, "here"]


@pytest.mark.anyio
@pytest.mark.parametrize("status", [408, 429, 500, 502, 503, 504])
async def test_retryable_statuses(status: int) -> None:
    async with receiving(script(status)) as rx:
        async with sender() as push:
            await push.deliver([target(rx.url())], status_event(), TASK)
        assert push.delivered == 1
    assert len(rx.requests) == 2


@pytest.mark.anyio
@pytest.mark.parametrize("status", [400, 401, 403, 404, 410, 301, 302])
async def test_other_statuses_are_not_retried(status: int) -> None:
    sleep = RecordingSleep()
    async with receiving(script(status)) as rx:
        async with sender(sleep=sleep) as push:
            await push.deliver([target(rx.url())], status_event(), TASK)
        assert (push.delivered, push.failed) == (0, 1)
    assert len(rx.requests) == 1  # a redirect is not followed either
    assert sleep.delays == []


@pytest.mark.anyio
async def test_backoff_is_capped() -> None:
    sleep = RecordingSleep()
    async with receiving(script(503, 503, 503, 503, 503)) as rx:
        async with sender(sleep=sleep, jitter=0, retries=5, backoff=1, max_backoff=4) as push:
            await push.deliver([target(rx.url())], status_event(), TASK)
        assert push.delivered == 1
    assert sleep.delays == [1, 2, 4, 4, 4]


@pytest.mark.anyio
async def test_backoff_is_jittered_within_bounds() -> None:
    sleep = RecordingSleep()
    async with receiving(script(*[503] * 20)) as rx:
        async with sender(sleep=sleep, jitter=0.5, retries=20, backoff=1, max_backoff=1) as p:
            await p.deliver([target(rx.url())], status_event(), TASK)
        assert p.delivered == 1
    assert len(sleep.delays) == 20
    assert all(0.5 <= d <= 1.5 for d in sleep.delays)
    assert len(set(sleep.delays)) > 1  # 20 equal random factors: practically impossible


@pytest.mark.anyio
async def test_connection_refused_is_retried() -> None:
    # A port that was just listening on 127.0.0.1 and is closed now: connections are refused.
    listener = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=0)
    port = listener.extra(SocketAttribute.local_port)
    await listener.aclose()
    sleep = RecordingSleep()
    async with sender(sleep=sleep, jitter=0) as push:
        await push.deliver([target(f"http://127.0.0.1:{port}/h")], status_event(), TASK)
    assert (push.delivered, push.failed) == (0, 1)
    assert sleep.delays == [0.5, 1.0, 2.0]


@pytest.mark.anyio
async def test_timeout_is_retried() -> None:
    async def hang_first(request: Received) -> int | None:
        return None if len(rx.requests) == 1 else 200

    async with receiving(hang_first) as rx:
        async with sender(timeout=0.2, retries=1) as push:
            await push.deliver([target(rx.url())], status_event(), TASK)
        assert (push.delivered, push.failed) == (1, 0)
    assert len(rx.requests) == 2


# --- delivery: ordering, bounds, shutdown --------------------------------------------------


@pytest.mark.anyio
@pytest.mark.parametrize("n_targets", [1, 5])
async def test_events_reach_each_target_in_order_one_at_a_time(n_targets: int) -> None:
    in_flight: dict[str, int] = defaultdict(int)
    most_in_flight: dict[str, int] = defaultdict(int)

    async def answer(request: Received) -> int | None:
        in_flight[request.path] += 1
        most_in_flight[request.path] = max(most_in_flight[request.path], in_flight[request.path])
        for _ in range(request.json()["statusUpdate"]["metadata"]["seq"] % 3):
            await anyio.lowlevel.checkpoint()  # vary the order in which answers finish
        in_flight[request.path] -= 1
        return 200

    async with receiving(answer) as rx:
        async with sender(workers=4) as push:
            targets = [target(rx.url(f"/{n}"), config_id=str(n)) for n in range(n_targets)]
            for seq in range(50):
                await push.deliver(targets, status_event(seq), TASK)
        assert push.delivered == 50 * n_targets
    seen: dict[str, list[int]] = defaultdict(list)
    for request in rx.requests:
        seen[request.path].append(request.json()["statusUpdate"]["metadata"]["seq"])
    assert seen == {f"/{n}": list(range(50)) for n in range(n_targets)}
    assert set(most_in_flight.values()) == {1}


@pytest.mark.anyio
async def test_a_retried_event_holds_back_the_later_ones() -> None:
    async with receiving(script(503)) as rx:
        async with sender() as push:
            for seq in range(5):
                await push.deliver([target(rx.url())], status_event(seq), TASK)
        assert push.delivered == 5
    seqs = [r.json()["statusUpdate"]["metadata"]["seq"] for r in rx.requests]
    assert seqs == [0, 0, 1, 2, 3, 4]


@pytest.mark.anyio
async def test_full_queue_drops_new_deliveries(caplog: pytest.LogCaptureFixture) -> None:
    release = anyio.Event()

    async def held(request: Received) -> int | None:
        await release.wait()
        return 200

    caplog.set_level(logging.WARNING, logger="a2a_core.push")
    async with receiving(held) as rx:
        async with sender(queue_size=3) as push:
            for seq in range(5):
                await push.deliver([target(rx.url())], status_event(seq), TASK)
            assert (push.pending, push.dropped) == (3, 2)
            release.set()
        assert (push.delivered, push.dropped, push.pending) == (3, 2, 0)
    assert [r.json()["statusUpdate"]["metadata"]["seq"] for r in rx.requests] == [0, 1, 2]
    assert sum("queue full" in r.getMessage() for r in caplog.records) == 2


@pytest.mark.anyio
async def test_shutdown_finishes_pending_deliveries() -> None:
    async with receiving() as rx:
        async with sender(workers=2) as push:
            for seq in range(20):
                await push.deliver([target(rx.url(f"/{seq % 3}"))], status_event(seq), TASK)
        assert (push.delivered, push.pending, push.cancelled) == (20, 0, 0)
        assert len(rx.requests) == 20


@pytest.mark.anyio
async def test_shutdown_cancels_what_does_not_finish_in_time() -> None:
    async def never(request: Received) -> int | None:
        return None

    async with receiving(never) as rx:
        async with sender(shutdown_timeout=0.1) as push:
            for n in range(3):
                await push.deliver([target(rx.url(f"/{n}"))], status_event(), TASK)
            # All three are in flight before the shutdown starts (on a loaded machine a
            # worker may not have connected yet when the block ends).
            with anyio.fail_after(10):
                while len(rx.requests) < 3:
                    await anyio.sleep(0.01)
        assert (push.cancelled, push.pending, push.delivered, push.failed) == (3, 0, 0, 0)
        # Every connection the sender opened is closed: its workers and client are gone.
        with anyio.fail_after(10):
            await rx.all_closed.wait()
        assert rx.connections == 3
        # After shutdown, deliveries are dropped, never raised into the caller.
        await push.deliver([target(rx.url())], status_event(), TASK)
        assert push.dropped == 1


@pytest.mark.anyio
async def test_owned_client_is_closed_and_injected_one_is_not() -> None:
    async with receiving() as rx, httpx.AsyncClient() as client:
        async with sender(client=client) as push:
            await push.deliver([target(rx.url())], status_event(), TASK)
        assert push.delivered == 1
        assert not client.is_closed
        response = await client.get(rx.url("/still-usable"))
        assert response.status_code == 200


@pytest.mark.anyio
async def test_an_error_in_the_body_propagates_unwrapped() -> None:
    with pytest.raises(KeyError, match="boom"):
        async with sender():
            raise KeyError("boom")


@pytest.mark.anyio
async def test_deliver_before_start_and_second_start_are_errors() -> None:
    push = sender()
    with pytest.raises(RuntimeError, match="not running"):
        await push.deliver([target("http://127.0.0.1/h")], status_event(), TASK)
    async with push:
        with pytest.raises(RuntimeError, match="only once"):
            await push.__aenter__()


def test_invalid_options() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        WebhookPushSender(workers=0)
    with pytest.raises(ValueError, match="jitter"):
        WebhookPushSender(jitter=2)
    with pytest.raises(ValueError, match=">= 0"):
        WebhookPushSender(timeout=0)


# --- delivery: the SSRF guard --------------------------------------------------------------


@pytest.mark.anyio
@pytest.mark.parametrize(
    "url",
    [
        "http://localhost/hook",
        "http://127.0.0.1/hook",
        "http://10.0.0.1/hook",
        "http://[::1]/hook",
        "http://169.254.169.254/latest/meta-data",
        "ftp://x/hook",
        "http://[::ffff:127.0.0.1]/hook",
    ],
)
async def test_guard_refuses_before_any_lookup_or_connection(url: str) -> None:
    net, dns = NoNetwork(), FakeDns()
    async with net.client, WebhookPushSender(client=net.client, resolve=dns) as push:
        await push.deliver([target(url)], status_event(), TASK)
    assert (push.refused, push.delivered, push.failed) == (1, 0, 0)
    assert net.requests == []
    assert dns.lookups == []


@pytest.mark.anyio
async def test_loopback_receiver_unreachable_without_allow() -> None:
    async with receiving() as rx:
        async with WebhookPushSender() as push:
            await push.deliver([target(rx.url())], status_event(), TASK)
        assert push.refused == 1
    assert rx.connections == 0


@pytest.mark.anyio
@pytest.mark.parametrize(
    "addresses",
    [["10.0.0.1"], ["127.0.0.1"], ["93.184.216.34", "169.254.169.254"], ["::ffff:10.1.1.1"]],
)
@pytest.mark.parametrize("scheme", ["http", "https"])
async def test_guard_refuses_names_resolving_to_refused_addresses(
    addresses: list[str], scheme: str
) -> None:
    net, dns = NoNetwork(), FakeDns({"hooks.example": addresses})
    async with net.client, WebhookPushSender(client=net.client, resolve=dns) as push:
        await push.deliver([target(f"{scheme}://hooks.example/h")], status_event(), TASK)
    assert push.refused == 1
    assert net.requests == []
    assert dns.lookups == [("hooks.example", 80 if scheme == "http" else 443)]


@pytest.mark.anyio
async def test_http_goes_to_the_checked_address_with_the_name_as_host() -> None:
    net = NoNetwork()
    dns = FakeDns({"hooks.example": ["93.184.216.34", "2606:2800:220:1::1"]})
    async with net.client, WebhookPushSender(client=net.client, resolve=dns) as push:
        await push.deliver([target("http://hooks.example:8080/h?q=1")], status_event(), TASK)
    assert push.delivered == 1
    [request] = net.requests
    assert str(request.url) == "http://93.184.216.34:8080/h?q=1"
    assert request.headers["host"] == "hooks.example:8080"


@pytest.mark.anyio
async def test_https_keeps_the_name_for_the_certificate_check() -> None:
    net = NoNetwork()
    dns = FakeDns({"hooks.example": ["93.184.216.34"]})
    async with net.client, WebhookPushSender(client=net.client, resolve=dns) as push:
        await push.deliver([target("https://hooks.example/h")], status_event(), TASK)
    assert push.delivered == 1
    [request] = net.requests
    assert str(request.url) == "https://hooks.example/h"
    assert dns.lookups == [("hooks.example", 443)]


@pytest.mark.anyio
async def test_every_attempt_resolves_again() -> None:
    # The name rebinds to a private address between attempts: the retry is refused.
    dns = FakeDns({"hooks.example": ["93.184.216.34"]})

    async def answer(request: httpx.Request) -> httpx.Response:
        dns.answers["hooks.example"] = ["10.0.0.1"]
        return httpx.Response(503)

    client = httpx.AsyncClient(transport=httpx.MockTransport(answer))
    async with client, sender(client=client, resolve=dns, policy=WebhookPolicy()) as push:
        await push.deliver([target("http://hooks.example/h")], status_event(), TASK)
    assert (push.refused, push.failed, push.delivered) == (1, 0, 0)
    assert len(dns.lookups) == 2


@pytest.mark.anyio
async def test_lookup_failures_are_retried() -> None:
    net, dns, sleep = NoNetwork(), FakeDns(), RecordingSleep()
    async with net.client, sender(client=net.client, resolve=dns, sleep=sleep) as push:
        await push.deliver([target("http://unknown.example/h")], status_event(), TASK)
    assert (push.failed, push.refused) == (1, 0)
    assert len(dns.lookups) == 4
    assert len(sleep.delays) == 3
    assert net.requests == []


@pytest.mark.anyio
async def test_allowed_hostname_is_not_resolved_by_the_guard() -> None:
    net, dns = NoNetwork(), FakeDns()
    async with (
        net.client,
        WebhookPushSender(
            client=net.client, resolve=dns, policy=WebhookPolicy(("hooks.internal",))
        ) as push,
    ):
        await push.deliver([target("http://hooks.internal/h")], status_event(), TASK)
    assert push.delivered == 1
    assert dns.lookups == []
    assert str(net.requests[0].url) == "http://hooks.internal/h"


@pytest.mark.anyio
async def test_allow_private_reaches_private_but_not_metadata() -> None:
    net = NoNetwork()
    dns = FakeDns({"lan.example": ["192.168.1.20"], "meta.example": ["169.254.169.254"]})
    async with (
        net.client,
        WebhookPushSender(
            client=net.client, resolve=dns, policy=WebhookPolicy(allow_private=True)
        ) as push,
    ):
        await push.deliver(
            [
                target("http://lan.example/h", config_id="lan"),
                target("http://meta.example/h", config_id="meta"),
                target("http://10.9.8.7/h", config_id="literal"),
            ],
            status_event(),
            TASK,
        )
    assert (push.delivered, push.refused) == (2, 1)
    assert sorted(str(r.url) for r in net.requests) == [
        "http://10.9.8.7/h",
        "http://192.168.1.20/h",
    ]


# --- logging -------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_logs_never_show_credentials(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="a2a_core.push")
    auth = AuthenticationInfo(scheme="Bearer", credentials="secret-credentials")
    async with receiving(script(503, 400)) as rx:
        async with sender() as push:
            await push.deliver(
                [
                    target(
                        rx.url("/secret-path?k=secret-query"),
                        token="secret-token",
                        auth=auth,
                    ),
                    target("http://10.0.0.1/secret-path?k=secret-query", config_id="c2"),
                ],
                status_event(),
                TASK,
            )
        assert (push.failed, push.refused) == (1, 1)
    messages = [r.getMessage() for r in caplog.records if r.name == "a2a_core.push"]
    assert any("HTTP 400" in m for m in messages)
    assert any("10.0.0.1" in m for m in messages)
    assert not [m for m in messages if "secret" in m]
    assert not [r for r in caplog.records if r.exc_info]


def test_a_server_and_its_sender_guard_with_one_policy() -> None:
    """A sender given to a server without a policy takes the server's; one with another
    policy is refused when the server is built, naming where to set it."""
    from a2a_core.server import A2AServer, InMemoryBackend
    from helpers.a2a_client import make_card

    async def echo(ctx: Any) -> str:
        return "hi"

    push = PushOptions(allow_hosts=["hooks.internal"])
    given = WebhookPushSender()
    A2AServer(echo, card=make_card(), push=push, backend=InMemoryBackend(push_sender=given))
    assert given.policy is push.webhook_policy
    same = WebhookPushSender(policy=WebhookPolicy(("hooks.internal",)))
    A2AServer(echo, card=make_card(), push=push, backend=InMemoryBackend(push_sender=same))
    # The same targets spelled otherwise (case, a final dot, a network as an address).
    spelled = WebhookPolicy(("Hooks.Internal.", "127.0.0.1"))
    assert spelled.same_as(WebhookPolicy(("hooks.internal", "127.0.0.1/32")))
    alike = WebhookPushSender(policy=spelled)
    both = PushOptions(allow_hosts=["127.0.0.1/32", "hooks.internal"])
    A2AServer(echo, card=make_card(), push=both, backend=InMemoryBackend(push_sender=alike))
    other = WebhookPushSender(policy=WebhookPolicy(allow_private=True))
    with pytest.raises(ValueError, match=r"differs from the server's.*PushOptions"):
        A2AServer(echo, card=make_card(), push=push, backend=InMemoryBackend(push_sender=other))


# --- the poster alone: one delivery's I/O, under the rules, with no queue --------------------

ALLOW = WebhookPolicy(("127.0.0.1",))


@pytest.mark.anyio
async def test_a_poster_sends_under_its_rules_without_a_sender() -> None:
    sleep = RecordingSleep()
    rules = DeliveryRules(retries=2, backoff=1, factor=3, jitter=0)
    async with receiving(script(503, 429)) as rx:
        async with WebhookPoster(policy=ALLOW, rules=rules, sleep=sleep) as poster:
            await poster.send([target(rx.url(), token="tok")], status_event(), TASK)
        assert (poster.delivered, poster.failed) == (1, 0)
    assert sleep.delays == [1, 3]
    assert [r.header("x-a2a-notification-token") for r in rx.requests] == ["tok"] * 3
    assert {r.body for r in rx.requests} == {codec.encode(status_event())}


@pytest.mark.anyio
async def test_a_poster_attempt_says_when_its_rules_want_the_next() -> None:
    rules = DeliveryRules(retries=1, backoff=2, jitter=0)
    async with receiving(script(500, 500, 404)) as rx:
        async with WebhookPoster(policy=ALLOW, rules=rules) as poster:
            first = await poster.attempt(target(rx.url()), status_event(), None)
            last = await poster.attempt(target(rx.url()), status_event(), None, attempt=1)
            not_retried = await poster.attempt(target(rx.url()), status_event(), None)
            done = await poster.attempt(target(rx.url()), status_event(), None)
        assert (poster.delivered, poster.failed) == (1, 2)
    assert (first.delivered, first.retry_in, first.reason) == (False, 2.0, "HTTP 500")
    assert (last.delivered, last.retry_in) == (False, None)  # its one retry was this
    assert (not_retried.retry_in, not_retried.reason) == (None, "HTTP 404")
    assert (done.delivered, done.retry_in) == (True, None)


@pytest.mark.anyio
async def test_a_poster_posts_at_most_max_concurrent_at_once() -> None:
    release = anyio.Event()

    async def held(request: Received) -> int | None:
        await release.wait()
        return 200

    async with receiving(held) as rx:
        async with (
            WebhookPoster(policy=ALLOW, max_concurrent=1) as poster,
            anyio.create_task_group() as group,
        ):
            for n in range(2):
                hook = target(rx.url(), config_id=f"c{n}")
                group.start_soon(poster.send, [hook], status_event(), TASK)
            with anyio.fail_after(10):
                while not rx.requests:
                    await anyio.sleep(0.01)
            await anyio.sleep(0.2)  # a second POST let through would have come by now
            assert len(rx.requests) == 1
            release.set()
        assert poster.delivered == 2
    assert len(rx.requests) == 2


@pytest.mark.anyio
async def test_a_poster_must_be_open_and_opens_once() -> None:
    poster = WebhookPoster()
    with pytest.raises(RuntimeError, match="not open"):
        await poster.send([target("https://hooks.example/h")], status_event(), TASK)
    async with poster:
        assert poster.open
        with pytest.raises(RuntimeError, match="only once"):
            await poster.__aenter__()
    assert not poster.open
    with pytest.raises(RuntimeError, match="not open"):
        await poster.attempt(target("https://hooks.example/h"), status_event(), TASK)


@pytest.mark.anyio
async def test_a_poster_leaves_a_client_it_was_given_open() -> None:
    net, dns = NoNetwork(), FakeDns({"hooks.example": ["93.184.216.34"]})
    async with net.client:
        async with WebhookPoster(client=net.client, resolve=dns) as poster:
            await poster.send([target("http://hooks.example/h")], status_event(), TASK)
        assert not net.client.is_closed
    assert poster.delivered == 1
    assert [str(r.url) for r in net.requests] == ["http://93.184.216.34/h"]


@pytest.mark.anyio
async def test_a_senders_poster_is_open_while_the_sender_runs() -> None:
    push = sender()
    assert not push.poster.open
    async with push:
        assert push.poster.open
    assert not push.poster.open


@pytest.mark.anyio
async def test_a_poster_delivers_under_the_context_a_queue_kept() -> None:
    kept = {"traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}
    observer = _ContextObserver()
    async with receiving() as rx, WebhookPoster(policy=ALLOW, observer=observer) as poster:
        await poster.send([target(rx.url())], status_event(), TASK, context=kept)
        assert (await poster.attempt(target(rx.url()), status_event(), None)).delivered
    sent = [json.loads(r.header("x-context") or "null") for r in rx.requests]
    assert sent == [kept, "here"]


@pytest.mark.parametrize(
    ("options", "named"),
    [
        ({"timeout": 0}, "timeout"),
        ({"timeout": math.nan}, "timeout"),
        ({"timeout": math.inf}, "timeout"),
        ({"max_concurrent": 0}, "max_concurrent"),
        ({"max_concurrent": 1.5}, "max_concurrent"),
    ],
)
def test_a_poster_refuses_a_wrong_option_by_name(options: dict[str, Any], named: str) -> None:
    with pytest.raises(ValueError, match=f"^{named} must"):
        WebhookPoster(**options)
