"""JwtBearer remembers the tokens it verified (bounded): a token sent again is not checked
again until its expiry or ``cache_seconds``; an expired one is never served from it.

Driven through ``A2AServer.handle``; the key source is a real `StaticKeys` whose lookups
the test counts (each full verification asks it for the key once).
"""

from __future__ import annotations

import json
import time
from typing import Any

import jwt
import pytest

from a2a_core.auth import JwtBearer, StaticKeys
from a2a_core.http import Headers, HttpRequest, HttpResponse
from a2a_core.server import A2AServer
from a2a_core.types import (
    AgentCapabilities,
    AgentCard,
    HTTPAuthSecurityScheme,
    SecurityRequirement,
    SecurityScheme,
    StringList,
)
from helpers.auth import public_pem, rsa_key

pytestmark = pytest.mark.anyio

KEY = rsa_key()
ISSUER, AUDIENCE = "https://iss.test", "https://agent.test"
CARD = AgentCard(
    name="Cached",
    description="d",
    supported_interfaces=[],
    version="1",
    capabilities=AgentCapabilities(),
    default_input_modes=["text/plain"],
    default_output_modes=["text/plain"],
    skills=[],
    security_schemes={
        "bearer": SecurityScheme(http_auth_security_scheme=HTTPAuthSecurityScheme(scheme="bearer"))
    },
    security_requirements=[SecurityRequirement(schemes={"bearer": StringList()})],
)


class CountingKeys(StaticKeys):
    """The real static key source, counting the lookups of full verifications."""

    lookups = 0

    async def key(self, kid: str | None, algorithm: str) -> jwt.PyJWK:
        self.lookups += 1
        return await super().key(kid, algorithm)


def token(sub: str, *, exp: float, nbf: float | None = None) -> str:
    claims: dict[str, Any] = {"iss": ISSUER, "aud": AUDIENCE, "sub": sub, "exp": int(exp)}
    if nbf is not None:
        claims["nbf"] = int(nbf)
    return jwt.encode(claims, KEY, algorithm="RS256", headers={"kid": "k1"})


def server(keys: CountingKeys, **options: Any) -> A2AServer:
    bearer = JwtBearer(issuer=ISSUER, audience=AUDIENCE, keys=keys, leeway=0, **options)
    return A2AServer(
        lambda ctx: "ok", card=CARD, base_url="http://agent.test", authenticators={"bearer": bearer}
    )


async def get_task(app: A2AServer, bearer: str) -> int:
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "t"}})
    headers = Headers(
        [("content-type", "application/json"), ("a2a-version", "1.0"), ("authorization", bearer)]
    )
    response = await app.handle(HttpRequest("POST", "/", headers=headers, body=body.encode()))
    assert isinstance(response, HttpResponse)
    return response.status


async def test_a_token_sent_again_is_not_verified_again() -> None:
    keys = CountingKeys({"k1": public_pem(KEY)})
    app = server(keys)
    good = "Bearer " + token("alice", exp=time.time() + 600)
    async with app:
        statuses = [await get_task(app, good) for _ in range(5)]
        other = await get_task(app, "Bearer " + token("bob", exp=time.time() + 600))
    assert statuses == [200] * 5  # authenticated: GetTask itself answers (not found, 200)
    assert other == 200
    assert keys.lookups == 2  # one full check per distinct token


async def test_an_expired_or_not_yet_valid_token_is_never_served_from_the_cache() -> None:
    keys = CountingKeys({"k1": public_pem(KEY)})
    app = server(keys)
    async with app:
        expired = await get_task(app, "Bearer " + token("alice", exp=time.time() - 5))
        early = await get_task(
            app, "Bearer " + token("alice", exp=time.time() + 600, nbf=time.time() + 300)
        )
    assert (expired, early) == (401, 401)


async def test_the_cache_can_be_turned_off_and_is_bounded_in_entries() -> None:
    off = CountingKeys({"k1": public_pem(KEY)})
    small = CountingKeys({"k1": public_pem(KEY)})
    uncached, bounded = server(off, cache_size=0), server(small, cache_size=2)
    tokens = ["Bearer " + token(f"user{i}", exp=time.time() + 600) for i in range(3)]
    async with uncached, bounded:
        for _ in range(2):
            await get_task(uncached, tokens[0])
        for bearer in (*tokens, tokens[2], tokens[0]):  # the third pushed the first out
            await get_task(bounded, bearer)
    assert off.lookups == 2
    assert small.lookups == 4  # user0, user1, user2, then user0 again
