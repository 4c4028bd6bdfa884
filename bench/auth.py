"""The cost of authentication per request: blocking SendMessage through ``A2AServer.handle``
(in process, no HTTP), without auth and with each verifier, in one run.

    uv run python bench/auth.py [--requests 5000] [--warmup 500]

Each variant is the same echo agent and in-memory backend; only ``authenticators=`` and
the request's credential differ. JWTs are verified against fixed keys (``StaticKeys``),
which is what a `Jwks` serves from its cache between fetches. ``jwt ... new`` checks every
request's token (the verified-token cache off: the cost of parsing the header, checking
the signature and the claims); ``jwt ... again`` is the default, a client sending the same
token again, found by its hash. Prints requests/s and CPU
microseconds per request, and the difference to no auth.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from typing import Any

import jwt
import msgspec
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa

from a2a_core.auth import ApiKey, JwtBearer, StaticKeys
from a2a_core.http import Headers, HttpRequest
from a2a_core.server import A2AServer, TaskContext
from a2a_core.types import (
    AgentCapabilities,
    AgentCard,
    APIKeySecurityScheme,
    HTTPAuthSecurityScheme,
    SecurityRequirement,
    SecurityScheme,
    StringList,
)

BODY = json.dumps(
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "SendMessage",
        "params": {
            "message": {
                "messageId": "m-0000000000",
                "role": "ROLE_USER",
                "parts": [{"text": "hello"}],
            }
        },
    }
).encode()
CARD = AgentCard(
    name="Bench",
    description="d",
    supported_interfaces=[],
    version="1",
    capabilities=AgentCapabilities(),
    default_input_modes=["text/plain"],
    default_output_modes=["text/plain"],
    skills=[],
)


async def echo(ctx: TaskContext) -> str:
    return ctx.text


def secured(scheme: SecurityScheme) -> AgentCard:
    return msgspec.structs.replace(
        CARD,
        security_schemes={"s": scheme},
        security_requirements=[SecurityRequirement(schemes={"s": StringList()})],
    )


def variants() -> dict[str, tuple[A2AServer, list[tuple[bytes, bytes]]]]:
    bearer = SecurityScheme(http_auth_security_scheme=HTTPAuthSecurityScheme(scheme="Bearer"))
    now = int(time.time())
    claims = {"iss": "https://iss", "aud": "a", "sub": "alice", "exp": now + 3600, "scope": "x"}
    out: dict[str, tuple[A2AServer, list[tuple[bytes, bytes]]]] = {
        "none": (A2AServer(echo, card=CARD), [])
    }
    keys: list[tuple[str, str, Any]] = [
        ("jwt RS256", "RS256", rsa.generate_private_key(public_exponent=65537, key_size=2048)),
        ("jwt ES256", "ES256", ec.generate_private_key(ec.SECP256R1())),
        ("jwt EdDSA", "EdDSA", ed25519.Ed25519PrivateKey.generate()),
    ]
    for name, alg, key in keys:
        token = jwt.encode(claims, key, algorithm=alg, headers={"kid": "k"})
        # Every request checked (cache off: a client sending a new token each time), and
        # the same token again (the default: verified once, then found by its hash).
        for suffix, cache_size in ((" new", 0), (" again", 4096)):
            verifier = JwtBearer(
                issuer="https://iss",
                audience="a",
                keys=StaticKeys({"k": key.public_key()}),
                cache_size=cache_size,
            )
            server = A2AServer(echo, card=secured(bearer), authenticators={"s": verifier})
            out[name + suffix] = (server, [(b"authorization", f"Bearer {token}".encode())])
    api = SecurityScheme(
        api_key_security_scheme=APIKeySecurityScheme(location="header", name="x-api-key")
    )
    server = A2AServer(
        echo, card=secured(api), authenticators={"s": ApiKey.of({"k-" + "x" * 30: "alice"})}
    )
    out["api key"] = (server, [(b"x-api-key", ("k-" + "x" * 30).encode())])
    return out


async def measure(
    server: A2AServer, extra: list[tuple[bytes, bytes]], n: int, warmup: int
) -> float:
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(BODY)).encode()),
        (b"a2a-version", b"1.0"),
        *extra,
    ]
    async with server:
        for i in range(warmup + n):
            if i == warmup:
                start = time.process_time()
            # A messageId of its own (the same one again is answered from the store).
            body = BODY.replace(b"m-0000000000", b"m-%010d" % i)
            request = HttpRequest("POST", "/", "", Headers(list(headers)), body)
            response = await server.handle(request)
            assert getattr(response, "status", 0) == 200, response
        return (time.process_time() - start) / n


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--requests", type=int, default=5000)
    parser.add_argument("--warmup", type=int, default=500)
    args = parser.parse_args()
    results = {}
    for name, (server, extra) in variants().items():
        results[name] = asyncio.run(measure(server, extra, args.requests, args.warmup))
    base = results["none"]
    print(f"{'variant':<16} {'req/s':>8} {'µs/req':>8} {'auth µs':>8}")
    for name, seconds in results.items():
        print(
            f"{name:<16} {1 / seconds:>8.0f} {seconds * 1e6:>8.1f} {(seconds - base) * 1e6:>8.1f}"
        )


if __name__ == "__main__":
    main()
