"""Fetches of keys and token verdicts from a key server that misbehaves, over real HTTP on
127.0.0.1: a whole-fetch deadline, a bound on the document's size, and a bound on the
introspection questions open at once."""

from __future__ import annotations

import contextlib
import socket
from collections.abc import AsyncIterator

import anyio
import pytest
from aiohttp import web

from a2a_core.auth import CredentialsRejected, Jwks, SchemeSpec, TokenIntrospection
from a2a_core.auth._keys import MAX_DOCUMENT_BYTES, fetch_json
from a2a_core.types import HTTPAuthSecurityScheme, SecurityScheme
from helpers.auth import Issuer, serve_issuer

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # the key server is aiohttp's


@contextlib.asynccontextmanager
async def serve(app: web.Application) -> AsyncIterator[str]:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.bind(("127.0.0.1", 0))
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    try:
        await web.SockSite(runner, sock).start()
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        await runner.cleanup()
        sock.close()


async def test_a_dripping_document_is_abandoned_at_the_deadline() -> None:
    async with serve_issuer(Issuer(drip=0.2)) as issuer:
        started = anyio.current_time()
        with pytest.raises(TimeoutError, match="no complete answer within 1 s"):
            await fetch_json(issuer.jwks_url, timeout=1.0)
        waited = anyio.current_time() - started
    assert 0.9 < waited < 5  # httpx's per-read timeout alone would wait for ever


async def test_a_document_over_the_limit_is_refused() -> None:
    big = b"[" + b"0," * MAX_DOCUMENT_BYTES + b"0]"

    async def declared(request: web.Request) -> web.Response:
        return web.Response(body=big, content_type="application/json")

    async def chunked(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"content-type": "application/json"})
        await response.prepare(request)
        with contextlib.suppress(ConnectionError):
            for start in range(0, len(big), 65536):
                await response.write(big[start : start + 65536])
        return response

    app = web.Application()
    app.router.add_get("/declared", declared)
    app.router.add_get("/chunked", chunked)
    async with serve(app) as url:
        for path in ("/declared", "/chunked"):
            with pytest.raises(ValueError, match=f"document over {MAX_DOCUMENT_BYTES} bytes"):
                await fetch_json(url + path, timeout=5.0)


def _bearer() -> SchemeSpec:
    scheme = SecurityScheme(http_auth_security_scheme=HTTPAuthSecurityScheme(scheme="Bearer"))
    return SchemeSpec.from_declaration("oauth", scheme)


async def test_introspection_questions_are_bounded_in_time_and_number() -> None:
    async with serve_issuer(Issuer(drip=0.2)) as issuer:
        introspection = TokenIntrospection(
            client_id="agent",
            client_secret="agent-secret",
            endpoint=issuer.url + "/introspect",
            timeout=3.0,
            max_concurrent=2,
        )
        outcomes: list[tuple[str, float]] = []

        async def ask(token: str) -> None:
            started = anyio.current_time()
            with pytest.raises(CredentialsRejected) as refused:
                await introspection.introspect(token, _bearer())
            outcomes.append((refused.value.message, anyio.current_time() - started))

        async with anyio.create_task_group() as tg:
            tg.start_soon(ask, "one")
            tg.start_soon(ask, "two")
            await anyio.sleep(0.3)
            await ask("three")  # two questions are open: refused without a third
            refused_at_once = outcomes[-1]
    assert refused_at_once[1] < 1.5  # the open ones take their 3 s deadline
    assert [message for message, _ in outcomes] == ["The token could not be verified"] * 3
    assert all(wait < 8 for _, wait in outcomes)
    assert issuer.introspection_hits == 2
    assert introspection.requests == 2


async def test_a_caller_arriving_during_a_fetch_takes_its_keys() -> None:
    """One fetch for everyone who asked while it ran, however late they came."""
    async with serve_issuer(Issuer(delay=0.5)) as issuer:
        issuer.add_key("k1")
        jwks = Jwks(issuer.jwks_url)
        async with anyio.create_task_group() as tg:
            tg.start_soon(jwks.key, "k1", "RS256")
            await anyio.sleep(0.2)  # the first fetch is under way
            await jwks.key("k1", "RS256")
    assert issuer.jwks_hits == 1
    assert jwks.fetches == 1
