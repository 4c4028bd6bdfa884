"""Signed agent cards (v1.0 §8.4): what is signed, how it is served, and what verifies.

The card publisher and `ServerProtocol` are driven with `HttpRequest` values and their bytes
checked: the signature is checked once independently (``cryptography`` over the JWS signing
input built here from ``rfc8785``), then by `verify_agent_card` against every tampering.
"""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import hmac
import json
from collections.abc import Callable
from typing import Any

import msgspec
import pytest
import rfc8785
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, padding, rsa
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature
from hypothesis import given, settings
from hypothesis import strategies as st
from jwt import api_jws
from jwt.algorithms import get_default_algorithms

from a2a_core import codec
from a2a_core import types as t
from a2a_core.agent_card import DEFAULT_CARD_PATH, AgentCardPublisher, CardOptions, build_card
from a2a_core.errors import LocalProtocolError
from a2a_core.http import Headers, HttpRequest, HttpResponse
from a2a_core.protocol import ProtocolOptions, ServerProtocol
from a2a_core.signing import (
    CardSignatureError,
    CardSigningKey,
    canonical_card_payload,
    jwks_document,
    sign_card,
    verify_agent_card,
)
from core.test_agent_card import BASE, EXT_DECLARED, EXT_NEW, SERVED, TEMPLATE
from helpers.schema_v1 import validator_for

LAST_MODIFIED = dt.datetime(2025, 1, 2, 3, 4, 5, tzinfo=dt.UTC)
JWKS_PATH = "/.well-known/jwks.json"

EC_KEY = ec.generate_private_key(ec.SECP256R1())
RSA_KEY = rsa.generate_private_key(public_exponent=65537, key_size=2048)
ED_KEY = ed25519.Ed25519PrivateKey.generate()
PRIVATE_KEYS: dict[str, Any] = {"EC": EC_KEY, "RSA": RSA_KEY, "Ed25519": ED_KEY}
ALGORITHMS = {"EC": "ES256", "RSA": "RS256", "Ed25519": "EdDSA"}


def pem(key: Any) -> bytes:
    return bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )


def public_pem(key: Any) -> bytes:
    return bytes(
        key.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
    )


def private_jwk(key: Any, alg: str) -> dict[str, Any]:
    jwk: dict[str, Any] = get_default_algorithms()[alg].to_jwk(key, as_dict=True)
    return {**jwk, "kid": "jwk-key", "alg": alg}


def load(kind: str, form: str, **kwargs: Any) -> CardSigningKey:
    key = PRIVATE_KEYS[kind]
    if form == "pem":
        return CardSigningKey.from_pem(pem(key), **kwargs)
    return CardSigningKey.from_jwk(private_jwk(key, ALGORITHMS[kind]), **kwargs)


