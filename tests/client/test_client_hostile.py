"""A hostile server against the client: decompression bombs, oversized and broken signing
keys, endless SSE lines, credentials the card or a redirect would send elsewhere, and header
values that would smuggle a credential into an error message.

Every server is real (aiohttp on 127.0.0.1, `raw_agent`); a host other than loopback is
reached through one of them acting as the client's HTTP proxy, so that what would have
crossed the network is recorded instead.
"""

from __future__ import annotations

import functools
import gzip
import json
import tracemalloc
import zlib
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import httpx
import pytest
from aiohttp import web
from cryptography.hazmat.primitives.asymmetric import ec

from a2a_core.client import (
    A2AClient,
    CardError,
    ClientError,
    CredentialPolicy,
    CredentialRefusedError,
    Credentials,
    Endpoint,
    InvalidReplyError,
    OAuthClientCredentials,
    StreamDecoder,
)
from a2a_core.operations import Operation
from a2a_core.signing import CardSigningKey
from a2a_core.types import Message
from client.raw_agent import RawAgent, raw_agent, task_reply, v1_card

pytestmark = pytest.mark.anyio

MiB = 1024 * 1024
#: What a bomb inflates to: far past every bound, cheap to build and to send.
BOMB_BYTES = 200 * MiB
#: The most a refused bomb may cost in Python allocations (the bounds are 1 to 4 MiB; an
#: inflated bomb is 200 MiB).
BOMB_PEAK_LIMIT = 40 * MiB


