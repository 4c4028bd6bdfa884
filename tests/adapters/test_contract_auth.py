"""Authentication from the card, over real HTTP on both adapters: a JWKS served on
127.0.0.1 by the test, keys and tokens made here. Every way a credential can be wrong is a
401 (with every challenge) or a 403, on both bindings, before the agent runs; verified
identities own their tasks, keyed by issuer and subject."""

from __future__ import annotations

import base64
import json
from collections.abc import AsyncIterator
from typing import Any

import anyio
import msgspec
import pytest

from a2a_core.auth import ApiKey, AuthenticatedIdentity, HttpBasic, Jwks, JwtBearer
from a2a_core.server import A2AServer, InputRequired, TaskContext
from a2a_core.types import (
    AgentCard,
    APIKeySecurityScheme,
    HTTPAuthSecurityScheme,
    SecurityRequirement,
    SecurityScheme,
    StringList,
)
from adapters.contract import Harness, Overrides, make_card, send_params
from helpers.auth import Issuer, hmac_with, public_pem, rsa_key, serve_issuer, unsigned

pytestmark = pytest.mark.anyio

SCHEMES = {
    "bearer": SecurityScheme(
        http_auth_security_scheme=HTTPAuthSecurityScheme(scheme="Bearer", bearer_format="JWT")
    ),
    "key": SecurityScheme(
        api_key_security_scheme=APIKeySecurityScheme(location="header", name="X-API-Key")
    ),
    "basic": SecurityScheme(http_auth_security_scheme=HTTPAuthSecurityScheme(scheme="Basic")),
}


def secured_card(*, scopes: tuple[str, ...] = ("tasks",), push: bool = True) -> AgentCard:
    card = make_card(push=push)
    return msgspec.structs.replace(
        card,
        security_schemes=SCHEMES,
        security_requirements=[
            SecurityRequirement(schemes={"bearer": StringList(list=list(scopes))}),
            SecurityRequirement(schemes={"key": StringList()}),
            SecurityRequirement(schemes={"basic": StringList()}),
        ],
    )


def verifiers(issuer: Issuer, **jwks: Any) -> dict[str, Any]:
    return {
        "bearer": JwtBearer(
            issuer=issuer.url, audience=issuer.audience, keys=Jwks(issuer.jwks_url, **jwks)
        ),
        "key": ApiKey.of({"k-carol": "carol"}),
        "basic": HttpBasic(lambda user, pw: user if (user, pw) == ("dave", "pw") else None),
    }


@pytest.fixture
async def issuer() -> AsyncIterator[Issuer]:
    async with serve_issuer() as running:
        running.add_key("k1")
        yield running


def bearer(token: str) -> dict[str, str]:
    return {"authorization": f"Bearer {token}"}


async def who(ctx: TaskContext) -> str:
    identity = ctx.identity
    assert isinstance(identity, AuthenticatedIdentity)
    return f"{identity.scheme}:{identity.subject}:{','.join(sorted(identity.scopes))}"


def text_of(result: dict[str, Any]) -> str:
    text: str = result["task"]["artifacts"][0]["parts"][0]["text"]
    return text


async def test_valid_credentials_of_each_alternative(harness: Harness, issuer: Issuer) -> None:
    server = A2AServer(
        who, card=secured_card(), authenticators=verifiers(issuer), base_url=harness.base_url
    )
    basic = base64.b64encode(b"dave:pw").decode()
    async with harness.serve(server) as live:
        card = (await live.client.get(live.url("/.well-known/agent-card.json"))).json()
        by_jwt = await live.result(
            "SendMessage", send_params(), headers=bearer(issuer.token(scope="tasks read"))
        )
        by_scp = await live.result(
            "SendMessage", send_params(), headers=bearer(issuer.token(scp=["tasks"]))
        )
        by_key = await live.result("SendMessage", send_params(), headers={"x-api-key": "k-carol"})
        by_basic = await live.result(
            "SendMessage", send_params(), headers={"authorization": f"Basic {basic}"}
        )
        rest = await live.rest(
            "POST",
            "/message:send",
            send_params(),
            headers=bearer(issuer.token("erin", scope="tasks")),
        )
    # The public card stays public, and says what to present.
    assert set(card["securitySchemes"]) == {"bearer", "key", "basic"}
    assert len(card["securityRequirements"]) == 3
    assert text_of(by_jwt) == "bearer:alice:read,tasks"
    assert text_of(by_scp) == "bearer:alice:tasks"
    assert text_of(by_key) == "key:carol:"
    assert text_of(by_basic) == "basic:dave:"
    assert rest.status_code == 200
    assert text_of(rest.json()) == "bearer:erin:tasks"