def publisher(key: CardSigningKey, **options: Any) -> AgentCardPublisher:
    return AgentCardPublisher(
        options.pop("template", TEMPLATE),
        interfaces=SERVED,
        extensions=(EXT_NEW, EXT_DECLARED),
        base_url=options.pop("base_url", BASE),
        options=CardOptions(last_modified=LAST_MODIFIED, signing_key=key, **options),
    )


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def b64decode(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def get(path: str = DEFAULT_CARD_PATH, *headers: tuple[str, str], method: str = "GET") -> Any:
    return HttpRequest(method, path, headers=Headers(headers))


ED = CardSigningKey.from_key(ED_KEY, kid="ed-1")
ED_PUBLISHER = publisher(ED, jwks_path=JWKS_PATH)
SIGNED = ED_PUBLISHER.document_for()
KEYS = {"ed-1": public_pem(ED_KEY)}


# --- what is signed and how it looks -------------------------------------------------------


def independent_check(body: bytes, public_key: Any, kind: str) -> dict[str, Any]:
    """Verify the one signature of ``body`` without our code; return its protected header."""
    document = json.loads(body)
    [entry] = document.pop("signatures")
    assert set(entry) == {"protected", "signature"}
    signing_input = (
        entry["protected"].encode()
        + b"."
        + base64.urlsafe_b64encode(rfc8785.dumps(document)).rstrip(b"=")
    )
    raw = b64decode(entry["signature"])
    if kind == "EC":
        half = len(raw) // 2
        der = encode_dss_signature(int.from_bytes(raw[:half]), int.from_bytes(raw[half:]))
        public_key.verify(der, signing_input, ec.ECDSA(hashes.SHA256()))
    elif kind == "RSA":
        public_key.verify(raw, signing_input, padding.PKCS1v15(), hashes.SHA256())
    else:
        public_key.verify(raw, signing_input)
    header: dict[str, Any] = json.loads(b64decode(entry["protected"]))
    return header


@pytest.mark.parametrize("form", ["pem", "jwk"])
@pytest.mark.parametrize("kind", ["EC", "RSA", "Ed25519"])
def test_each_key_type_and_form_signs_a_card_that_verifies(kind: str, form: str) -> None:
    key = load(kind, form)
    body = publisher(key).document_for().body
    header = independent_check(body, PRIVATE_KEYS[kind].public_key(), kind)
    assert header == {"alg": ALGORITHMS[kind], "typ": "JOSE", "kid": key.kid}
    if form == "jwk":
        assert key.kid == "jwk-key"
    card = verify_agent_card(body, {key.kid: public_pem(PRIVATE_KEYS[kind])})
    assert card.name == "Echo"
    assert len(card.signatures) == 1
    public = {k: v for k, v in private_jwk(PRIVATE_KEYS[kind], key.algorithm).items()
              if k not in ("d", "p", "q", "dp", "dq", "qi")}  # fmt: skip
    assert verify_agent_card(body, {key.kid: public}) == card


def test_the_default_kid_is_the_rfc7638_thumbprint() -> None:
    key = CardSigningKey.from_key(EC_KEY)
    jwk = key.public_jwk
    members = json.dumps({k: jwk[k] for k in ("crv", "kty", "x", "y")}, separators=(",", ":"))
    expected = base64.urlsafe_b64encode(hashlib.sha256(members.encode()).digest()).rstrip(b"=")
    assert key.kid == expected.decode()


def test_the_signed_card_is_the_unsigned_one_plus_signatures() -> None:
    unsigned = AgentCardPublisher(
        TEMPLATE,
        interfaces=SERVED,
        extensions=(EXT_NEW, EXT_DECLARED),
        base_url=BASE,
        options=CardOptions(last_modified=LAST_MODIFIED),
    ).document_for()
    signed = json.loads(SIGNED.body)
    signatures = signed.pop("signatures")
    assert signed == json.loads(unsigned.body)
    assert canonical_card_payload(json.loads(SIGNED.body)) == rfc8785.dumps(signed)
    # The value agrees with the bytes, and the bytes are still a strict v1.0 card.
    assert msgspec.to_builtins(SIGNED.card.signatures) == signatures
    assert codec.decode(SIGNED.body, t.AgentCard) == SIGNED.card
    assert list(validator_for("AgentCard").iter_errors(json.loads(SIGNED.body))) == []


def test_jku_points_to_the_served_jwks_of_each_base_url() -> None:
    other = ED_PUBLISHER.document_for("https://other.example/x")
    headers = [json.loads(b64decode(d.card.signatures[0].protected)) for d in (SIGNED, other)]
    assert [h["jku"] for h in headers] == [BASE + JWKS_PATH, "https://other.example/x" + JWKS_PATH]
    # An explicit jku on the key wins over the served one.
    fixed = CardSigningKey.from_key(ED_KEY, kid="ed-1", jku="https://keys.example/jwks.json")
    card = publisher(fixed, jwks_path=JWKS_PATH).card_for()
    assert json.loads(b64decode(card.signatures[0].protected))["jku"] == fixed.jku


def test_template_signatures_are_replaced_by_the_key_s() -> None:
    stale = t.AgentCardSignature(protected="e30", signature="AAAA")
    template = msgspec.structs.replace(TEMPLATE, signatures=[stale])
    card = publisher(ED, template=template).card_for()
    assert len(card.signatures) == 1
    assert card.signatures[0] != stale
    verify_agent_card(publisher(ED, template=template).document_for().body, KEYS)


def test_a_legacy_hybrid_card_is_signed_with_its_v0_3_fields() -> None:
    body = publisher(ED, legacy_v0_3_fields=True).document_for().body
    assert "preferredTransport" in json.loads(body)
    verify_agent_card(body, KEYS)
    stripped = json.loads(body)
    del stripped["preferredTransport"]
    with pytest.raises(CardSignatureError, match="does not match"):
        verify_agent_card(json.dumps(stripped), KEYS)


# --- tampering -----------------------------------------------------------------------------


def _edit(change: Callable[[dict[str, Any]], None]) -> bytes:
    document = json.loads(SIGNED.body)
    change(document)
    return json.dumps(document).encode()


TAMPERING: dict[str, Callable[[dict[str, Any]], None]] = {
    "change a top-level field": lambda d: d.update(name="Evil"),
    "change a nested field": lambda d: d["supportedInterfaces"][0].update(url="https://evil"),
    "change a number": lambda d: d["capabilities"]["extensions"][2].update(params={"k": 2}),
    "add a top-level field": lambda d: d.update(iconUrl="https://evil/icon.png"),
    "add an unknown field": lambda d: d.update(x=1),
    "add a nested field": lambda d: d["skills"][0].update(examples=["rm -rf"]),
    "add a list entry": lambda d: d["defaultInputModes"].append("application/json"),
    "remove a field": lambda d: d.pop("securityRequirements"),
    "remove a nested field": lambda d: d["skills"][0].pop("tags"),
    "remove an empty requirement scope": lambda d: d["securityRequirements"][0]["schemes"].pop(
        "key"
    ),
    "reorder a list": lambda d: d["supportedInterfaces"].reverse(),
}


@pytest.mark.parametrize("change", TAMPERING.values(), ids=TAMPERING.keys())
def test_any_change_to_the_card_is_refused(change: Callable[[dict[str, Any]], None]) -> None:
    tampered = _edit(change)
    assert tampered != _edit(lambda d: None)
    with pytest.raises(CardSignatureError, match="does not match the card's content"):
        verify_agent_card(tampered, KEYS)


def test_member_order_and_whitespace_do_not_matter() -> None:
    def reverse(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: reverse(v) for k, v in reversed(value.items())}
        if isinstance(value, list):
            return [reverse(v) for v in value]
        return value

    reordered = json.dumps(reverse(json.loads(SIGNED.body)), indent=3, ensure_ascii=True)
    assert reordered.encode() != SIGNED.body
    assert list(json.loads(reordered)) != list(json.loads(SIGNED.body))
    assert verify_agent_card(reordered, KEYS) == SIGNED.card


def _with_header(header: dict[str, Any], signature: str | None = None) -> bytes:
    def change(d: dict[str, Any]) -> None:
        entry = d["signatures"][0]
        entry["protected"] = base64.urlsafe_b64encode(json.dumps(header).encode()).decode()
        if signature is not None:
            entry["signature"] = signature

    return _edit(change)


def test_signature_problems_each_say_what_is_wrong() -> None:
    cases: list[tuple[bytes | str, str]] = [
        (_edit(lambda d: d.pop("signatures")), "has no signatures"),
        (_edit(lambda d: d.update(signatures=[])), "has no signatures"),
        (_edit(lambda d: d["signatures"][0].pop("signature")), "lacks its"),
        (_edit(lambda d: d["signatures"][0].update(protected="%%%")), "not base64url JSON"),
        (_with_header({"alg": "EdDSA", "kid": "other"}), "unknown kid 'other'"),
        (_with_header({"alg": "ES256", "kid": "ed-1"}), "algorithm 'ES256' is not accepted"),
        (_with_header({"alg": "none", "kid": "ed-1"}, ""), "algorithm 'none' is not accepted"),
        (_with_header({"alg": "EdDSA", "kid": "ed-1", "typ": "JOSE"}), "does not match"),
        (_edit(lambda d: d["signatures"][0].update(signature="AAAA")), "does not match"),
        (b"[1]", "not a JSON object"),
        (b"{", "not valid JSON"),
        (SIGNED.body[:-1] + b',"name":"Evil"}', "duplicate member"),
    ]
    for body, reason in cases:
        with pytest.raises(CardSignatureError, match=reason):
            verify_agent_card(body, KEYS)


def test_an_hmac_token_made_with_the_public_key_is_refused() -> None:
    """The classic algorithm confusion: HS256 keyed with the public PEM."""
    document = json.loads(SIGNED.body)
    del document["signatures"]
    header = {"alg": "HS256", "kid": "ed-1", "typ": "JOSE"}
    protected = b64(json.dumps(header).encode())
    signing_input = f"{protected}.{b64(rfc8785.dumps(document))}".encode()
    signature = b64(hmac.new(public_pem(ED_KEY), signing_input, "sha256").digest())
    document["signatures"] = [{"protected": protected, "signature": signature}]
    with pytest.raises(CardSignatureError, match="'HS256' is not accepted"):
        verify_agent_card(json.dumps(document), {"ed-1": public_pem(ED_KEY)})


def test_algorithms_narrow_what_a_key_accepts() -> None:
    key = CardSigningKey.from_key(RSA_KEY, kid="rsa", algorithm="PS256")
    body = publisher(key).document_for().body
    assert verify_agent_card(body, {"rsa": public_pem(RSA_KEY)}).name == "Echo"
    with pytest.raises(CardSignatureError, match="'PS256' is not accepted"):
        verify_agent_card(body, {"rsa": public_pem(RSA_KEY)}, algorithms=["RS256"])
    # A JWK that names its algorithm verifies only with it.
    jwk = {**key.public_jwk, "alg": "RS256"}
    with pytest.raises(CardSignatureError, match="'PS256' is not accepted"):
        verify_agent_card(body, {"rsa": jwk})


def test_one_valid_signature_among_several_is_enough_for_key_rotation() -> None:
    old = CardSigningKey.from_key(EC_KEY, kid="old")
    document = json.loads(SIGNED.body)
    document["signatures"].insert(0, msgspec.to_builtins(old.sign_document(document)))
    body = json.dumps(document)
    assert verify_agent_card(body, KEYS).name == "Echo"
    assert verify_agent_card(body, {"old": public_pem(EC_KEY)}).name == "Echo"
    with pytest.raises(CardSignatureError, match=r"unknown kid 'old'; unknown kid 'ed-1'"):
        verify_agent_card(body, {"new": public_pem(EC_KEY)})


def test_a_signed_document_that_is_not_a_card_is_refused() -> None:
    document: dict[str, Any] = {"name": "not a card"}
    document["signatures"] = [msgspec.to_builtins(ED.sign_document(document))]
    with pytest.raises(CardSignatureError, match="not a valid agent card"):
        verify_agent_card(json.dumps(document), KEYS)


# --- keys ----------------------------------------------------------------------------------


def test_keys_that_cannot_sign_cards_are_refused() -> None:
    with pytest.raises(ValueError, match="does not fit"):
        CardSigningKey.from_key(EC_KEY, algorithm="RS256")
    with pytest.raises(ValueError, match="unsupported EC curve"):
        CardSigningKey.from_key(ec.generate_private_key(ec.SECP256K1()))
    with pytest.raises(ValueError, match="not a private"):
        CardSigningKey.from_jwk({k: v for k, v in private_jwk(EC_KEY, "ES256").items() if k != "d"})
    with pytest.raises(ValueError, match="not a private EC, RSA or OKP key"):
        CardSigningKey.from_jwk({"kty": "oct", "k": "c2VjcmV0"})
    with pytest.raises(ValueError, match="must be an EC, RSA or EdDSA private key"):
        CardSigningKey.from_key(b"secret")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="no BEGIN/END delimiters for a private key"):
        CardSigningKey.from_pem(public_pem(EC_KEY))


