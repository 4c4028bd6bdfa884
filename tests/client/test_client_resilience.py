"""What keeps calls safe: streams resumed after a real cut, retries of connection failures
only, bounds on what a reply may cost, timeouts, the card cache, credentials placed as the
card says (and refreshed once after a 401), trace context, and an agent calling an agent."""

from __future__ import annotations

import base64
import json
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import parse_qs, urlsplit

import anyio
import httpx
import pytest
from aiohttp import web

from a2a_core.client import (
    A2AClient,
    AgentError,
    CardCache,
    CardError,
    Credentials,
    Endpoint,
    InvalidReplyError,
    OAuthClientCredentials,
    RetryPolicy,
    TransportError,
)
from a2a_core.server import A2AServer, TaskContext
from a2a_core.types import Message, TaskState
from client.raw_agent import raw_agent, task_reply
from helpers.tcp_proxy import TcpProxy
from interop.servers import Served, make_card, serve

pytestmark = pytest.mark.anyio

FAST_RETRY = RetryPolicy(attempts=5, backoff=0.05, max_backoff=0.2, deadline=10)


@pytest.fixture(params=["starlette", "aiohttp"])
async def served(request: pytest.FixtureRequest) -> AsyncIterator[Served]:
    async with serve(request.param) as running:
        yield running


def _through(proxy: TcpProxy, served: Served, binding: str) -> Endpoint:
    parts = urlsplit(served.url)
    url = f"http://127.0.0.1:{proxy.port}{parts.path}"
    if binding == "jsonrpc":
        url = url.rstrip("/") + "/"
    return Endpoint(url, binding, "1.0")  # type: ignore[arg-type]


# --- streams survive a drop ------------------------------------------------------------------


@pytest.mark.parametrize("binding", ["jsonrpc", "rest"])
async def test_a_stream_cut_mid_way_resumes_without_loss_or_repeat(
    served: Served, binding: str
) -> None:
    port = urlsplit(served.url).port
    assert port is not None
    with TcpProxy("127.0.0.1", port) as proxy:
        async with (
            A2AClient(_through(proxy, served, binding), retry=FAST_RETRY) as client,
            await A2AClient.connect(served.url) as direct,
        ):
            received = []
            async for event in client.stream("hold"):
                received.append(event)
                if len(received) == 2:  # the task, then "working": cut the connection
                    proxy.cut()
                    proxy.restore()
                    task_id = event.event.status_update.task_id  # type: ignore[union-attr]
                    await direct.send(f"release {task_id}")
    ids = [int(r.event_id or 0) for r in received]
    assert ids == list(range(1, len(ids) + 1)), ids  # none lost, none repeated
    texts = [
        r.event.artifact_update.artifact.parts[0].text
        for r in received
        if r.event.artifact_update is not None
    ]
    assert texts == ["released"]
    final = received[-1]
    assert final.last
    assert final.event.status_update is not None
    assert final.event.status_update.status.state is TaskState.COMPLETED


async def test_without_resume_a_cut_is_a_transport_error(served: Served) -> None:
    port = urlsplit(served.url).port
    assert port is not None
    with TcpProxy("127.0.0.1", port) as proxy:
        async with (
            A2AClient(_through(proxy, served, "jsonrpc"), resume=False) as client,
            await A2AClient.connect(served.url) as direct,
        ):
            seen: list[str] = []

            async def follow() -> None:
                async for event in client.stream("hold"):
                    if event.event.task is not None:
                        seen.append(event.event.task.id)
                    proxy.cut()

            with pytest.raises(TransportError, match="SendStreamingMessage"):
                await follow()
            task_id = seen[0]
            await direct.send(f"release {task_id}")


def _working_then_cut(with_id: bool) -> Any:
    """A SendStreamingMessage that sends the working task (with or without an SSE id), then
    ends before its last event."""

    async def send(request: web.Request, call: dict[str, Any]) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        task = {"id": "t1", "contextId": "c1", "status": {"state": "TASK_STATE_WORKING"}}
        frame = json.dumps({"jsonrpc": "2.0", "id": call["id"], "result": {"task": task}})
        await response.write((b"id: 7\n" if with_id else b"") + f"data: {frame}\n\n".encode())
        return response

    return send


