"""The ASGI lifespan protocol of ``A2AStarlette``, driven directly as an ASGI server drives it.

The test plays the server's side over memory streams: it sends ``lifespan.startup`` and
``lifespan.shutdown`` and reads what the application sends back. A startup that fails must
be answered with ``lifespan.startup.failed``; once ``lifespan.startup.complete`` went out,
a failure can only be answered with ``lifespan.shutdown.failed`` (ASGI lifespan spec; uvicorn
refuses ``startup.failed`` after ``startup.complete``).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, MutableMapping
from typing import Any

import anyio
import pytest

from a2a_core.errors import LocalProtocolError
from a2a_core.server import A2AServer, TaskContext
from a2a_starlette import A2AStarlette
from adapters.contract import make_card

pytestmark = pytest.mark.anyio

Message = dict[str, Any]
SCOPE = {"type": "lifespan", "asgi": {"version": "3.0", "spec_version": "2.0"}, "state": {}}


async def echo(ctx: TaskContext) -> str:
    return ctx.text


class AsgiServer:
    """The server's side of one lifespan scope: what it sends and what the app sent."""

    def __init__(self) -> None:
        self.to_app, self._app_inbox = anyio.create_memory_object_stream[Message](10)
        self._app_outbox, self._from_app = anyio.create_memory_object_stream[Message](10)
        self.sent_by_app: list[Message] = []
        self.error: Exception | None = None
        """What the application raised, if anything."""

    async def run(self, app: A2AStarlette) -> None:
        async def receive() -> Message:
            return await self._app_inbox.receive()

        async def send(message: MutableMapping[str, Any]) -> None:
            self.sent_by_app.append(dict(message))
            await self._app_outbox.send(dict(message))

        with self._app_inbox, self._app_outbox:
            try:
                await app(SCOPE, receive, send)
            except Exception as exc:
                self.error = exc

    async def reply(self) -> Message:
        """The application's next message."""
        with anyio.fail_after(5):
            return await self._from_app.receive()

    def close(self) -> None:
        self.to_app.close()
        self._from_app.close()


@contextlib.asynccontextmanager
async def lifespan_of(app: A2AStarlette) -> AsyncIterator[AsgiServer]:
    """Run ``app`` in a lifespan scope; the block plays the server. Leaving it waits for the
    application to return."""
    asgi = AsgiServer()
    try:
        with anyio.fail_after(10):
            async with anyio.create_task_group() as tg:
                tg.start_soon(asgi.run, app)
                yield asgi
                asgi.to_app.close()  # a lifespan still waiting for a message ends
    finally:
        asgi.close()


def leaves(error: BaseException | None) -> list[BaseException]:
    """The exceptions in ``error``, out of any (nested) exception group."""
    if isinstance(error, BaseExceptionGroup):
        return [leaf for inner in error.exceptions for leaf in leaves(inner)]
    return [] if error is None else [error]


async def test_startup_and_shutdown_complete() -> None:
    server = A2AServer(echo, card=make_card(push=True))
    async with lifespan_of(A2AStarlette(server)) as asgi:
        await asgi.to_app.send({"type": "lifespan.startup"})
        started = await asgi.reply()
        running = server.running
        await asgi.to_app.send({"type": "lifespan.shutdown"})
        stopped = await asgi.reply()
    assert started == {"type": "lifespan.startup.complete"}
    assert running
    assert stopped == {"type": "lifespan.shutdown.complete"}
    assert asgi.error is None
    assert not server.running


async def test_a_startup_that_fails_is_reported_as_startup_failed() -> None:
    """The server cannot start: it is already running (entered elsewhere). The app answers
    ``startup.failed``, raises the error, and leaves the running server alone."""
    server = A2AServer(echo, card=make_card(push=True))
    async with server:
        async with lifespan_of(A2AStarlette(server)) as asgi:
            await asgi.to_app.send({"type": "lifespan.startup"})
            failed = await asgi.reply()
        still_running = server.running
    assert failed == {"type": "lifespan.startup.failed", "message": "LocalProtocolError"}
    assert asgi.sent_by_app == [failed]  # nothing else: no startup.complete, no shutdown reply
    assert isinstance(asgi.error, LocalProtocolError)
    assert "already running" in str(asgi.error)
    assert still_running


async def test_a_failure_after_startup_is_reported_as_shutdown_failed() -> None:
    """After ``startup.complete`` the server's channel breaks (it ends without sending
    ``lifespan.shutdown``): the app stops the A2A server and answers ``shutdown.failed``,
    never a ``startup.failed`` after a completed startup."""
    server = A2AServer(echo, card=make_card(push=True))
    async with lifespan_of(A2AStarlette(server)) as asgi:
        await asgi.to_app.send({"type": "lifespan.startup"})
        started = await asgi.reply()
        asgi.to_app.close()  # the app's next receive() raises EndOfStream
        failed = await asgi.reply()
    assert started == {"type": "lifespan.startup.complete"}
    # The error left the server's task group, which puts it in an ExceptionGroup.
    assert failed == {"type": "lifespan.shutdown.failed", "message": "ExceptionGroup"}
    assert asgi.sent_by_app == [started, failed]
    assert [type(e) for e in leaves(asgi.error)] == [anyio.EndOfStream]
    assert not server.running