def test_encrypted_pem_and_jwk_text_load() -> None:
    encrypted = EC_KEY.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.BestAvailableEncryption(b"pw"),
    )
    key = CardSigningKey.from_pem(encrypted, password=b"pw", kid="enc")
    assert key.public_jwk == {**CardSigningKey.from_key(EC_KEY, kid="enc").public_jwk}
    from_text = CardSigningKey.from_jwk(json.dumps(private_jwk(ED_KEY, "EdDSA")))
    assert (from_text.kid, from_text.algorithm) == ("jwk-key", "EdDSA")


# --- caching, ETag and 304 -----------------------------------------------------------------


@pytest.fixture
def sign_calls(monkeypatch: pytest.MonkeyPatch) -> list[bytes]:
    calls: list[bytes] = []
    encode = api_jws.encode

    def counting(payload: bytes, *args: Any, **kwargs: Any) -> str:
        calls.append(payload)
        return encode(payload, *args, **kwargs)

    monkeypatch.setattr(api_jws, "encode", counting)
    return calls


def test_each_variant_is_signed_once(sign_calls: list[bytes]) -> None:
    key = CardSigningKey.from_key(EC_KEY, kid="ec")  # ECDSA: a new signature differs
    served = publisher(key)
    first = served.respond(get())
    for _ in range(5):
        again = served.respond(get())
        assert again.body is first.body
    assert len(sign_calls) == 1
    served.respond(get(), base_url="https://other.example")
    assert len(sign_calls) == 2
    # The key keeps its signatures across publishers (and evictions): same bytes, same ETag.
    rebuilt = publisher(key).respond(get())
    assert (rebuilt.body, rebuilt.headers) == (first.body, first.headers)
    assert len(sign_calls) == 2