async def test_a_refused_resumption_of_a_finished_task_ends_with_its_state() -> None:
    # A server with event ids that refuses the subscription (v1.0: a finished task, -32004):
    # the client fetches the task and ends the stream with it.
    async with raw_agent() as agent:
        calls: list[str] = []
        send = _working_then_cut(with_id=True)

        async def rpc(request: web.Request, body: bytes) -> web.StreamResponse:
            call = json.loads(body)
            calls.append(call["method"])
            if call["method"] == "SendStreamingMessage":
                return await send(request, call)
            if call["method"] == "SubscribeToTask":
                assert request.headers["Last-Event-ID"] == "7"
                error = {"code": -32004, "message": "Task is terminal"}
                return web.json_response({"jsonrpc": "2.0", "id": call["id"], "error": error})
            return web.Response(body=task_reply(call["id"]), content_type="application/json")

        agent.rpc = rpc
        async with await A2AClient.connect(agent.url, retry=FAST_RETRY, card_cache=None) as client:
            received = [r async for r in client.stream("hi")]
    assert calls == ["SendStreamingMessage", "SubscribeToTask", "GetTask"]
    assert [r.event.task.status.state for r in received] == [  # type: ignore[union-attr]
        TaskState.WORKING,
        TaskState.COMPLETED,
    ]
    assert received[-1].last


async def test_without_event_ids_a_resumption_starts_from_the_task_as_it_is() -> None:
    # The official servers send no ids: what followed the cut cannot be replayed, so the
    # client subscribes, then fetches the task (what was missed is in it). A send
    # stream resumed by a subscription still ends on input-required, as the send would.
    async with raw_agent() as agent:
        calls: list[str] = []
        send = _working_then_cut(with_id=False)

        async def rpc(request: web.Request, body: bytes) -> web.StreamResponse:
            call = json.loads(body)
            calls.append(call["method"])
            if call["method"] == "SendStreamingMessage":
                return await send(request, call)
            if call["method"] == "GetTask":
                body = task_reply(call["id"], "TASK_STATE_WORKING")
                return web.Response(body=body, content_type="application/json")
            assert "Last-Event-ID" not in request.headers
            response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
            await response.prepare(request)
            status = {"state": "TASK_STATE_INPUT_REQUIRED"}
            update = {"taskId": "t1", "contextId": "c1", "status": status}
            frame = {"jsonrpc": "2.0", "id": call["id"], "result": {"statusUpdate": update}}
            await response.write(f"data: {json.dumps(frame)}\n\n".encode())
            await anyio.sleep(30)  # a subscription stays open across input-required
            return response

        agent.rpc = rpc
        async with await A2AClient.connect(agent.url, retry=FAST_RETRY, card_cache=None) as client:
            with anyio.fail_after(10):
                received = [r async for r in client.stream("hi")]
    assert calls == ["SendStreamingMessage", "SubscribeToTask", "GetTask"]
    assert received[0].event.task is not None and received[1].event.task is not None
    last = received[2].event.status_update
    assert last is not None and last.status.state is TaskState.INPUT_REQUIRED
    assert [r.last for r in received] == [False, False, True]


# --- retries --------------------------------------------------------------------------------


async def test_connection_failures_are_retried_until_the_server_is_back(served: Served) -> None:
    port = urlsplit(served.url).port
    assert port is not None
    with TcpProxy("127.0.0.1", port) as proxy:
        patient = RetryPolicy(attempts=50, backoff=0.05, max_backoff=0.1, deadline=20)
        async with A2AClient(_through(proxy, served, "jsonrpc"), retry=patient) as client:
            proxy.cut()  # new connections are refused

            async def come_back() -> None:
                await anyio.sleep(0.3)
                proxy.restore()

            async with anyio.create_task_group() as tg:
                tg.start_soon(come_back)
                task = await client.send("echo back")
            assert not isinstance(task, Message)
            assert task.status.state is TaskState.COMPLETED


async def test_retries_are_bounded() -> None:
    with TcpProxy("127.0.0.1", 9) as proxy:
        proxy.cut()
        endpoint = Endpoint(f"http://127.0.0.1:{proxy.port}/", "jsonrpc", "1.0")
        policy = RetryPolicy(attempts=3, backoff=0.01, max_backoff=0.01)
        async with A2AClient(endpoint, retry=policy) as client:
            with pytest.raises(TransportError, match=r"GetTask to .* failed: ConnectError"):
                await client.get_task("x")


async def test_a_reply_is_never_retried() -> None:
    async with raw_agent() as agent:

        async def rpc(request: web.Request, body: bytes) -> web.StreamResponse:
            return web.Response(status=503, text="busy", headers={"Retry-After": "1"})

        agent.rpc = rpc
        async with await A2AClient.connect(agent.url, retry=FAST_RETRY) as client:
            with pytest.raises(InvalidReplyError, match="HTTP 503"):
                await client.send("hi")
        assert len(agent.received) == 1


# --- bounds and timeouts ---------------------------------------------------------------------


async def test_a_reply_larger_than_the_limit_is_refused() -> None:
    async with raw_agent() as agent:

        async def rpc(request: web.Request, body: bytes) -> web.StreamResponse:
            return web.Response(body=b" " * 200_000 + task_reply(json.loads(body)["id"]))

        agent.rpc = rpc
        async with await A2AClient.connect(agent.url, max_reply_bytes=100_000) as client:
            with pytest.raises(InvalidReplyError, match="larger than 100000 bytes"):
                await client.get_task("t1")