def _bad_tokens(issuer: Issuer) -> dict[str, str]:
    """Every way a bearer token can be wrong, by name, as the Authorization header."""
    stranger = rsa_key()
    forged = issuer.claims(scope="tasks")
    import jwt

    return {
        "malformed": "Bearer not.a-jwt",
        "not-token68": "Bearer a b c",
        "not-a-jwt": "Bearer opaque-token",
        "empty": "Bearer",
        "expired": "Bearer " + issuer.token(scope="tasks", exp=1000, iat=900),
        "not-yet-valid": "Bearer " + issuer.token(scope="tasks", nbf=4_000_000_000),
        "wrong-issuer": "Bearer " + issuer.token(scope="tasks", iss="https://evil.test"),
        "wrong-audience": "Bearer " + issuer.token(scope="tasks", aud="https://other.test"),
        "no-subject": "Bearer " + issuer.token(scope="tasks", sub=None),
        "no-exp": "Bearer " + issuer.token(scope="tasks", exp=None),
        # NumericDate is a JSON number (RFC 7519 §2); PyJWT alone takes int() of a string.
        "string-exp": "Bearer " + issuer.token(scope="tasks", exp="9999999999"),
        "string-nbf": "Bearer " + issuer.token(scope="tasks", nbf="0"),
        "string-iat": "Bearer " + issuer.token(scope="tasks", iat="0"),
        "boolean-exp": "Bearer " + issuer.token(scope="tasks", exp=True),
        "bad-signature": "Bearer "
        + jwt.encode(forged, stranger, algorithm="RS256", headers={"kid": "k1"}),
        "alg-none": "Bearer " + unsigned({"alg": "none", "typ": "JWT", "kid": "k1"}, forged),
        "hmac-with-public-key": "Bearer " + hmac_with(public_pem(issuer.keys["k1"]), forged, "k1"),
        "unknown-kid": "Bearer "
        + jwt.encode(forged, stranger, algorithm="RS256", headers={"kid": "nope"}),
        "huge": "Bearer " + "a" * 8100,
        "other-scheme": "Digest abc",
        "bad-basic": "Basic !!!",
        "wrong-password": "Basic " + base64.b64encode(b"dave:nope").decode(),
        "garbage": "Bearer {}[];,",
    }


