"""Mounting the Starlette adapter into an application, over real HTTP (uvicorn on
127.0.0.1): the mistake of a mount whose lifespan never runs, and `A2AStarlette.mount`,
which makes the right way the easy way."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
from collections.abc import AsyncIterator
from typing import Any

import anyio
import httpx
import pytest
import uvicorn
from fastapi import FastAPI, Request
from jsonschema import Draft202012Validator

from a2a_core.server import A2AServer, TaskContext
from a2a_starlette import A2AStarlette
from adapters.contract import make_card, rpc_body, send_params

pytestmark = pytest.mark.anyio

JSONRPC = {"content-type": "application/json", "a2a-version": "1.0"}


async def echo(ctx: TaskContext) -> str:
    return ctx.text


@contextlib.asynccontextmanager
async def served(app: Any) -> AsyncIterator[str]:
    """``app`` under uvicorn on a free 127.0.0.1 port until the block ends; its origin."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config = uvicorn.Config(app, lifespan="on", log_config=None, access_log=False)
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve(sockets=[sock]))
    try:
        with anyio.fail_after(10):
            while not server.started:
                assert not task.done(), "uvicorn did not start"
                await asyncio.sleep(0.01)
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        await task
        sock.close()


async def test_a_mount_whose_lifespan_never_ran_answers_503_saying_what_to_add(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.ERROR, "a2a_core.server")
    server = A2AServer(echo, card=make_card(), base_url="http://unused.test/a2a")
    app = FastAPI()  # no lifespan=: Starlette never runs the mounted app's
    app.mount("/a2a", A2AStarlette(server))
    async with served(app) as origin, httpx.AsyncClient(base_url=origin) as client:
        sent = await client.post("/a2a/", content=rpc_body("SendMessage", send_params()),
                                 headers=JSONRPC)  # fmt: skip
        rest = await client.post("/a2a/message:send", json=send_params(), headers=JSONRPC)
        card = await client.get("/a2a/.well-known/agent-card.json")
    assert not server.running
    assert sent.status_code == 503
    error = sent.json()["error"]
    assert error["code"] == -32050
    assert ".mount(app, '/a2a')" in error["message"] and "lifespan=" in error["message"]
    assert rest.status_code == 503 and "not started" in rest.json()["error"]["message"]
    assert card.status_code == 200  # the card needs nothing running
    logged = [r.getMessage() for r in caplog.records if r.name == "a2a_core.server"]
    assert len(logged) == 1 and "not started" in logged[0]  # once, not per request


async def test_mount_runs_the_server_with_the_app_and_keeps_the_apps_lifespan() -> None:
    events: list[str] = []
    server = A2AServer(echo, card=make_card(), base_url="http://unused.test/a2a")

    @contextlib.asynccontextmanager
    async def own(app: FastAPI) -> AsyncIterator[dict[str, Any]]:
        events.append(f"app starts, A2A server running: {server.running}")
        yield {"greeting": "hello"}
        events.append(f"app stops, A2A server running: {server.running}")

    app = FastAPI(lifespan=own)

    @app.get("/greeting")
    async def greeting(request: Request) -> str:
        return str(request.state.greeting)  # the app's own lifespan state still arrives

    A2AStarlette(server).mount(app, "/a2a")
    async with served(app) as origin, httpx.AsyncClient(base_url=origin) as client:
        running = server.running
        sent = await client.post("/a2a", content=rpc_body("SendMessage", send_params()),
                                 headers=JSONRPC)  # fmt: skip
        said = await client.get("/greeting")
    assert running
    assert sent.status_code == 200
    assert sent.json()["result"]["task"]["artifacts"][0]["parts"] == [{"text": "hi"}]
    assert said.json() == "hello"
    assert events == [
        "app starts, A2A server running: True",
        "app stops, A2A server running: True",
    ]
    assert not server.running  # stopped after the app's own lifespan ended


async def test_mount_and_lifespan_together_are_refused_at_start() -> None:
    """Both ways at once would start the server twice: the app does not start, and says
    why (rather than serving with one of them silently ignored)."""
    server = A2AServer(echo, card=make_card(), base_url="http://unused.test/a2a")
    a2a = A2AStarlette(server)
    app = FastAPI(lifespan=a2a.lifespan)
    a2a.mount(app, "/a2a")
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.bind(("127.0.0.1", 0))
    uv = uvicorn.Server(uvicorn.Config(app, lifespan="on", log_config=None))
    with sock, anyio.fail_after(10), pytest.raises(SystemExit) as exited:
        await uv.serve(sockets=[sock])  # uvicorn exits: the lifespan's startup failed
    assert exited.value.code == 3  # uvicorn's STARTUP_FAILURE
    assert not uv.started
    assert not server.running


def _schema_of(document: dict[str, Any], ref: dict[str, Any]) -> Draft202012Validator:
    """A validator for ``ref`` (``{"$ref": "#/components/schemas/..."}``) in ``document``."""
    return Draft202012Validator({**ref, "components": document["components"]})


async def test_mount_lists_the_a2a_routes_in_fastapis_openapi_document() -> None:
    server = A2AServer(echo, card=make_card(), base_url="http://unused.test/a2a")
    app = FastAPI(title="Mine")

    @app.get("/greeting")
    async def greeting() -> str:
        return "hello"

    A2AStarlette(server).mount(app, "/a2a")
    async with served(app) as origin, httpx.AsyncClient(base_url=origin) as client:
        document = (await client.get("/openapi.json")).json()
        again = (await client.get("/openapi.json")).json()
        sent = await client.post("/a2a/message:send", json=send_params(), headers=JSONRPC)
        card = await client.get("/a2a/.well-known/agent-card.json")
    paths = document["paths"]
    assert "/greeting" in paths  # the app's own routes stay
    assert again == document  # merged once
    assert set(paths["/a2a/tasks/{id}"]) == {"get"}
    assert set(paths["/a2a/message:send"]) == {"post"}
    assert "post" in paths["/a2a/"] and "get" in paths["/a2a/.well-known/agent-card.json"]
    # make_card() enables streaming, not push notifications: only what is served is listed.
    assert "/a2a/message:stream" in paths
    assert not [p for p in paths if "pushNotificationConfigs" in p]
    schemas = document["components"]["schemas"]
    assert all(name.startswith("A2A") for name in schemas if name not in ("HTTPValidationError",
                                                                         "ValidationError"))  # fmt: skip
    for schema in schemas.values():
        Draft202012Validator.check_schema(schema)
    # What the server answers is what the document says it answers.
    send = paths["/a2a/message:send"]["post"]
    reply_ref = send["responses"]["200"]["content"]["application/json"]["schema"]
    _schema_of(document, reply_ref).validate(sent.json())
    card_ref = paths["/a2a/.well-known/agent-card.json"]["get"]["responses"]["200"]["content"][
        "application/json"
    ]["schema"]
    _schema_of(document, card_ref).validate(card.json())
    # And what a client sends, the document accepts.
    body_ref = send["requestBody"]["content"]["application/json"]["schema"]
    _schema_of(document, body_ref).validate(send_params())
