"""The adapters mounted under ``/a2a`` by each framework's own mechanism: Starlette ``Mount``
and ``routes()``, FastAPI ``mount``, aiohttp ``add_subapp`` and ``add_routes(prefix=)``."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import anyio
import pytest

from a2a_core.server import A2AServer, InputRequired, TaskContext
from adapters.contract import (
    Harness,
    Overrides,
    identity_name,
    make_card,
    rpc_body,
    send_params,
    urls_by_binding,
)

pytestmark = pytest.mark.anyio


async def chunks(ctx: TaskContext) -> AsyncIterator[str]:
    yield "one"
    yield "two"


async def test_both_bindings_and_streams_under_the_prefix(mounted: Harness) -> None:
    async with mounted.serve(A2AServer(chunks, card=make_card())) as live:
        rpc = await live.result("SendMessage", send_params())
        rest = await live.rest("POST", "/message:send", send_params(mid="m2"))
        tenant = await live.rest("POST", "/acme/message:send", send_params(mid="m3"))
        got = await live.rest("GET", f"/acme/tasks/{tenant.json()['task']['id']}")
        stream = await live.stream_rpc("SendStreamingMessage", send_params(mid="m4"))
        rest_stream = await live.stream(
            "POST", "/message:stream", json.dumps(send_params(mid="m5")).encode()
        )
        unknown = await live.rest("GET", "/tasks/a/b/c/d/e")
        outside = await live.client.get(f"{mounted.origin}/message:send")
    assert rpc["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
    assert rest.status_code == 200 and rest.json()["task"]["artifacts"]
    assert got.status_code == 200 and got.json()["status"]["state"] == "TASK_STATE_COMPLETED"
    assert stream.headers["content-type"] == "text/event-stream"
    assert stream.data[-1]["result"]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"
    assert rest_stream.data[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"
    assert unknown.status_code == 404 and unknown.json()["error"]["code"] == 404
    assert outside.status_code == 404  # outside the mount: the framework's own 404


async def test_the_bare_prefix(mounted: Harness) -> None:
    """JSON-RPC posted to the mount path without its slash (``POST /a2a``, not the URL the
    card publishes): ``routes()`` and both aiohttp forms serve it; a plain Starlette ``Mount``
    and FastAPI's ``app.mount`` redirect it to the published URL, ``/a2a/``."""
    async with mounted.serve(A2AServer(chunks, card=make_card())) as live:
        bare = await live.client.post(
            mounted.base_url,
            content=rpc_body("SendMessage", send_params()),
            headers={"content-type": "application/json", "a2a-version": "1.0"},
        )
    if mounted.deployment in ("starlette-mount", "fastapi-mount"):
        assert bare.status_code == 307
        assert bare.headers["location"] == mounted.base_url + "/"
    else:
        assert bare.status_code == 200, (bare.status_code, bare.headers)
        assert bare.json()["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"


async def test_escaped_ids_survive_the_prefix(mounted: Harness) -> None:
    server = A2AServer(lambda ctx: InputRequired("?"), card=make_card(push=True))
    async with mounted.serve(server) as live:
        task = (await live.result("SendMessage", send_params()))["task"]
        base = f"/tasks/{task['id']}/pushNotificationConfigs"
        created = await live.rest(
            "POST", base, {"id": "a2a x+é", "url": "https://hooks.example.com/m"}
        )
        got = await live.rest("GET", f"{base}/a2a%20x%2B%C3%A9")
        deleted = await live.rest("DELETE", f"{base}/a2a%20x%2B%C3%A9")
    assert created.status_code == 200, created.text
    assert created.json()["id"] == "a2a x+é"
    assert got.status_code == 200, got.text
    assert got.json()["id"] == "a2a x+é"
    assert deleted.status_code == 200


async def test_overrides_under_the_prefix(mounted: Harness) -> None:
    seen: list[Any] = []

    async def agent(ctx: TaskContext) -> str:
        seen.append((ctx.metadata.get("via"), identity_name(ctx.identity)))
        return "ok"

    def middleware(headers: Any) -> Overrides:
        return Overrides(metadata={"via": "middleware"}, identity=headers.get("x-user"))

    server = A2AServer(agent, card=make_card(), base_url=mounted.base_url)
    async with mounted.serve(server, middleware=middleware) as live:
        await live.result("SendMessage", send_params(), headers={"x-user": "ivy"})
        await live.rest("POST", "/message:send", send_params(mid="m2"))
    assert seen == [("middleware", "ivy"), ("middleware", None)]


async def test_native_authentication_under_the_prefix(mounted: Harness) -> None:
    server = A2AServer(
        lambda ctx: "x",
        card=make_card(extended=True),
        extended_card=lambda identity: make_card(extended=True),
        base_url=mounted.base_url,
    )
    async with mounted.serve(server, native_user=lambda h: h.get("x-user")) as live:
        card = await live.result("GetExtendedAgentCard", headers={"x-user": "jo"})
        anonymous = await live.error("GetExtendedAgentCard")
    assert urls_by_binding(card) == {
        "JSONRPC": {mounted.base_url + "/"},
        "HTTP+JSON": {mounted.base_url},
    }
    assert anonymous["code"] == -32004


async def test_streams_and_disconnects_through_middleware(mounted: Harness) -> None:
    """Streams pass through the application's middleware (for FastAPI, ``@app.middleware``:
    BaseHTTPMiddleware, which relays the stream) and a client leaving mid-stream still leaves
    the task intact."""
    gate = anyio.Event()

    async def agent(ctx: TaskContext) -> AsyncIterator[str]:
        yield f"for {identity_name(ctx.identity)}"
        await gate.wait()
        yield "more"

    def middleware(headers: Any) -> Overrides:
        return Overrides(identity=headers.get("x-user"))

    user = {"x-user": "lee"}
    async with mounted.serve(A2AServer(agent, card=make_card()), middleware=middleware) as live:
        async with live.open_rpc_stream("SendStreamingMessage", send_params(), headers=user) as s:
            first = await s.next_data()
            chunk = await s.next_data()
        task_id = first.data["result"]["task"]["id"]
        gate.set()
        task = await live.wait_for_state(task_id, "TASK_STATE_COMPLETED", headers=user)
        whole = await live.stream_rpc("SendStreamingMessage", send_params(mid="m2"), headers=user)
    assert chunk.data["result"]["artifactUpdate"]["artifact"]["parts"] == [{"text": "for lee"}]
    assert [p["text"] for p in task["artifacts"][0]["parts"]] == ["for lee", "more"]
    assert whole.data[-1]["result"]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"