async def test_every_bad_credential_is_a_401_with_every_challenge(
    harness: Harness, issuer: Issuer
) -> None:
    ran: list[Any] = []

    async def agent(ctx: TaskContext) -> str:
        ran.append(ctx.identity)
        return "should not run"

    server = A2AServer(agent, card=secured_card(), authenticators=verifiers(issuer))
    bad = _bad_tokens(issuer)
    async with harness.serve(server) as live:
        answers = {}
        for name, value in bad.items():
            headers = {"authorization": value}
            answers[name] = (
                await live.post_rpc("SendMessage", send_params(), headers=headers),
                await live.rest("POST", "/message:send", send_params(), headers=headers),
                await live.rest("GET", "/tasks/some-id", headers=headers),
            )
        missing = (
            await live.post_rpc("SendMessage", send_params()),
            await live.rest("POST", "/message:send", send_params()),
        )
        repeated = await live.client.post(
            live.url("/"),
            content=b"{}",
            headers=[
                ("content-type", "application/json"),
                ("authorization", "Bearer " + issuer.token(scope="tasks")),
                ("authorization", "Bearer " + issuer.token(scope="tasks")),
            ],
        )
        bad_key = await live.post_rpc("SendMessage", send_params(), headers={"x-api-key": "no"})
    assert ran == []  # nothing of a refused request ran
    for name, (rpc, rest, get) in [*answers.items(), ("missing", (*missing, missing[1]))]:
        for response in (rpc, rest, get):
            assert response.status_code == 401, (name, response.status_code, response.text)
            challenges = response.headers.get_list("www-authenticate")
            assert len(challenges) == 2, (name, challenges)
            assert challenges[0].startswith('Bearer realm="Contract agent", scope="tasks"')
            assert challenges[1] == 'Basic realm="Contract agent", charset="UTF-8"'
            assert "Traceback" not in response.text
        error = rpc.json()["error"]
        # Refused before the request was read, yet its id is readable (JSON-RPC 2.0 §5).
        assert rpc.json()["id"] == 1
        assert error["code"] == -32041, name
        assert error["data"][0]["reason"] == "UNAUTHENTICATED"
        assert rest.json()["error"]["status"] == "UNAUTHENTICATED"
        assert rest.json()["error"]["code"] == 401
    # A token presented but refused says so in its challenge (RFC 6750 §3.1).
    expired = answers["expired"][0]
    assert 'error="invalid_token"' in expired.headers["www-authenticate"]
    assert expired.json()["error"]["message"] == "The token has expired"
    assert answers["wrong-audience"][0].json()["error"]["message"] == (
        "The token is not meant for this agent"
    )
    assert 'error="invalid_request"' in answers["huge"][0].headers["www-authenticate"]
    for name in ("string-exp", "string-nbf", "string-iat", "boolean-exp"):
        assert 'error="invalid_token"' in answers[name][0].headers["www-authenticate"]
    assert answers["string-exp"][0].json()["error"]["message"] == (
        "The token's 'exp' claim is not a number"
    )
    assert "error=" not in missing[0].headers["www-authenticate"]
    assert repeated.status_code == 401
    assert 'error="invalid_request"' in repeated.headers["www-authenticate"]
    assert bad_key.status_code == 401


async def test_valid_token_without_the_scope_is_403(harness: Harness, issuer: Issuer) -> None:
    server = A2AServer(who, card=secured_card(), authenticators=verifiers(issuer))
    token = issuer.token(scope="read")
    async with harness.serve(server) as live:
        rpc = await live.post_rpc("SendMessage", send_params(), headers=bearer(token))
        rest = await live.rest("GET", "/tasks", headers=bearer(token))
    for response in (rpc, rest):
        assert response.status_code == 403
        assert response.headers.get_list("www-authenticate")[0] == (
            'Bearer realm="Contract agent", scope="tasks", error="insufficient_scope"'
        )
    assert rpc.json()["error"]["code"] == -32043
    assert rest.json()["error"]["status"] == "PERMISSION_DENIED"


async def test_unknown_kid_refetches_the_jwks_at_a_bounded_rate(
    harness: Harness, issuer: Issuer
) -> None:
    server = A2AServer(
        who,
        card=secured_card(),
        authenticators=verifiers(issuer, min_refresh_interval=3600),
    )
    async with harness.serve(server) as live:
        first = await live.result(
            "SendMessage", send_params(), headers=bearer(issuer.token(scope="tasks"))
        )
        fetched = issuer.jwks_hits
        # The issuer rotates to a key the server has not seen: the server fetches again.
        issuer.add_key("k2")
        rotated = await live.result(
            "SendMessage", send_params(), headers=bearer(issuer.token(kid="k2", scope="tasks"))
        )
        after_rotation = issuer.jwks_hits
        # Made-up kids do not make the server hammer the issuer (one fetch per interval).
        issuer.add_key("k3", publish=False)
        refused = [
            await live.post_rpc(
                "GetTask", {"id": "x"}, headers=bearer(issuer.token(kid="k3", scope="tasks"))
            )
            for _ in range(5)
        ]
    assert text_of(first) == text_of(rotated) == "bearer:alice:tasks"
    assert fetched == 1
    assert after_rotation == 2
    assert {r.status_code for r in refused} == {401}
    assert issuer.jwks_hits == 2


