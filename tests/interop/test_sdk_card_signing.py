"""Signed agent cards against the official SDK's signing utilities (``a2a.utils.signing``).

Both ways: a card our server signs and serves is fetched by the SDK's card resolver and
checked by its verifier (keys from the JWKS our server serves at ``jku``); a card the SDK's
signer signs is checked by `verify_agent_card`.

Where the two disagree, the tests say so. The SDK canonicalizes its own re-parsed card after
dropping every empty string, list and object (``_clean_empty``), while §8.4.1 keeps what the
ProtoJSON carries: a security requirement without scopes, ``{"schemes": {"bearer": {}}}``,
is signed by us and dropped, with the list that held it, by the SDK. Each side then refuses
the other's card; stripping the requirement makes both accept.
"""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

import httpx
import msgspec
import pytest
from a2a.client import A2ACardResolver
from a2a.client.card_resolver import parse_agent_card
from a2a.types.a2a_pb2 import AgentCard as SdkAgentCard
from a2a.utils.signing import (
    InvalidSignaturesError,
    create_agent_card_signer,
    create_signature_verifier,
)
from a2a.utils.signing import _canonicalize_agent_card as sdk_canonical
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa
from google.protobuf.json_format import MessageToJson, ParseDict
from jwt import PyJWK

from a2a_core import types as t
from a2a_core.agent_card import AgentCardPublisher, CardOptions, ServedInterface
from a2a_core.signing import CardSignatureError, CardSigningKey, verify_agent_card
from interop.servers import IDENTITY, TOKEN, serve

pytestmark = [pytest.mark.interop, pytest.mark.anyio]

KEYS: dict[str, Any] = {
    "ES256": ec.generate_private_key(ec.SECP256R1()),
    "RS256": rsa.generate_private_key(public_exponent=65537, key_size=2048),
    "EdDSA": ed25519.Ed25519PrivateKey.generate(),
}
JWKS_PATH = "/.well-known/jwks.json"
LAST_MODIFIED = dt.datetime(2025, 1, 1, tzinfo=dt.UTC)
BEARER = t.SecurityScheme(http_auth_security_scheme=t.HTTPAuthSecurityScheme(scheme="Bearer"))
NO_SCOPES = [t.SecurityRequirement(schemes={"bearer": t.StringList(list=[])})]


def pem(key: Any) -> bytes:
    return bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )


def our_card(**fields: Any) -> t.AgentCard:
    return t.AgentCard(
        name="Signed",
        description="A signed card",
        supported_interfaces=[],
        version="1.0.0",
        capabilities=t.AgentCapabilities(streaming=False, push_notifications=True),
        security_schemes={"bearer": BEARER},
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[t.AgentSkill(id="s", name="S", description="d", tags=["x"])],
        **fields,
    )


def our_body(alg: str, template: t.AgentCard, *, legacy: bool = False) -> bytes:
    key = CardSigningKey.from_key(KEYS[alg], kid=f"{alg}-key")
    publisher = AgentCardPublisher(
        template,
        interfaces=[ServedInterface("JSONRPC", "1.0", "/"), ServedInterface("JSONRPC", "0.3", "/")],
        base_url="https://agent.example",
        options=CardOptions(
            last_modified=LAST_MODIFIED, signing_key=key, legacy_v0_3_fields=legacy
        ),
    )
    return publisher.document_for().body


def sdk_verifier(alg: str) -> Any:
    return create_signature_verifier(lambda kid, jku: KEYS[alg].public_key(), [alg])


def sdk_signed(alg: str, card: dict[str, Any]) -> SdkAgentCard:
    signer = create_agent_card_signer(
        pem(KEYS[alg]), {"kid": f"{alg}-key", "alg": alg, "jku": None, "typ": "JOSE"}
    )
    return signer(ParseDict(card, SdkAgentCard()))


def our_keys(alg: str) -> dict[str, Any]:
    return {f"{alg}-key": KEYS[alg].public_key()}


# --- ours, verified by the SDK -------------------------------------------------------------


@pytest.mark.parametrize("adapter", ["starlette", "aiohttp"])
async def test_the_sdk_verifies_the_cards_our_server_signs(adapter: str) -> None:
    """The public card through the SDK's resolver, the extended card through JSON-RPC; the
    SDK's key provider takes the key the ``jku`` JWKS serves."""
    key = CardSigningKey.from_pem(pem(KEYS["ES256"]), kid="live")
    serving = serve(adapter, card_signing_key=key, jwks_path=JWKS_PATH)
    async with serving as served, httpx.AsyncClient(timeout=10) as http:
        jwks = (await http.get(served.url + JWKS_PATH)).json()
        assert jwks == {"keys": [key.public_jwk]}
        seen: list[tuple[str | None, str | None]] = []

        def key_provider(kid: str | None, jku: str | None) -> PyJWK:
            seen.append((kid, jku))
            return PyJWK({k["kid"]: k for k in jwks["keys"]}[kid])

        verifier = create_signature_verifier(key_provider, ["ES256"])
        card = await A2ACardResolver(http, served.url).get_agent_card(signature_verifier=verifier)
        assert card.name == "Interop agent"
        assert seen == [("live", served.url + JWKS_PATH)]

        reply = await http.post(
            served.url + "/",
            json={"jsonrpc": "2.0", "id": 1, "method": "GetExtendedAgentCard", "params": {}},
            headers={"A2A-Version": "1.0", "Authorization": f"Bearer {TOKEN}"},
        )
        extended = reply.json()["result"]
        assert extended["name"] == f"Interop agent for {IDENTITY}"
        verifier(parse_agent_card(extended))
        assert verify_agent_card(json.dumps(extended), {"live": key}).name == extended["name"]
        assert len(seen) == 2

        # A tampered copy of the public card is refused by the SDK verifier.
        body = (await http.get(served.url + "/.well-known/agent-card.json")).json()
        body["name"] = "Evil"
        with pytest.raises(InvalidSignaturesError):
            verifier(parse_agent_card(body))