def test_a_signed_variant_has_its_own_stable_etag_and_304() -> None:
    unsigned = AgentCardPublisher(
        TEMPLATE,
        interfaces=SERVED,
        extensions=(EXT_NEW, EXT_DECLARED),
        base_url=BASE,
        options=CardOptions(last_modified=LAST_MODIFIED),
    ).document_for()
    assert SIGNED.etag == f'"{hashlib.sha256(SIGNED.body).hexdigest()}"'
    assert SIGNED.etag != unsigned.etag
    reply = ED_PUBLISHER.respond(get())
    assert reply.status == 200
    assert reply.body == SIGNED.body
    assert dict(reply.headers)["etag"] == SIGNED.etag
    assert (
        ED_PUBLISHER.respond(get(DEFAULT_CARD_PATH, ("if-none-match", SIGNED.etag))).status == 304
    )
    stale = ED_PUBLISHER.respond(get(DEFAULT_CARD_PATH, ("if-none-match", unsigned.etag)))
    assert stale.status == 200
    since = ("if-modified-since", "Thu, 02 Jan 2025 03:04:05 GMT")
    assert ED_PUBLISHER.respond(get(DEFAULT_CARD_PATH, since)).status == 304


# --- the JWKS and the protocol -------------------------------------------------------------


def protocol(key: CardSigningKey | None = ED, **options: Any) -> ServerProtocol:
    return ServerProtocol(
        TEMPLATE,
        last_modified=LAST_MODIFIED,
        base_url=BASE,
        options=ProtocolOptions(card_signing_key=key, **options),
    )