async def test_an_endless_stream_event_is_refused() -> None:
    async with raw_agent() as agent:

        async def rpc(request: web.Request, body: bytes) -> web.StreamResponse:
            response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
            await response.prepare(request)
            for _ in range(100):
                await response.write(b"data: " + b"x" * 10_000)  # never a blank line
            return response

        agent.rpc = rpc
        async with await A2AClient.connect(agent.url, max_event_bytes=200_000) as client:
            with pytest.raises(InvalidReplyError, match="larger than 200000 bytes"):
                async for _ in client.stream("hi"):
                    pass


async def test_a_call_without_a_reply_times_out(served: Served) -> None:
    async with await A2AClient.connect(served.url, timeout=5) as client:
        with pytest.raises(TransportError, match=r"no reply within 0.3 s"):
            await client.send("hold", timeout=0.3)


# --- the card ----------------------------------------------------------------------------


async def test_the_card_is_revalidated_by_etag() -> None:
    cache = CardCache()
    async with raw_agent() as agent:
        for _ in range(2):
            async with await A2AClient.connect(agent.url, card_cache=cache) as client:
                assert client.card is not None and client.card.name == "Raw"
        assert [r.headers.get("if-none-match") for r in agent.card_requests] == [None, '"card-1"']
    assert len(cache) == 1


async def test_no_card_is_a_card_error() -> None:
    async with raw_agent() as agent:
        with pytest.raises(CardError, match="HTTP 404") as caught:
            await A2AClient.connect(agent.url + "/elsewhere/agent.json")
        assert caught.value.status == 404


async def test_a_signed_card_is_verified(served: Served) -> None:
    from a2a_core.signing import CardSigningKey
    from helpers.auth import public_pem, rsa_key

    private = rsa_key()
    key = CardSigningKey.from_key(private, kid="k1")
    async with serve("starlette", card_signing_key=key, jwks_path="/jwks.json") as signed:
        async with await A2AClient.connect(signed.url, verify_signature=True) as client:
            assert client.card is not None
        pem = public_pem(private).decode()
        async with await A2AClient.connect(signed.url, signing_keys={"k1": pem}) as client:
            assert client.card is not None
        other = public_pem(rsa_key()).decode()
        with pytest.raises(CardError, match="not signed by a trusted key"):
            await A2AClient.connect(signed.url, signing_keys={"k1": other}, card_cache=None)
    with pytest.raises(CardError, match="no signature"):
        await A2AClient.connect(served.url, verify_signature=True, card_cache=None)


# --- credentials ----------------------------------------------------------------------------

SCHEMES = {
    "key": {"apiKeySecurityScheme": {"location": "query", "name": "k"}},
    "cookieKey": {"apiKeySecurityScheme": {"location": "cookie", "name": "session"}},
    "basic": {"httpAuthSecurityScheme": {"scheme": "Basic"}},
}


@pytest.mark.parametrize(
    ("requirements", "credentials", "check"),
    [
        (
            [{"schemes": {"key": {}}}],
            Credentials(api_key="s3cret"),
            lambda r: parse_qs(urlsplit(r.path_qs).query) == {"k": ["s3cret"]},
        ),
        (
            [{"schemes": {"basic": {}}}, {"schemes": {"cookieKey": {}}}],
            Credentials(api_key="s3cret"),
            lambda r: r.cookies == {"session": "s3cret"} and "authorization" not in r.headers,
        ),
        (
            [{"schemes": {"basic": {}}}],
            Credentials(basic=("ada", "pw")),
            lambda r: r.headers["authorization"] == "Basic " + base64.b64encode(b"ada:pw").decode(),
        ),
        (
            [],
            Credentials(bearer_token="tok", api_key="kk"),
            lambda r: r.headers["authorization"] == "Bearer tok" and r.headers["x-api-key"] == "kk",
        ),
    ],
    ids=["api-key-in-query", "second-alternative-cookie", "basic", "no-requirement"],
)
async def test_credentials_go_where_the_card_says(
    requirements: list[object], credentials: Credentials, check: object
) -> None:
    async with raw_agent(securitySchemes=SCHEMES, securityRequirements=requirements) as agent:

        async def rpc(request: web.Request, body: bytes) -> web.StreamResponse:
            return web.Response(body=task_reply(json.loads(body)["id"]))

        agent.rpc = rpc
        async with await A2AClient.connect(
            agent.url, credentials=credentials, card_cache=None
        ) as client:
            await client.get_task("t1")
    assert check(agent.received[0])  # type: ignore[operator]
    assert not any("s3cret" in r.path_qs or "tok" in r.path_qs for r in agent.card_requests)