async def test_identities_never_see_each_others_tasks(harness: Harness, issuer: Issuer) -> None:
    """Alice, Bob, and an 'alice' of another issuer: three owners, on every operation."""
    async with serve_issuer() as other:
        other.add_key("o1")
        auth = verifiers(issuer)
        auth["bearer"] = JwtBearer(
            issuer=[issuer.url, other.url],
            audience=issuer.audience,
            keys=_Either(Jwks(issuer.jwks_url), Jwks(other.jwks_url)),
        )
        server = A2AServer(
            lambda ctx: InputRequired("more?"), card=secured_card(), authenticators=auth
        )
        alice = bearer(issuer.token("alice", scope="tasks"))
        bob = bearer(issuer.token("bob", scope="tasks"))
        other_alice = bearer(other.token("alice", scope="tasks", aud=issuer.audience))
        async with harness.serve(server) as live:
            tid = (await live.result("SendMessage", send_params(), headers=alice))["task"]["id"]
            await live.result(
                "CreateTaskPushNotificationConfig",
                {"taskId": tid, "url": "https://hooks.example.com/a2a"},
                headers=alice,
            )
            results = {}
            for name, headers in (("bob", bob), ("other-alice", other_alice)):
                results[name] = (
                    [
                        await live.error("GetTask", {"id": tid}, headers=headers),
                        await live.error("CancelTask", {"id": tid}, headers=headers),
                        await live.error("SubscribeToTask", {"id": tid}, headers=headers),
                        await live.error(
                            "SendMessage", send_params(task_id=tid, mid="m2"), headers=headers
                        ),
                        await live.error(
                            "ListTaskPushNotificationConfigs", {"taskId": tid}, headers=headers
                        ),
                        await live.error(
                            "GetTaskPushNotificationConfig",
                            {"taskId": tid, "id": tid},
                            headers=headers,
                        ),
                        await live.error(
                            "CreateTaskPushNotificationConfig",
                            {"taskId": tid, "url": "https://hooks.example.com/b"},
                            headers=headers,
                        ),
                        await live.error(
                            "DeleteTaskPushNotificationConfig",
                            {"taskId": tid, "id": tid},
                            headers=headers,
                        ),
                        await live.error("tasks/get", {"id": tid}, headers=headers, version="0.3"),
                    ],
                    [
                        await live.rest("GET", f"/tasks/{tid}", headers=headers),
                        await live.rest("POST", f"/tasks/{tid}:cancel", headers=headers),
                        await live.rest("GET", f"/tasks/{tid}:subscribe", headers=headers),
                        await live.rest(
                            "GET", f"/tasks/{tid}/pushNotificationConfigs", headers=headers
                        ),
                        await live.rest("GET", f"/v1/tasks/{tid}", headers=headers, version=None),
                    ],
                    await live.result("ListTasks", {}, headers=headers),
                    (await live.rest("GET", "/tasks", headers=headers)).json(),
                )
            # A client cannot pose as Alice through metadata either.
            posing = await live.result(
                "ListTasks", {"metadata": {"a2a.auth": "alice"}}, headers=bob
            )
            mine = await live.result("ListTasks", {}, headers=alice)
            missing = await live.error("GetTask", {"id": tid[::-1]}, headers=alice)
            missing["data"][0]["metadata"]["taskId"] = tid
            still = await live.result("GetTask", {"id": tid}, headers=alice)
    for rpc_errors, rest_replies, rpc_list, rest_list in results.values():
        assert {e["code"] for e in rpc_errors} == {-32001}
        assert {r.status_code for r in rest_replies} == {404}
        # Exactly what a task that does not exist gets (its id echoed back, as sent).
        assert rpc_errors[0] == missing
        assert rpc_list["totalSize"] == 0 and rpc_list["tasks"] == []
        assert rest_list["totalSize"] == 0
    assert posing["totalSize"] == 0
    assert mine["totalSize"] == 1 and mine["tasks"][0]["id"] == tid
    assert still["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"


class _Either:
    """Keys of two issuers (a deployment trusting both)."""

    def __init__(self, *sources: Jwks) -> None:
        self.sources = sources

    async def key(self, kid: str | None, algorithm: str) -> Any:
        from a2a_core.auth import CredentialsRejected

        for source in self.sources:
            try:
                return await source.key(kid, algorithm)
            except CredentialsRejected:
                continue
        raise CredentialsRejected("The token is signed with an unknown key")


async def test_an_identity_set_upstream_is_trusted(harness: Harness, issuer: Issuer) -> None:
    """A deployment may authenticate in its own middleware: that identity is the caller's."""
    seen: list[Any] = []

    async def agent(ctx: TaskContext) -> str:
        seen.append(ctx.identity)
        return "ok"

    server = A2AServer(agent, card=secured_card(), authenticators=verifiers(issuer))

    def middleware(headers: Any) -> Overrides:
        return Overrides(identity=headers.get("x-gateway-user"))

    async with harness.serve(server, middleware=middleware) as live:
        upstream = await live.post_rpc(
            "SendMessage", send_params(), headers={"x-gateway-user": "gw-alice"}
        )
        neither = await live.post_rpc("SendMessage", send_params())
    assert upstream.status_code == 200 and "result" in upstream.json()
    assert seen == ["gw-alice"]
    assert neither.status_code == 401


async def test_an_empty_requirement_admits_anonymous_callers(
    harness: Harness, issuer: Issuer
) -> None:
    import msgspec

    card = secured_card()
    card = msgspec.structs.replace(
        card, security_requirements=[*card.security_requirements, SecurityRequirement()]
    )
    seen: list[Any] = []

    async def agent(ctx: TaskContext) -> str:
        seen.append(ctx.identity)
        return "ok"

    server = A2AServer(agent, card=card, authenticators=verifiers(issuer))
    async with harness.serve(server) as live:
        anonymous = await live.post_rpc("SendMessage", send_params())
        known = await live.post_rpc("SendMessage", send_params(), headers={"x-api-key": "k-carol"})
        # Credentials that are presented but wrong are refused, not downgraded to anonymous.
        wrong = await live.post_rpc("SendMessage", send_params(), headers={"x-api-key": "nope"})
    assert anonymous.status_code == known.status_code == 200
    assert seen[0] is None and isinstance(seen[1], AuthenticatedIdentity)
    assert wrong.status_code == 401


async def test_oidc_discovery_and_introspection(harness: Harness, issuer: Issuer) -> None:
    """An openIdConnect scheme finds the issuer and JWKS from its discovery URL; an oauth2
    scheme verifies opaque tokens by introspection, cached for their lifetime."""
    import time

    import msgspec

    from a2a_core.auth import TokenIntrospection
    from a2a_core.types import (
        ClientCredentialsOAuthFlow,
        OAuth2SecurityScheme,
        OAuthFlows,
        OpenIdConnectSecurityScheme,
    )

    schemes = {
        "oidc": SecurityScheme(
            open_id_connect_security_scheme=OpenIdConnectSecurityScheme(
                open_id_connect_url=issuer.discovery_url
            )
        ),
        "oauth": SecurityScheme(
            oauth2_security_scheme=OAuth2SecurityScheme(
                flows=OAuthFlows(
                    client_credentials=ClientCredentialsOAuthFlow(
                        token_url=issuer.url + "/token", scopes={"tasks": "use tasks"}
                    )
                ),
                oauth2_metadata_url=issuer.discovery_url,
            )
        ),
    }
    card = msgspec.structs.replace(
        make_card(),
        security_schemes=schemes,
        security_requirements=[
            SecurityRequirement(schemes={"oidc": StringList(list=["tasks"])}),
            SecurityRequirement(schemes={"oauth": StringList(list=["tasks"])}),
        ],
    )
    introspection = TokenIntrospection(client_id="agent", client_secret="agent-secret")
    server = A2AServer(
        who,
        card=card,
        authenticators={
            "oidc": JwtBearer(audience=issuer.audience),
            "oauth": JwtBearer(audience=issuer.audience, introspection=introspection),
        },
    )
    exp = int(time.time()) + 600
    issuer.opaque["opaque-ok"] = {
        "active": True, "sub": "frank", "scope": "tasks", "exp": exp, "iss": issuer.url,
    }  # fmt: skip
    issuer.opaque["opaque-narrow"] = {"active": True, "sub": "gina", "scope": "read", "exp": exp}
    async with harness.serve(server) as live:
        by_jwt = await live.result(
            "SendMessage", send_params(), headers=bearer(issuer.token(scope="tasks"))
        )
        by_opaque = [
            await live.result("SendMessage", send_params(), headers=bearer("opaque-ok"))
            for _ in range(3)
        ]
        narrow = await live.post_rpc("GetTask", {"id": "x"}, headers=bearer("opaque-narrow"))
        inactive = await live.post_rpc("GetTask", {"id": "x"}, headers=bearer("opaque-revoked"))
    assert text_of(by_jwt) == "oidc:alice:tasks"
    assert {text_of(r) for r in by_opaque} == {"oauth:frank:tasks"}
    assert issuer.introspection_hits == 1 + 2  # cached; then one each for the two below
    assert narrow.status_code == 403
    assert inactive.status_code == 401
    # The same challenge from both bearer schemes is sent once.
    assert len(inactive.headers.get_list("www-authenticate")) == 1


async def test_concurrent_first_requests_share_one_jwks_fetch(
    harness: Harness, issuer: Issuer
) -> None:
    server = A2AServer(who, card=secured_card(), authenticators=verifiers(issuer))
    token = bearer(issuer.token(scope="tasks"))
    statuses: list[int] = []
    async with harness.serve(server) as live:

        async def one() -> None:
            statuses.append((await live.post_rpc("ListTasks", {}, headers=token)).status_code)

        async with anyio.create_task_group() as tg:
            for _ in range(8):
                tg.start_soon(one)
    assert statuses == [200] * 8
    assert issuer.jwks_hits == 1


async def test_a_dripping_jwks_holds_no_caller_past_the_fetch_deadline(
    harness: Harness, issuer: Issuer
) -> None:
    """A key server that sends its answer a byte at a time: each of 11 JWT callers gets
    its 401 within the one fetch's deadline (5 s by default; the fetch that never ends is
    abandoned there), one fetch at a time; an API-key caller is served meanwhile."""
    issuer.drip = 0.5
    server = A2AServer(who, card=secured_card(), authenticators=verifiers(issuer))
    token = bearer(issuer.token(scope="tasks"))
    waits: list[tuple[int, float]] = []
    async with harness.serve(server, timeout=60) as live:

        async def jwt_caller() -> None:
            started = anyio.current_time()
            reply = await live.post_rpc("ListTasks", {}, headers=token)
            waits.append((reply.status_code, anyio.current_time() - started))

        async with anyio.create_task_group() as tg:
            for _ in range(10):
                tg.start_soon(jwt_caller)
            await anyio.sleep(1)
            tg.start_soon(jwt_caller)  # the next one, while the fetch drips
            started = anyio.current_time()
            by_key = await live.post_rpc("ListTasks", {}, headers={"x-api-key": "k-carol"})
            key_wait = anyio.current_time() - started
        # Until the retry interval passes, a caller is refused without another fetch.
        again = await live.post_rpc("ListTasks", {}, headers=token)
    assert [status for status, _ in waits] == [401] * 11
    assert max(wait for _, wait in waits) < 12
    assert by_key.status_code == 200 and key_wait < 4  # the JWT callers wait 5 s
    assert again.status_code == 401
    assert again.json()["error"]["message"] == "The issuer's keys are unavailable"
    assert issuer.jwks_hits == 1


async def test_stale_keys_serve_while_their_refresh_drips(harness: Harness, issuer: Issuer) -> None:
    """Keys past their max_age are refreshed by one caller; the others use the keys they
    have, and the refreshing caller too once its fetch is abandoned."""
    server = A2AServer(
        who, card=secured_card(), authenticators=verifiers(issuer, max_age=0, timeout=4)
    )
    waits: list[tuple[int, float]] = []
    async with harness.serve(server, timeout=60) as live:
        first = await live.post_rpc("ListTasks", {}, headers=bearer(issuer.token(scope="tasks")))
        issuer.drip = 0.5

        async def caller(name: str) -> None:
            # A token of its own: a token verified before is remembered, keys unread.
            token = bearer(issuer.token(name, scope="tasks"))
            started = anyio.current_time()
            reply = await live.post_rpc("ListTasks", {}, headers=token)
            waits.append((reply.status_code, anyio.current_time() - started))

        async with anyio.create_task_group() as tg:
            for i in range(10):
                tg.start_soon(caller, f"user{i}")
    assert first.status_code == 200
    assert [status for status, _ in waits] == [200] * 10
    slow = sorted(wait for _, wait in waits)
    assert slow[-1] < 8  # the refreshing caller: its fetch's 4 s deadline
    assert slow[-2] < 3  # the others did not wait for it
    assert issuer.jwks_hits == 2


@pytest.mark.interop
async def test_a_secured_servers_signed_card_verifies_anonymously(
    anywhere: Harness, issuer: Issuer
) -> None:
    """The card is public, so the JWKS its signature's ``jku`` names is too: a client
    without credentials fetches both (same caching headers) and checks the signature with
    the official SDK's verifier and with ours; everything else still asks for credentials.
    (The card requires scopes: the SDK's canonical form drops a requirement without any,
    and refuses such a card: docs/security.md.)"""
    from a2a.client import A2ACardResolver
    from a2a.utils.signing import create_signature_verifier
    from cryptography.hazmat.primitives.asymmetric import ec
    from jwt import PyJWK

    from a2a_core.protocol import ProtocolOptions
    from a2a_core.signing import CardSigningKey, verify_agent_card

    key = CardSigningKey.from_key(ec.generate_private_key(ec.SECP256R1()), kid="card-key")
    server = A2AServer(
        who,
        card=msgspec.structs.replace(
            secured_card(),
            security_requirements=[
                SecurityRequirement(schemes={"bearer": StringList(list=["tasks"])})
            ],
        ),
        authenticators=verifiers(issuer),
        base_url=anywhere.base_url,
        protocol=ProtocolOptions(card_signing_key=key, jwks_path="/.well-known/jwks.json"),
    )
    async with anywhere.serve(server) as live:
        card_reply = await live.client.get(live.url("/.well-known/agent-card.json"))
        jku = json.loads(
            base64.urlsafe_b64decode(card_reply.json()["signatures"][0]["protected"] + "==")
        )["jku"]
        jwks_reply = await live.client.get(jku)
        revalidated = await live.client.get(
            jku, headers={"if-none-match": jwks_reply.headers["etag"]}
        )
        head = await live.client.head(jku)
        anonymous_send = await live.post_rpc("SendMessage", send_params())
        jwks = jwks_reply.json()

        def key_provider(kid: str | None, url: str | None) -> PyJWK:
            assert url == jku
            return PyJWK({k["kid"]: k for k in jwks["keys"]}[kid])

        verifier = create_signature_verifier(key_provider, ["ES256"])
        resolver = A2ACardResolver(live.client, live.url(""))
        sdk_card = await resolver.get_agent_card(signature_verifier=verifier)
    assert jku == live.url("/.well-known/jwks.json")
    assert jwks_reply.status_code == 200
    assert jwks_reply.headers["content-type"] == "application/jwk-set+json"
    for name in ("cache-control", "last-modified"):
        assert jwks_reply.headers[name] == card_reply.headers[name]
    assert revalidated.status_code == 304
    assert head.status_code == 200 and head.content == b""
    assert jwks == {"keys": [key.public_jwk]}
    assert sdk_card.name == card_reply.json()["name"]
    assert verify_agent_card(card_reply.content, {"card-key": key}).name == sdk_card.name
    assert anonymous_send.status_code == 401