def reply(served: ServerProtocol, request: HttpRequest) -> HttpResponse:
    response = served.receive_request(request)
    assert isinstance(response, HttpResponse)
    return response


def test_the_protocol_serves_a_signed_card_and_its_jwks() -> None:
    served = protocol(jwks_path=JWKS_PATH)
    card = reply(served, get())
    jwks = reply(served, get(JWKS_PATH))
    assert card.status == 200
    assert jwks.status == 200
    headers = dict(jwks.headers)
    assert headers["content-type"] == "application/jwk-set+json"
    document = json.loads(jwks.body)
    assert document == jwks_document([ED])
    assert document["keys"][0] == {**ED.public_jwk, "kid": "ed-1", "use": "sig", "alg": "EdDSA"}
    assert "d" not in document["keys"][0]
    # A client verifies with the keys of the JWKS the jku names.
    keys = {k["kid"]: k for k in document["keys"]}
    assert verify_agent_card(card.body, keys).name == "Echo"
    # HEAD, 304 and 405 as for the card.
    head = reply(served, get(JWKS_PATH, method="HEAD"))
    assert (head.status, head.body) == (200, b"")
    etag = headers["etag"]
    assert reply(served, get(JWKS_PATH, ("if-none-match", etag))).status == 304
    assert reply(served, get(JWKS_PATH, method="POST")).status == 405