async def test_oauth_tokens_are_fetched_cached_and_refreshed_once_after_a_401() -> None:
    tokens_issued: list[str] = []
    async with raw_agent() as agent:
        token_url = agent.url + "/token"
        agent.card["securitySchemes"] = {
            "oauth": {
                "oauth2SecurityScheme": {
                    "flows": {"clientCredentials": {"tokenUrl": token_url, "scopes": {"a": "A"}}}
                }
            }
        }
        agent.card["securityRequirements"] = [{"schemes": {"oauth": {"list": ["a"]}}}]

        async def token(request: web.Request, body: bytes) -> web.StreamResponse:
            assert (
                request.headers["Authorization"]
                == "Basic " + base64.b64encode(b"app:pw%2B1").decode()
            )
            assert parse_qs(body.decode()) == {"grant_type": ["client_credentials"], "scope": ["a"]}
            tokens_issued.append(f"tok-{len(tokens_issued) + 1}")
            return web.json_response({"access_token": tokens_issued[-1], "expires_in": 3600})

        async def rpc(request: web.Request, body: bytes) -> web.StreamResponse:
            # The first token is revoked on the server's side: 401 until a fresh one comes.
            if request.headers.get("Authorization") != "Bearer tok-2":
                return web.Response(status=401, headers={"WWW-Authenticate": "Bearer"})
            return web.Response(body=task_reply(json.loads(body)["id"]))

        agent.routes["/token"] = token
        agent.rpc = rpc
        oauth = OAuthClientCredentials("app", "pw+1", scopes=("a",))
        async with await A2AClient.connect(
            agent.url, credentials=Credentials(oauth=oauth), card_cache=None
        ) as client:
            await client.get_task("t1")
            await client.get_task("t1")  # the cached token
        assert tokens_issued == ["tok-1", "tok-2"]
        rpc_auth = [r.headers.get("authorization") for r in agent.received if r.path_qs == "/rpc"]
        assert rpc_auth == ["Bearer tok-1", "Bearer tok-2", "Bearer tok-2"]


async def test_a_401_without_refreshable_credentials_is_the_agents_error(served: Served) -> None:
    async with raw_agent() as agent:

        async def rpc(request: web.Request, body: bytes) -> web.StreamResponse:
            error = {"code": -32041, "message": "Authentication required"}
            return web.json_response(
                {"jsonrpc": "2.0", "id": json.loads(body)["id"], "error": error}, status=401
            )

        agent.rpc = rpc
        async with await A2AClient.connect(
            agent.url, credentials=Credentials(bearer_token="stale")
        ) as client:
            with pytest.raises(AgentError) as caught:
                await client.get_task("t1")
        assert caught.value.http_status == 401
        assert caught.value.reason == "UNAUTHENTICATED"
        assert len(agent.received) == 1


# --- trace context --------------------------------------------------------------------------


async def test_trace_context_is_propagated_when_opentelemetry_is_active() -> None:
    from opentelemetry.sdk.trace import TracerProvider

    tracer = TracerProvider().get_tracer("test")
    async with raw_agent() as agent:

        async def rpc(request: web.Request, body: bytes) -> web.StreamResponse:
            return web.Response(body=task_reply(json.loads(body)["id"]))

        agent.rpc = rpc
        async with await A2AClient.connect(agent.url) as client:
            with tracer.start_as_current_span("caller") as span:
                await client.get_task("t1")
            trace_id = format(span.get_span_context().trace_id, "032x")
    assert agent.received[0].headers["traceparent"].split("-")[1] == trace_id


# --- an agent calling an agent ---------------------------------------------------------------


async def test_an_agent_calls_another_and_its_errors_stay_its_own(served: Served) -> None:
    async def relay(ctx: TaskContext) -> str:
        async with await A2AClient.connect(served.url) as other:
            if ctx.text == "lookup":
                await other.get_task("no-such-task")  # TaskNotFound there, not here
            reply = await other.send(f"echo {ctx.text}")
        assert not isinstance(reply, Message)
        return f"relayed: {reply.artifacts[0].parts[0].text}"

    server = A2AServer(relay, card=make_card(), base_url="http://127.0.0.1/")
    from a2a_starlette import A2AStarlette

    transport = httpx.ASGITransport(app=A2AStarlette(server))
    async with httpx.AsyncClient(transport=transport, base_url="http://relay") as http:
        endpoint = Endpoint("http://relay/", "jsonrpc", "1.0")
        async with server, A2AClient(endpoint, http=http) as client:
            task = await client.send("hello")
            assert not isinstance(task, Message)
            assert task.artifacts[0].parts[0].text == "relayed: hello"
            failed = await client.send("lookup")
    # The other agent's TaskNotFound is an AgentError, not an A2AError: the relay's task
    # fails, and its caller is not told that *its* task was not found.
    assert not isinstance(failed, Message)
    assert failed.status.state is TaskState.FAILED
