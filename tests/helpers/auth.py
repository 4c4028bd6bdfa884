"""A token issuer for tests: keys made in the test, a JWKS (and OpenID discovery and RFC 7662
introspection) served on 127.0.0.1, tokens signed on demand, good and bad."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
import hmac
import json
import socket
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import jwt
from aiohttp import web
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from jwt.algorithms import ECAlgorithm, RSAAlgorithm


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def rsa_key() -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


def public_jwk(key: Any, kid: str) -> dict[str, Any]:
    algorithm = RSAAlgorithm if isinstance(key, rsa.RSAPrivateKey) else ECAlgorithm
    jwk: dict[str, Any] = algorithm.to_jwk(key.public_key(), as_dict=True)
    jwk.update(kid=kid, use="sig")
    return jwk


def public_pem(key: Any) -> bytes:
    pem: bytes = key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    return pem


def unsigned(header: dict[str, Any], claims: dict[str, Any], signature: bytes = b"") -> str:
    """A token assembled by hand (for ``alg: none`` and forged signatures)."""
    head = b64url(json.dumps(header).encode())
    body = b64url(json.dumps(claims).encode())
    return f"{head}.{body}.{b64url(signature)}"


def hmac_with(secret: bytes, claims: dict[str, Any], kid: str) -> str:
    """HS256 over the claims with ``secret`` (the public-key-as-secret confusion)."""
    head = b64url(json.dumps({"alg": "HS256", "typ": "JWT", "kid": kid}).encode())
    body = b64url(json.dumps(claims).encode())
    mac = hmac.new(secret, f"{head}.{body}".encode(), hashlib.sha256).digest()
    return f"{head}.{body}.{b64url(mac)}"


@dataclass
class Issuer:
    """One issuer: its signing keys (the published ones in ``jwks``), and its endpoints."""

    url: str = ""
    audience: str = "https://agent.test"
    keys: dict[str, Any] = field(default_factory=dict)
    published: list[str] = field(default_factory=list)
    jwks_hits: int = 0
    introspection_hits: int = 0
    opaque: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: Seconds between the bytes of a JWKS or introspection answer that never ends (a slow
    #: or hostile key server); ``None``: answer at once.
    drip: float | None = None
    #: Seconds the JWKS takes before it answers (a slow, not a hostile, key server).
    delay: float = 0.0

    @property
    def jwks_url(self) -> str:
        return self.url + "/jwks.json"

    @property
    def discovery_url(self) -> str:
        return self.url + "/.well-known/openid-configuration"

    def add_key(self, kid: str, *, publish: bool = True, key: Any = None) -> Any:
        self.keys[kid] = key if key is not None else rsa_key()
        if publish:
            self.published.append(kid)
        return self.keys[kid]

    def claims(self, sub: str = "alice", **extra: Any) -> dict[str, Any]:
        now = int(time.time())
        claims: dict[str, Any] = {
            "iss": self.url,
            "aud": self.audience,
            "sub": sub,
            "iat": now,
            "exp": now + 600,
        }
        claims.update(extra)
        return {k: v for k, v in claims.items() if v is not None}

    def token(self, sub: str = "alice", *, kid: str | None = None, **extra: Any) -> str:
        kid = kid or self.published[0]
        key = self.keys[kid]
        alg = "RS256" if isinstance(key, rsa.RSAPrivateKey) else "ES256"
        return jwt.encode(self.claims(sub, **extra), key, algorithm=alg, headers={"kid": kid})

    def app(self) -> web.Application:
        async def dripping(request: web.Request) -> web.StreamResponse:
            assert self.drip is not None
            response = web.StreamResponse(headers={"content-type": "application/json"})
            response.content_length = 100_000
            await response.prepare(request)
            with contextlib.suppress(ConnectionError):
                while True:  # until the client gives up
                    await response.write(b" ")
                    await asyncio.sleep(self.drip)
            return response

        async def jwks(request: web.Request) -> web.StreamResponse:
            self.jwks_hits += 1
            if self.drip is not None:
                return await dripping(request)
            await asyncio.sleep(self.delay)
            keys = [public_jwk(self.keys[kid], kid) for kid in self.published]
            return web.json_response({"keys": keys})

        async def discovery(request: web.Request) -> web.Response:
            return web.json_response(
                {
                    "issuer": self.url,
                    "jwks_uri": self.jwks_url,
                    "introspection_endpoint": self.url + "/introspect",
                }
            )

        async def introspect(request: web.Request) -> web.StreamResponse:
            self.introspection_hits += 1
            if self.drip is not None:
                return await dripping(request)
            form = await request.post()
            if (
                request.headers.get("authorization")
                != "Basic " + base64.b64encode(b"agent:agent-secret").decode()
            ):
                return web.json_response({"error": "invalid_client"}, status=401)
            answer = self.opaque.get(str(form.get("token")), {"active": False})
            return web.json_response(answer)

        app = web.Application()
        app.router.add_get("/jwks.json", jwks)
        app.router.add_get("/.well-known/openid-configuration", discovery)
        app.router.add_post("/introspect", introspect)
        return app


@contextlib.asynccontextmanager
async def serve_issuer(issuer: Issuer | None = None) -> AsyncIterator[Issuer]:
    """Serve an issuer's endpoints on 127.0.0.1 (a port of its own) for the block."""
    issuer = issuer or Issuer()
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.bind(("127.0.0.1", 0))
    issuer.url = f"http://127.0.0.1:{sock.getsockname()[1]}"
    # handler_cancellation: a client that gives up on a dripping answer ends its handler
    # at once (else it would run on until its next write fails).
    runner = web.AppRunner(issuer.app(), access_log=None, handler_cancellation=True)
    await runner.setup()
    try:
        await web.SockSite(runner, sock).start()
        yield issuer
    finally:
        await runner.cleanup()
        sock.close()