def test_without_a_jwks_path_nothing_is_served_there_and_no_jku() -> None:
    served = protocol()
    assert reply(served, get(JWKS_PATH)).status == 404
    header = json.loads(b64decode(served.card_publisher.card_for().signatures[0].protected))
    assert "jku" not in header


def test_jwks_configuration_errors_are_raised_at_startup() -> None:
    with pytest.raises(LocalProtocolError, match="without a card signing key"):
        protocol(None, jwks_path=JWKS_PATH)
    with pytest.raises(LocalProtocolError, match="differ from the card's"):
        protocol(jwks_path=DEFAULT_CARD_PATH)


def test_the_extended_card_value_is_signed_over_its_encoding() -> None:
    served = protocol(jwks_path=JWKS_PATH)
    built = build_card(msgspec.structs.replace(TEMPLATE, name="Extended"), SERVED, (), BASE)
    extended = served.sign_card(built)
    body = codec.encode(extended)
    assert verify_agent_card(body, KEYS).name == "Extended"
    assert json.loads(b64decode(extended.signatures[0].protected))["jku"] == BASE + JWKS_PATH
    assert protocol(None).sign_card(TEMPLATE) is TEMPLATE
    # sign_card replaces signatures, so signing twice gives one signature.
    again = sign_card(extended, ED)
    assert len(again.signatures) == 1
    assert verify_agent_card(codec.encode(again), KEYS) == again


def test_a_card_without_a_canonical_form_is_refused_at_startup() -> None:
    huge = t.AgentExtension(uri="urn:ext:huge", params={"n": 2**60})
    with pytest.raises(LocalProtocolError, match=r"cannot be signed: .*canonical form"):
        AgentCardPublisher(
            TEMPLATE,
            interfaces=SERVED,
            extensions=(huge,),
            base_url=BASE,
            options=CardOptions(last_modified=LAST_MODIFIED, signing_key=ED),
        )


# --- garbage in: a CardSignatureError, never another exception -----------------------------

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=10,
)


@settings(max_examples=150, deadline=None)
@given(st.binary(max_size=64) | st.text(max_size=64).map(str.encode))
def test_arbitrary_bytes_only_ever_give_a_card_signature_error(data: bytes) -> None:
    with pytest.raises(CardSignatureError):
        verify_agent_card(data, KEYS)


@settings(max_examples=150, deadline=None)
@given(
    st.sampled_from(["signatures", "name", "capabilities", "skills", "x"]),
    JSON_VALUES,
    st.sampled_from([None, "protected", "signature", "header"]),
)
def test_any_member_replaced_gives_a_card_signature_error(
    member: str, value: Any, in_signature: str | None
) -> None:
    document = json.loads(SIGNED.body)
    if in_signature is None:
        document[member] = value
    else:
        document["signatures"][0][in_signature] = value
    if document == json.loads(SIGNED.body):
        return
    try:
        verify_agent_card(json.dumps(document), KEYS)
    except CardSignatureError:
        return
    # Only an unprotected header may change without breaking the signature (RFC 7515).
    assert in_signature == "header"


def test_deep_nesting_is_a_card_signature_error() -> None:
    deep = b'{"name":' + b"[" * 5000 + b"]" * 5000 + b"}"
    with pytest.raises(CardSignatureError):
        verify_agent_card(deep, KEYS)
    rfc_deep = json.loads(SIGNED.body)
    nested: Any = 1
    for _ in range(900):
        nested = [nested]
    rfc_deep["x"] = nested
    with pytest.raises(CardSignatureError):
        verify_agent_card(json.dumps(rfc_deep), KEYS)