@functools.cache
def gzip_bomb(prefix: bytes = b"") -> bytes:
    """``prefix`` and 200 MiB of zeros, gzipped twice: about 2.5 KiB on the wire."""
    inner = zlib.compressobj(1, zlib.DEFLATED, zlib.MAX_WBITS | 16)
    zeros = bytes(MiB)
    parts = [inner.compress(prefix), *(inner.compress(zeros) for _ in range(BOMB_BYTES // MiB))]
    return gzip.compress(b"".join([*parts, inner.flush()]))


@functools.cache
def zstd_bomb() -> bytes:
    """200 MiB of zeros as zstd: about 6 KiB on the wire."""
    zstandard = pytest.importorskip("zstandard")
    compressor = zstandard.ZstdCompressor(level=3).compressobj()
    zeros = bytes(MiB)
    parts = [compressor.compress(zeros) for _ in range(BOMB_BYTES // MiB)]
    return b"".join([*parts, compressor.flush()])


def answer(body: bytes, encoding: str, content_type: str = "application/json") -> Any:
    """A handler that sends ``body`` as it is, labelled with ``encoding``."""

    async def handler(request: web.Request, _: bytes) -> web.StreamResponse:
        headers = {"Content-Encoding": encoding, "Content-Type": content_type}
        return web.Response(body=body, headers=headers)

    return handler


async def peak_allocations(call: Callable[[], Awaitable[Any]]) -> tuple[BaseException, int]:
    """The error ``call`` raised and the peak of Python allocations while it ran."""
    tracemalloc.start()
    try:
        await call()
    except Exception as exc:
        return exc, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    raise AssertionError("the call succeeded")


def signed_card(agent: RawAgent, key: CardSigningKey) -> None:
    """Sign the agent's card with ``key``, its JWKS named at ``/jwks.json``."""
    agent.card.pop("signatures", None)
    signature = key.sign_document(agent.card, jku=agent.url + "/jwks.json")
    agent.card["signatures"] = [
        {"protected": signature.protected, "signature": signature.signature}
    ]


def oauth_card(agent: RawAgent, token_url: str) -> None:
    agent.card["securitySchemes"] = {
        "oauth": {
            "oauth2SecurityScheme": {
                "flows": {"clientCredentials": {"tokenUrl": token_url, "scopes": {}}}
            }
        }
    }
    agent.card["securityRequirements"] = [{"schemes": {"oauth": {}}}]


async def tasks(request: web.Request, body: bytes) -> web.StreamResponse:
    return web.Response(body=task_reply(json.loads(body)["id"]), content_type="application/json")


# --- #4: every body is bounded as it is decoded ---------------------------------------------


async def _reply_bomb(agent: RawAgent, encoding: str, body: bytes) -> None:
    agent.rpc = answer(body, encoding)
    async with await A2AClient.connect(
        agent.url, card_cache=None, max_reply_bytes=4 * MiB
    ) as client:
        await client.get_task("t1")


async def _stream_bomb(agent: RawAgent, encoding: str, body: bytes) -> None:
    agent.rpc = answer(body, encoding, "text/event-stream")
    async with await A2AClient.connect(
        agent.url, card_cache=None, max_event_bytes=4 * MiB
    ) as client:
        async for _ in client.stream("hi"):
            pass


async def _card_bomb(agent: RawAgent, encoding: str, body: bytes) -> None:
    agent.routes["/bomb/agent.json"] = answer(body, encoding)
    await A2AClient.connect(agent.url + "/bomb/agent.json", card_cache=None)


async def _jwks_bomb(agent: RawAgent, encoding: str, body: bytes) -> None:
    signed_card(agent, CardSigningKey.from_key(ec.generate_private_key(ec.SECP256R1()), kid="k1"))
    agent.routes["/jwks.json"] = answer(body, encoding)
    await A2AClient.connect(agent.url, card_cache=None, verify_signature=True)


async def _token_bomb(agent: RawAgent, encoding: str, body: bytes) -> None:
    oauth_card(agent, agent.url + "/token")
    agent.routes["/token"] = answer(body, encoding)
    agent.rpc = tasks
    credentials = Credentials(oauth=OAuthClientCredentials("app", "pw"))
    async with await A2AClient.connect(
        agent.url, card_cache=None, credentials=credentials
    ) as client:
        await client.get_task("t1")


BOMB_TARGETS = {
    "reply": (_reply_bomb, InvalidReplyError, "larger than 4194304 bytes"),
    "stream": (_stream_bomb, InvalidReplyError, "larger than 4194304 bytes"),
    "card": (_card_bomb, CardError, "larger than 4194304 bytes"),
    "jwks": (_jwks_bomb, CardError, "larger than 1048576 bytes"),
    "oauth-token": (_token_bomb, ClientError, "more than 1048576 bytes"),
}


@pytest.mark.parametrize("target", BOMB_TARGETS)
async def test_a_gzip_of_gzip_bomb_is_refused_before_it_inflates(target: str) -> None:
    fetch, error, message = BOMB_TARGETS[target]
    prefix = b"data: " if target == "stream" else b""
    body = gzip_bomb(prefix)
    assert len(body) < 4096
    async with raw_agent() as agent:
        raised, peak = await peak_allocations(lambda: fetch(agent, "gzip, gzip", body))
    assert isinstance(raised, error), repr(raised)
    assert message in str(raised)
    # Refused at its bound: nothing near the 200 MiB the bomb holds was ever allocated.
    assert peak < BOMB_PEAK_LIMIT, f"{peak / MiB:.0f} MiB allocated"


async def test_codings_stacked_past_three_are_refused_before_any_is_undone() -> None:
    body = b"{}"
    for _ in range(4):
        body = gzip.compress(body)
    async with raw_agent() as agent:
        with pytest.raises(InvalidReplyError, match="names 4 codings"):
            await _reply_bomb(agent, "gzip, gzip, gzip, gzip", body)
        with pytest.raises(InvalidReplyError, match="names 5000 codings"):
            await _reply_bomb(agent, ", ".join(["gzip"] * 5000), body)


@pytest.mark.parametrize("target", ["reply", "card", "oauth-token"])
async def test_a_zstd_bomb_is_refused_without_decoding_it(target: str) -> None:
    # zlib bounds what it inflates; the zstd binding does not, so the client neither asks
    # for zstd nor decodes it.
    fetch, _, _ = BOMB_TARGETS[target]
    body = zstd_bomb()
    async with raw_agent() as agent:
        raised, peak = await peak_allocations(lambda: fetch(agent, "zstd", body))
        asked = {r.headers.get("accept-encoding") for r in agent.received + agent.card_requests}
    assert isinstance(raised, ClientError), repr(raised)
    assert "Content-Encoding zstd is not one the client accepts" in str(raised)
    assert peak < BOMB_PEAK_LIMIT, f"{peak / MiB:.0f} MiB allocated"
    assert asked == {"gzip, deflate"}


async def test_a_gzipped_stream_delivers_each_event_as_it_is_flushed() -> None:
    # Decoding in bounded pieces must not hold back the end of an event until more bytes
    # come: the first event is read while the server still holds the stream open.
    released = anyio.Event()

    async def rpc(request: web.Request, body: bytes) -> web.StreamResponse:
        call = json.loads(body)
        response = web.StreamResponse(
            headers={"Content-Type": "text/event-stream", "Content-Encoding": "gzip"}
        )
        await response.prepare(request)
        compressor = zlib.compressobj(6, zlib.DEFLATED, zlib.MAX_WBITS | 16)
        for state in ("TASK_STATE_WORKING", "TASK_STATE_COMPLETED"):
            task = {"id": "t1", "contextId": "c1", "status": {"state": state}}
            frame = json.dumps({"jsonrpc": "2.0", "id": call["id"], "result": {"task": task}})
            data = compressor.compress(f"data: {frame}\n\n".encode())
            await response.write(data + compressor.flush(zlib.Z_SYNC_FLUSH))
            await released.wait()
        await response.write(compressor.flush())
        return response

    async with raw_agent() as agent:
        agent.rpc = rpc
        async with await A2AClient.connect(agent.url, card_cache=None) as client:
            states = []
            with anyio.fail_after(10):
                async for received in client.stream("hi"):
                    assert received.event.task is not None
                    states.append(received.event.task.status.state.value)
                    released.set()
    assert states == ["TASK_STATE_WORKING", "TASK_STATE_COMPLETED"]
    # Only what the client decodes within a bound is asked for (httpx adds zstd, br).
    assert agent.received[0].headers["accept-encoding"] == "gzip, deflate"


# --- #6: SSE lines are split in linear time ---------------------------------------------------


def _message_event(text_bytes: int) -> bytes:
    message = {"messageId": "m1", "role": "ROLE_AGENT", "parts": [{"text": "x" * text_bytes}]}
    return json.dumps({"jsonrpc": "2.0", "id": 1, "result": {"message": message}}).encode()


async def test_a_16_mib_line_in_4_kib_chunks_parses_in_linear_time() -> None:
    # Re-scanning the whole pending line at every chunk took over a minute for this; a
    # linear parser takes well under a second. The deadline is far from either.
    decoder = StreamDecoder(
        Operation.SEND_STREAMING_MESSAGE, Endpoint("http://agent.test/", "jsonrpc", "1.0")
    )
    stream = b"data: " + _message_event(16 * MiB) + b"\n\n"
    events = []
    with anyio.fail_after(30):
        for start in range(0, len(stream), 4096):
            events += decoder.feed(stream[start : start + 4096])
            await anyio.lowlevel.checkpoint()  # where the deadline can cancel
    assert len(events) == 1 and events[0].last
    message = events[0].event.message
    assert message is not None and len(message.parts[0].text or "") == 16 * MiB


async def test_a_24_mib_event_from_a_server_arrives_within_the_deadline() -> None:
    event = b"data: " + _message_event(24 * MiB) + b"\n\n"

    async def rpc(request: web.Request, body: bytes) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        for start in range(0, len(event), 4096):
            await response.write(event[start : start + 4096])
        return response

    async with raw_agent() as agent:
        agent.rpc = rpc
        async with await A2AClient.connect(agent.url, card_cache=None) as client:
            with anyio.fail_after(20):  # quadratic splitting: about 40 s of CPU
                received = [r async for r in client.stream("hi")]
    assert len(received) == 1
    assert isinstance(received[0].event.message, Message)
    assert len(received[0].event.message.parts[0].text or "") == 24 * MiB


# --- #7: the signing key set is bounded and its errors are the client's -----------------------


def _ec_key() -> CardSigningKey:
    return CardSigningKey.from_key(ec.generate_private_key(ec.SECP256R1()), kid="k1")


def _serve_jwks(agent: RawAgent, document: dict[str, Any]) -> None:
    async def jwks(request: web.Request, body: bytes) -> web.StreamResponse:
        return web.json_response(document)

    agent.routes["/jwks.json"] = jwks


@pytest.mark.parametrize(
    ("make_document", "message"),
    [
        (
            lambda key: {"keys": [key.public_jwk], "padding": "x" * (2 * MiB)},
            "larger than 1048576 bytes",
        ),
        (
            lambda key: {"keys": [{**key.public_jwk, "kid": f"k{i}"} for i in range(1, 66)]},
            "more than 64 keys",
        ),
        (
            # The same key, but moved off its curve: PyJWT raises its own InvalidKeyError.
            lambda key: {"keys": [{**key.public_jwk, "y": key.public_jwk["x"]}]},
            "cannot be used",
        ),
    ],
    ids=["over-1-mib", "too-many-keys", "ec-key-off-its-curve"],
)
async def test_a_hostile_signing_key_set_is_a_card_error(
    make_document: Callable[[CardSigningKey], dict[str, Any]], message: str
) -> None:
    key = _ec_key()
    async with raw_agent() as agent:
        signed_card(agent, key)
        # The same key set, well formed, verifies the card: the refusals below are the set's.
        _serve_jwks(agent, {"keys": [key.public_jwk]})
        async with await A2AClient.connect(agent.url, card_cache=None, verify_signature=True):
            pass
        _serve_jwks(agent, make_document(key))
        with pytest.raises(CardError, match=message):
            await A2AClient.connect(agent.url, card_cache=None, verify_signature=True)


# --- #5: credentials go only where the rule allows -------------------------------------------


async def test_an_oauth_secret_never_goes_to_a_plain_http_token_url_off_loopback() -> None:
    async with raw_agent() as proxy:
        # The agent and its token endpoint are hosts other than loopback, reached through the
        # proxy, which records what would have crossed the network.
        proxy.card = v1_card("http://agent.test/rpc")
        oauth_card(proxy, "http://auth.test/token")

        async def token(request: web.Request, body: bytes) -> web.StreamResponse:
            return web.json_response({"access_token": "tok-1", "expires_in": 3600})

        proxy.routes["/token"] = token
        proxy.rpc = tasks
        credentials = Credentials(oauth=OAuthClientCredentials("app", "s3cret"))
        async with httpx.AsyncClient(proxy=proxy.url) as http:
            async with await A2AClient.connect(
                "http://agent.test", http=http, card_cache=None, credentials=credentials
            ) as client:
                with pytest.raises(CredentialRefusedError) as refused:
                    await client.get_task("t1")
            assert proxy.received == []  # neither the token endpoint nor the agent was asked
            assert "credential_origins=['http://" in str(refused.value)

            # Allowed explicitly, both get what they need.
            async with await A2AClient.connect(
                "http://agent.test",
                http=http,
                card_cache=None,
                credentials=credentials,
                credential_origins=["http://auth.test", "http://agent.test"],
            ) as client:
                await client.get_task("t1")
    assert [r.path_qs for r in proxy.received] == ["/token", "/rpc"]
    assert proxy.received[1].headers["authorization"] == "Bearer tok-1"


async def test_a_token_never_goes_over_plain_http_off_loopback() -> None:
    async with raw_agent() as proxy:
        proxy.rpc = tasks
        endpoint = Endpoint("http://agent.test/rpc", "jsonrpc", "1.0")
        credentials = Credentials(bearer_token="s3cret")
        async with httpx.AsyncClient(proxy=proxy.url) as http:
            async with A2AClient(endpoint, http=http, credentials=credentials) as client:
                with pytest.raises(CredentialRefusedError, match="plain http"):
                    await client.get_task("t1")
            assert proxy.received == []
            # Without credentials the same call is made: only the secret is held back.
            async with A2AClient(endpoint, http=http) as client:
                await client.get_task("t1")
    assert "authorization" not in proxy.received[0].headers


async def test_an_api_key_never_goes_to_an_interface_at_another_origin_unless_allowed() -> None:
    async with raw_agent() as card_host, raw_agent() as other:
        # The card is read from one host and names an interface on another (``localhost``
        # is another host name than ``127.0.0.1``, whatever it resolves to).
        elsewhere = other.url.replace("127.0.0.1", "localhost")
        card_host.card = v1_card(elsewhere + "/rpc")
        other.rpc = tasks
        credentials = Credentials(api_key="s3cret")
        async with await A2AClient.connect(
            card_host.url, card_cache=None, credentials=credentials
        ) as client:
            with pytest.raises(CredentialRefusedError, match="another host"):
                await client.get_task("t1")
        assert other.received == []
        async with await A2AClient.connect(
            card_host.url, card_cache=None, credentials=credentials, credential_origins=[elsewhere]
        ) as client:
            await client.get_task("t1")
        assert other.received[0].headers["x-api-key"] == "s3cret"
        # The same host on another port (gRPC beside HTTP, say) is the caller's host.
        card_host.card = v1_card(other.url + "/rpc")
        async with await A2AClient.connect(
            card_host.url, card_cache=None, credentials=credentials
        ) as client:
            await client.get_task("t1")
        assert other.received[1].headers["x-api-key"] == "s3cret"


@pytest.mark.parametrize(
    ("url", "allowed", "refused"),
    [
        ("https://auth.example/token", (), False),  # another origin, over https
        ("http://127.0.0.1:9/token", (), False),  # loopback
        ("http://[::1]:9/token", (), False),
        ("http://localhost:9/token", (), False),
        ("http://auth.example/token", (), True),  # plain http off loopback
        ("http://auth.example/token", ("http://auth.example:80",), False),  # allowed
        ("http://10.0.0.1/token", ("http://auth.example",), True),
    ],
)
async def test_the_token_url_rule(url: str, allowed: tuple[str, ...], refused: bool) -> None:
    from a2a_core.client import TokenSource

    source = TokenSource(OAuthClientCredentials("app", "pw"), credential_origins=allowed)
    # A transport that answers 599: a URL the rule allows gets that answer, and refuses it.
    transport = httpx.MockTransport(lambda request: httpx.Response(599))
    async with httpx.AsyncClient(transport=transport) as http:
        with pytest.raises(ClientError) as caught:
            await source.token(http, url)
    assert isinstance(caught.value, CredentialRefusedError) is refused


async def test_the_interface_rule_compares_hosts() -> None:
    policy = CredentialPolicy.of("https://agent.example/a2a/agent.json")
    policy.check_interface("https://agent.example:443/rpc")  # the same origin
    policy.check_interface("https://agent.example:8443/rpc")  # the same host
    with pytest.raises(CredentialRefusedError, match="another host"):
        policy.check_interface("https://agent.example.evil.test/rpc")
    with pytest.raises(CredentialRefusedError, match="plain http"):
        policy.check_interface("http://agent.example/rpc")


@pytest.mark.parametrize(
    ("url", "allowed", "refused"),
    [
        ("https://collector.evil.test/token", (), True),  # named by a card: any URL
        ("https://agent.example:8443/token", (), False),  # on the card's host
        ("https://auth.example/token", ("https://auth.example",), False),  # allowed
    ],
)
async def test_a_token_url_the_card_names_gets_the_secret_only_where_allowed(
    url: str, allowed: tuple[str, ...], refused: bool
) -> None:
    from a2a_core.client import TokenSource

    source = TokenSource(
        OAuthClientCredentials("app", "pw"),
        credential_origins=allowed,
        home="https://agent.example/.well-known/agent-card.json",
    )
    transport = httpx.MockTransport(lambda request: httpx.Response(599))
    async with httpx.AsyncClient(transport=transport) as http:
        with pytest.raises(ClientError) as caught:
            await source.token(http, url, named_by_card=True)
    assert isinstance(caught.value, CredentialRefusedError) is refused
    if refused:
        assert "token_url=" in str(caught.value) and "pw" not in str(caught.value)


# --- #10: a redirect never carries a credential header to another origin ----------------------


async def test_a_redirect_to_another_origin_drops_the_api_key_and_the_callers_headers() -> None:
    async with raw_agent() as first, raw_agent() as second:

        def redirect(to: str) -> Any:
            async def handler(request: web.Request, body: bytes) -> web.StreamResponse:
                return web.Response(status=307, headers={"Location": to})

            return handler

        first.routes["/rpc"] = redirect(second.url + "/rpc")  # another port: another origin
        first.routes["/moved"] = redirect(first.url + "/rpc2")  # the same origin
        first.routes["/rpc2"] = tasks
        second.rpc = tasks
        credentials = Credentials(api_key="s3cret")
        moved = Endpoint(first.url + "/moved", "jsonrpc", "1.0")
        # A header of the caller's own may be a secret too.
        own = {"X-Tenant-Token": "t0ken"}
        async with (
            httpx.AsyncClient(follow_redirects=True) as http,
            await A2AClient.connect(
                first.url, http=http, card_cache=None, credentials=credentials, headers=own
            ) as client,
            A2AClient(moved, http=http, credentials=credentials, headers=own) as same_origin,
        ):
            task = await client.get_task("t1")
            assert task.id == "t1"
            await same_origin.get_task("t1")
    assert first.received[0].headers["x-api-key"] == "s3cret"
    assert [r.path_qs for r in second.received] == ["/rpc"]
    assert "x-api-key" not in second.received[0].headers
    assert "x-tenant-token" not in second.received[0].headers
    # Within one origin the key follows, as the caller's client would have it.
    assert [r.path_qs for r in first.received[1:]] == ["/moved", "/rpc2"]
    assert first.received[2].headers["x-api-key"] == "s3cret"
    assert first.received[2].headers["x-tenant-token"] == "t0ken"


# --- #11: no credential value in any error text -----------------------------------------------


@pytest.mark.parametrize(
    ("credentials", "header"),
    [
        (Credentials(api_key="s3cret\r\nX-Injected: yes"), "X-API-Key"),
        (Credentials(bearer_token="s3cret\nX-Injected: yes"), "Authorization"),
    ],
    ids=["api-key", "bearer-token"],
)
async def test_a_credential_with_a_line_break_is_refused_without_its_value(
    credentials: Credentials, header: str
) -> None:
    async with raw_agent() as agent:
        agent.rpc = tasks
        async with await A2AClient.connect(
            agent.url, card_cache=None, credentials=credentials
        ) as client:
            with pytest.raises(ClientError) as caught:
                await client.get_task("t1")
        assert agent.received == []
    text = f"{caught.value} {caught.value.args!r}"
    assert header in text and "line break" in text
    assert "s3cret" not in text
