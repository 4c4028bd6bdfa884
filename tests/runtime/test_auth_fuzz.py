"""The fuzz invariant, extended to credentials: any ``Authorization`` (or API-key header,
cookie, query) value gets a clear 401 in the binding's error shape, never a 500 or an
exception, and nothing of the request is processed."""

from __future__ import annotations

import json

import anyio
import msgspec
from hypothesis import given, settings
from hypothesis import strategies as st

from a2a_core.auth import ApiKey, HttpBasic, JwtBearer, StaticKeys
from a2a_core.http import Headers, HttpRequest
from a2a_core.server import A2AServer
from a2a_core.types import (
    AgentCapabilities,
    AgentCard,
    APIKeySecurityScheme,
    HTTPAuthSecurityScheme,
    SecurityRequirement,
    SecurityScheme,
    StringList,
)
from helpers.auth import public_pem, rsa_key

KEY = rsa_key()
CARD = AgentCard(
    name="Fuzzed",
    description="d",
    supported_interfaces=[],
    version="1",
    capabilities=AgentCapabilities(),
    default_input_modes=["text/plain"],
    default_output_modes=["text/plain"],
    skills=[],
    security_schemes={
        "bearer": SecurityScheme(http_auth_security_scheme=HTTPAuthSecurityScheme(scheme="bearer")),
        "basic": SecurityScheme(http_auth_security_scheme=HTTPAuthSecurityScheme(scheme="basic")),
        "key": SecurityScheme(
            api_key_security_scheme=APIKeySecurityScheme(location="cookie", name="k")
        ),
        "q": SecurityScheme(
            api_key_security_scheme=APIKeySecurityScheme(location="query", name="k")
        ),
    },
    security_requirements=[
        SecurityRequirement(schemes={"bearer": StringList(list=["a"])}),
        SecurityRequirement(schemes={"basic": StringList(), "key": StringList()}),
        SecurityRequirement(schemes={"q": StringList()}),
    ],
)
SERVER = A2AServer(
    lambda ctx: "never",
    card=CARD,
    base_url="http://agent.test",
    authenticators={
        "bearer": JwtBearer(
            issuer="https://iss.test", audience="a", keys=StaticKeys({"k1": public_pem(KEY)})
        ),
        "basic": HttpBasic(lambda user, password: None),
        "key": ApiKey(lambda key: None),
        "q": ApiKey.of({"the-real-key-is-long-and-random": "x"}),
    },
)

LATIN1 = st.text(st.characters(min_codepoint=0, max_codepoint=255), max_size=300)
TOKENISH = st.from_regex(
    r"[A-Za-z0-9\-._~+/]{0,40}\.[A-Za-z0-9\-._~+/]{0,40}\.[A-Za-z0-9_=-]{0,40}"
)
VALUES = st.one_of(
    LATIN1,
    st.builds(
        lambda s, t: f"{s} {t}", st.sampled_from(["Bearer", "Basic", "bearer", "Digest"]), LATIN1
    ),
    st.builds(lambda t: f"Bearer {t}", TOKENISH),
    st.just("Bearer " + "x" * 9000),
)
NAMES = st.sampled_from(["authorization", "cookie", "Authorization"])


@settings(max_examples=300, deadline=None)
@given(
    headers=st.lists(st.tuples(NAMES, VALUES), max_size=3),
    path=st.sampled_from(["/", "/message:send", "/tasks/x", "/v1/tasks/x", "/nowhere"]),
    query=st.one_of(st.just(""), st.builds(lambda v: "k=" + v, LATIN1)),
)
def test_any_credentials_get_a_clear_401(
    headers: list[tuple[str, str]], path: str, query: str
) -> None:
    method = "GET" if path.startswith(("/tasks", "/v1/tasks")) else "POST"
    request = HttpRequest(
        method,
        path,
        query,
        Headers([("content-type", "application/json"), *headers]),
        b'{"jsonrpc":"2.0","id":1,"method":"ListTasks","params":{}}',
    )
    response = anyio.run(SERVER.handle, request)
    assert not hasattr(response, "frames")
    assert response.status in (401, 403), response
    doc = json.loads(response.body)
    if path == "/":
        # Refused before it was read, the request's id is still echoed (JSON-RPC 2.0 §5).
        assert doc["id"] == 1 and doc["error"]["code"] in (-32041, -32043)
    else:
        assert doc["error"]["code"] in (401, 403)
    challenges = [v for k, v in response.headers if k == "www-authenticate"]
    assert len(challenges) == 2  # Bearer and Basic, whatever was sent
    assert b"Traceback" not in response.body


def test_card_needs_no_credentials() -> None:
    request = HttpRequest(
        "GET", "/.well-known/agent-card.json", headers=Headers([("authorization", "Bearer x")])
    )
    response = anyio.run(SERVER.handle, request)
    assert response.status == 200
    card = msgspec.json.decode(response.body)
    assert set(card["securitySchemes"]) == {"bearer", "basic", "key", "q"}