@pytest.mark.parametrize("alg", KEYS)
def test_the_sdk_verifies_our_signed_card(alg: str) -> None:
    body = our_body(alg, our_card())
    sdk_verifier(alg)(parse_agent_card(json.loads(body)))
    assert verify_agent_card(body, our_keys(alg)).name == "Signed"


@pytest.mark.parametrize("alg", KEYS)
def test_a_requirement_without_scopes_is_where_the_sdk_and_we_disagree(alg: str) -> None:
    body = our_body(alg, our_card(security_requirements=NO_SCOPES))
    document = json.loads(body)
    assert document["securityRequirements"] == [{"schemes": {"bearer": {}}}]
    # We signed the requirement; the SDK's canonical form drops it, so it refuses our card.
    parsed = parse_agent_card(document)
    assert "securityRequirements" not in json.loads(sdk_canonical(parsed))
    with pytest.raises(InvalidSignaturesError):
        sdk_verifier(alg)(parsed)
    assert verify_agent_card(body, our_keys(alg)).security_requirements == NO_SCOPES
    # The same card signed without that requirement: both accept it.
    stripped = our_body(alg, our_card())
    sdk_verifier(alg)(parse_agent_card(json.loads(stripped)))
    verify_agent_card(stripped, our_keys(alg))


def test_an_empty_required_description_is_another_disagreement() -> None:
    """§8.4.1 keeps a REQUIRED field that holds its default (its own example keeps
    ``"description": ""``); the SDK drops it."""
    body = our_body("EdDSA", msgspec.structs.replace(our_card(), description=""))
    assert json.loads(body)["description"] == ""
    with pytest.raises(InvalidSignaturesError):
        sdk_verifier("EdDSA")(parse_agent_card(json.loads(body)))
    verify_agent_card(body, our_keys("EdDSA"))


def test_a_signed_hybrid_card_verifies_with_us_but_not_with_the_sdk() -> None:
    """With the v0.3 fields on, we sign the object we send, v0.3 members included; the SDK
    parses them away (or into v1.0 fields) before it canonicalizes, so it refuses."""
    body = our_body("ES256", our_card(), legacy=True)
    assert json.loads(body)["preferredTransport"] == "JSONRPC"
    verify_agent_card(body, our_keys("ES256"))
    with pytest.raises(InvalidSignaturesError):
        sdk_verifier("ES256")(parse_agent_card(json.loads(body)))


# --- theirs, verified by us ----------------------------------------------------------------


SDK_CARD: dict[str, Any] = {
    "name": "SDK agent",
    "description": "Signed by the official SDK",
    "supportedInterfaces": [
        {"url": "https://sdk.example/", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
    ],
    "version": "1.0.0",
    "capabilities": {"streaming": True, "pushNotifications": False},
    "securitySchemes": {"bearer": {"httpAuthSecurityScheme": {"scheme": "Bearer"}}},
    "defaultInputModes": ["text/plain"],
    "defaultOutputModes": ["text/plain"],
    "skills": [{"id": "s", "name": "S", "description": "d", "tags": ["x"]}],
}


@pytest.mark.parametrize("alg", KEYS)
def test_we_verify_the_sdk_s_signed_card(alg: str) -> None:
    signed = sdk_signed(alg, SDK_CARD)
    body = MessageToJson(signed)
    card = verify_agent_card(body, our_keys(alg))
    assert card.name == "SDK agent"
    assert card.capabilities.push_notifications is False
    sdk_verifier(alg)(signed)
    tampered = json.loads(body)
    tampered["capabilities"]["pushNotifications"] = True
    with pytest.raises(CardSignatureError, match="does not match"):
        verify_agent_card(json.dumps(tampered), our_keys(alg))


def test_we_refuse_the_sdk_s_card_with_a_requirement_without_scopes() -> None:
    card = {**SDK_CARD, "securityRequirements": [{"schemes": {"bearer": {}}}]}
    signed = sdk_signed("ES256", card)
    sdk_verifier("ES256")(signed)  # it verifies its own card
    body = json.loads(MessageToJson(signed))
    # ProtoJSON keeps the requirement, the SDK signed the card without it: we refuse...
    assert body["securityRequirements"] == [{"schemes": {"bearer": {}}}]
    with pytest.raises(CardSignatureError, match="does not match"):
        verify_agent_card(json.dumps(body), our_keys("ES256"))
    # ...and accept the card with the requirement stripped, which is what it signed.
    del body["securityRequirements"]
    assert verify_agent_card(json.dumps(body), our_keys("ES256")).security_requirements == []
