"""Signed agent cards (L1, pure): JWS over the RFC 8785 form of the card (v1.0 §8.4).

A card is signed over its canonical JSON (RFC 8785, JCS) without the ``signatures`` member.
The JWS is the ordinary compact one, with the payload taken out: the signing input is
``BASE64URL(protected) || '.' || BASE64URL(JCS(card))`` and the card carries
``{"protected": ..., "signature": ...}`` (§8.4.2). That is not RFC 7797's unencoded
payload (``b64: false``), which is what PyJWT's ``is_payload_detached`` makes, so the
compact form is built and its middle part dropped, as the reference SDK does.

What is signed is the JSON object the server sends, member for member: the v1.0 ProtoJSON
of the card, defaults omitted and ``optional`` members kept when set (§8.4.1), or the hybrid
card with its v0.3 members when those are configured. :func:`verify_agent_card` checks the
received object the same way, so a member changed, added or removed anywhere breaks the
signature, while the order of members and whitespace do not matter.

- :class:`CardSigningKey` is the deployment's private key (EC P-256/384/521, RSA, Ed25519;
  from PEM or JWK), with its ``kid``, algorithm and public JWK. ``sign_document`` caches
  the signature of each payload it has signed, so a card variant is signed once.
- :func:`verify_agent_card` returns the verified :class:`~a2a_core.types.AgentCard` or
  raises :class:`CardSignatureError`.
- :func:`jwks_document` is the JWK Set the ``jku`` header points to.

Needs the ``a2aserve-core[signing]`` extra (PyJWT with ``cryptography``, ``rfc8785``). Nothing
here does I/O or reads a clock; a key is parsed once, when it is loaded.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final, TypeAlias

import jwt
import msgspec
import rfc8785
from cryptography.exceptions import UnsupportedAlgorithm
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed448, ed25519, rsa
from jwt import PyJWK, api_jws
from jwt.algorithms import get_default_algorithms

from a2a_core._protocol import codec
from a2a_core.types import AgentCard, AgentCardSignature

__all__ = [
    "CardSignatureError",
    "CardSigningKey",
    "VerificationKey",
    "canonical_card_payload",
    "jwks_document",
    "sign_card",
    "verify_agent_card",
]

PrivateKey: TypeAlias = (
    ec.EllipticCurvePrivateKey
    | rsa.RSAPrivateKey
    | ed25519.Ed25519PrivateKey
    | ed448.Ed448PrivateKey
)
PublicKey: TypeAlias = (
    ec.EllipticCurvePublicKey | rsa.RSAPublicKey | ed25519.Ed25519PublicKey | ed448.Ed448PublicKey
)

_EC_ALGORITHMS: Final = {"secp256r1": "ES256", "secp384r1": "ES384", "secp521r1": "ES512"}
_RSA_ALGORITHMS: Final = frozenset({"RS256", "RS384", "RS512", "PS256", "PS384", "PS512"})
# The JWK members of RFC 7638 §3.2, by key type: what the default kid is a hash of.
_THUMBPRINT_MEMBERS: Final = {"EC": ("crv", "kty", "x", "y"), "RSA": ("e", "kty", "n"),
                              "OKP": ("crv", "kty", "x")}  # fmt: skip
_JWA: Final = get_default_algorithms()


class CardSignatureError(ValueError):
    """A card whose signature does not verify; the message says why."""


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _b64url_decode(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _algorithms_for(key: PrivateKey | PublicKey) -> frozenset[str]:
    """The JWS algorithms a key may sign or verify with (one per EC curve: RFC 7518 §3.4)."""
    if isinstance(key, ec.EllipticCurvePrivateKey | ec.EllipticCurvePublicKey):
        alg = _EC_ALGORITHMS.get(key.curve.name)
        if alg is None:
            raise ValueError(f"unsupported EC curve for card signing: {key.curve.name}")
        return frozenset({alg})
    if isinstance(key, rsa.RSAPrivateKey | rsa.RSAPublicKey):
        return _RSA_ALGORITHMS
    return frozenset({"EdDSA"})


def _thumbprint(public_jwk: Mapping[str, Any]) -> str:
    """The RFC 7638 SHA-256 thumbprint of a public JWK, base64url."""
    members = {k: public_jwk[k] for k in _THUMBPRINT_MEMBERS[public_jwk["kty"]]}
    return _b64url(hashlib.sha256(rfc8785.dumps(members)).digest())


def _public_jwk(key: PublicKey, alg: str) -> dict[str, Any]:
    jwk: dict[str, Any] = _JWA[alg].to_jwk(key, as_dict=True)
    return jwk


def _parse_jwk(jwk: Mapping[str, Any] | str | bytes) -> PyJWK:
    data = json.loads(jwk) if isinstance(jwk, str | bytes) else dict(jwk)
    if not isinstance(data, dict):
        raise ValueError("a JWK must be a JSON object")
    return PyJWK(data)


def _jwk_alg(jwk: PyJWK) -> str | None:
    """The ``alg`` member the JWK itself carries (PyJWK's ``algorithm_name`` also names a
    default for a JWK without one, which must not restrict anything)."""
    alg = getattr(jwk, "_jwk_data", {}).get("alg")
    return alg if isinstance(alg, str) else None


@dataclass(frozen=True, eq=False, kw_only=True)
class CardSigningKey:
    """A private key that signs agent cards, with the header that names it.

    Load one with :meth:`from_pem` or :meth:`from_jwk`. The protected header of each
    signature is ``{"alg", "kid", "typ": "JOSE"}`` plus ``jku`` when there is one: the
    ``jku`` given here, else the JWKS URL the server derives from its base URL and
    ``ProtocolOptions.jwks_path``. Signatures are cached per (payload, ``jku``) in a small
    LRU, so that each card variant is signed once (no lock: at worst a concurrent use signs
    twice).
    """

    private_key: PrivateKey
    """The ``cryptography`` private key."""
    algorithm: str
    """JWS ``alg``: ES256/ES384/ES512 by curve, RS256 (or another RS/PS) for RSA, EdDSA."""
    kid: str
    """JWS ``kid``; by default the RFC 7638 thumbprint of the public key."""
    jku: str | None = None
    """Absolute URL of a JWK Set holding the public key, for the header; ``None``: the
    server's own JWKS URL if it serves one, else no ``jku``."""
    cache_limit: int = 64
    """Signatures kept (one per card variant)."""
    _cache: OrderedDict[tuple[bytes, str | None], AgentCardSignature] = field(
        default_factory=OrderedDict, repr=False
    )

    def __post_init__(self) -> None:
        if self.algorithm not in _algorithms_for(self.private_key):
            raise ValueError(f"algorithm {self.algorithm} does not fit this key")
        if not self.kid:
            raise ValueError("a card signing key needs a non-empty kid")

    @classmethod
    def from_key(
        cls,
        private_key: PrivateKey,
        *,
        kid: str | None = None,
        algorithm: str | None = None,
        jku: str | None = None,
    ) -> CardSigningKey:
        """Wrap a ``cryptography`` private key; ``alg`` and ``kid`` default from the key."""
        if not isinstance(
            private_key,
            ec.EllipticCurvePrivateKey
            | rsa.RSAPrivateKey
            | ed25519.Ed25519PrivateKey
            | ed448.Ed448PrivateKey,
        ):
            raise ValueError(
                f"a card signing key must be an EC, RSA or EdDSA private key, "
                f"not {type(private_key).__name__}"
            )
        allowed = _algorithms_for(private_key)
        alg = algorithm or ("RS256" if "RS256" in allowed else next(iter(allowed)))
        if alg not in allowed:
            raise ValueError(f"algorithm {alg} does not fit this key")
        if kid is None:
            kid = _thumbprint(_public_jwk(private_key.public_key(), alg))
        return cls(private_key=private_key, algorithm=alg, kid=kid, jku=jku)

    @classmethod
    def from_pem(
        cls,
        pem: str | bytes,
        *,
        password: bytes | None = None,
        kid: str | None = None,
        algorithm: str | None = None,
        jku: str | None = None,
    ) -> CardSigningKey:
        """Load a PEM private key (PKCS#8, or traditional EC/RSA)."""
        data = pem.encode("ascii") if isinstance(pem, str) else pem
        key = serialization.load_pem_private_key(data, password=password)
        return cls.from_key(key, kid=kid, algorithm=algorithm, jku=jku)  # type: ignore[arg-type]

    @classmethod
    def from_jwk(
        cls,
        jwk: Mapping[str, Any] | str | bytes,
        *,
        kid: str | None = None,
        algorithm: str | None = None,
        jku: str | None = None,
    ) -> CardSigningKey:
        """Load a private JWK; its own ``kid`` and ``alg`` are used unless overridden."""
        parsed = _parse_jwk(jwk)
        key = parsed.key
        if not hasattr(key, "public_key"):
            raise ValueError("the JWK is not a private EC, RSA or OKP key")
        alg = algorithm or _jwk_alg(parsed)
        return cls.from_key(key, kid=kid or parsed.key_id, algorithm=alg, jku=jku)

    @property
    def public_key(self) -> PublicKey:
        """The public half."""
        return self.private_key.public_key()

    @property
    def public_jwk(self) -> dict[str, Any]:
        """The public JWK, with ``kid``, ``alg`` and ``use: sig``."""
        jwk = _public_jwk(self.public_key, self.algorithm)
        jwk.update(kid=self.kid, alg=self.algorithm, use="sig")
        return jwk

    def protected_header(self, jku: str | None = None) -> dict[str, str]:
        """The JWS protected header of a signature (``jku``: when this key has none)."""
        header = {"alg": self.algorithm, "typ": "JOSE", "kid": self.kid}
        if self.jku or jku:
            header["jku"] = self.jku or jku or ""
        return header

    def sign_document(
        self, document: Mapping[str, Any], *, jku: str | None = None
    ) -> AgentCardSignature:
        """The signature of a card's JSON object (its ``signatures`` member is ignored)."""
        payload = canonical_card_payload(document)
        cache_key = (payload, self.jku or jku)
        cached = self._cache.get(cache_key)
        if cached is not None:
            return cached
        compact = api_jws.encode(
            payload,
            self.private_key,
            algorithm=self.algorithm,
            headers=self.protected_header(jku),
        )
        protected, _, signature = compact.split(".")
        result = AgentCardSignature(protected=protected, signature=signature)
        self._cache[cache_key] = result
        while len(self._cache) > self.cache_limit:
            self._cache.popitem(last=False)
        return result


def canonical_card_payload(document: Mapping[str, Any]) -> bytes:
    """The signed bytes: the RFC 8785 form of the card's JSON object without ``signatures``.

    Raises :class:`CardSignatureError` for a value JCS cannot represent (an integer
    beyond 2**53, NaN).
    """
    unsigned = {k: v for k, v in document.items() if k != "signatures"}
    try:
        return rfc8785.dumps(unsigned)
    except rfc8785.CanonicalizationError as exc:
        raise CardSignatureError(f"the card has no canonical form: {exc}") from None
    except RecursionError:
        raise CardSignatureError("the card is nested too deeply") from None


def sign_card(card: AgentCard, key: CardSigningKey, *, jku: str | None = None) -> AgentCard:
    """The card with ``key``'s signature as its only one, over its v1.0 encoding.

    For a card served as a value inside a reply (the extended card), whose bytes are its
    ProtoJSON; the public card's bytes are signed by the card publisher.
    """
    document = json.loads(codec.encode(msgspec.structs.replace(card, signatures=[])))
    signature = key.sign_document(document, jku=jku)
    return msgspec.structs.replace(card, signatures=[signature])


def jwks_document(keys: Iterable[CardSigningKey]) -> dict[str, Any]:
    """The JWK Set (RFC 7517 §5) of the public keys: what ``jku`` points to."""
    return {"keys": [key.public_jwk for key in keys]}


# --- verification --------------------------------------------------------------------------

#: A key :func:`verify_agent_card` accepts: a PEM (public or private), a JWK (as a mapping
#: or JSON text), a ``cryptography`` key object, a :class:`jwt.PyJWK`, or a
#: :class:`CardSigningKey` (its public half is used).
VerificationKey: TypeAlias = (
    str | bytes | Mapping[str, Any] | PublicKey | PrivateKey | PyJWK | CardSigningKey
)


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result = dict(pairs)
    if len(result) != len(pairs):
        # Two parsers may keep different members of a duplicate: what one verifies is not
        # what the other reads.
        raise CardSignatureError("the card has a duplicate member name")
    return result


def _verification_key(key: VerificationKey) -> tuple[PublicKey, frozenset[str]]:
    """A key in any accepted form, as a public key and the algorithms it may verify."""
    if isinstance(key, CardSigningKey):
        return key.public_key, frozenset({key.algorithm})
    if isinstance(key, PyJWK):
        parsed: Any = key.key
        alg = _jwk_alg(key)
        restrict = None if alg is None else {alg}
    elif isinstance(key, str | bytes) and key.lstrip()[:1] in ("{", b"{"):
        return _verification_key(_parse_jwk(key))
    elif isinstance(key, str | bytes):
        data = key.encode("ascii") if isinstance(key, str) else key
        if b"PRIVATE KEY" in data:
            parsed = serialization.load_pem_private_key(data, password=None)
        else:
            parsed = serialization.load_pem_public_key(data)
        restrict = None
    elif isinstance(key, Mapping):
        return _verification_key(_parse_jwk(key))
    else:
        parsed, restrict = key, None
    if hasattr(parsed, "private_bytes"):
        parsed = parsed.public_key()
    if not isinstance(
        parsed,
        ec.EllipticCurvePublicKey
        | rsa.RSAPublicKey
        | ed25519.Ed25519PublicKey
        | ed448.Ed448PublicKey,
    ):
        raise ValueError(f"not an EC, RSA or EdDSA key: {type(parsed).__name__}")
    allowed = _algorithms_for(parsed)
    return parsed, allowed if restrict is None else allowed & frozenset(restrict)


def _usable_key(kid: str, key: VerificationKey) -> tuple[PublicKey, frozenset[str]]:
    """`_verification_key`, its failures as `CardSignatureError`: a key from a fetched JWKS
    is the server's to choose, and PyJWT and cryptography refuse a bad one (off its curve,
    too short, of an unknown type) with errors of their own."""
    try:
        return _verification_key(key)
    except (jwt.PyJWTError, UnsupportedAlgorithm, ValueError, TypeError) as exc:
        reason = str(exc)[:120] or type(exc).__name__
        raise CardSignatureError(f"the key {kid[:64]!r} cannot be used: {reason}") from None


def _check_signature(
    signature: Any,
    encoded_payload: str,
    keys: Mapping[str, tuple[PublicKey, frozenset[str]]],
    algorithms: frozenset[str] | None,
) -> None:
    """Raise CardSignatureError unless this one entry of ``signatures`` verifies."""
    if not isinstance(signature, dict):
        raise CardSignatureError("a signature is not an object")
    protected, value = signature.get("protected"), signature.get("signature")
    if not isinstance(protected, str) or not isinstance(value, str):
        raise CardSignatureError("a signature lacks its 'protected' or 'signature' string")
    try:
        header = json.loads(_b64url_decode(protected))
    except (binascii.Error, ValueError):
        raise CardSignatureError("a signature's protected header is not base64url JSON") from None
    if not isinstance(header, dict):
        raise CardSignatureError("a signature's protected header is not a JSON object")
    kid, alg = header.get("kid"), header.get("alg")
    if not isinstance(kid, str) or kid not in keys:
        raise CardSignatureError(f"unknown kid {kid!r}")
    public_key, allowed = keys[kid]
    if algorithms is not None:
        allowed &= algorithms
    if not isinstance(alg, str) or alg not in allowed:
        raise CardSignatureError(f"algorithm {alg!r} is not accepted for kid {kid!r}")
    if "crit" in header or "b64" in header:
        raise CardSignatureError("a signature's protected header has 'crit' or 'b64'")
    try:
        api_jws.decode_complete(
            f"{protected}.{encoded_payload}.{value}", public_key, algorithms=[alg]
        )
    except jwt.PyJWTError:
        raise CardSignatureError(
            f"the signature of kid {kid!r} does not match the card's content"
        ) from None


def verify_agent_card(
    card_bytes: bytes | str,
    keys: Mapping[str, VerificationKey],
    *,
    algorithms: Iterable[str] | None = None,
) -> AgentCard:
    """The card in ``card_bytes``, once one of its signatures verifies; else raises.

    ``keys`` maps a ``kid`` to its public key (any :data:`VerificationKey`; a JWKS fetched
    from ``jku`` can be passed as ``{k["kid"]: k for k in jwks["keys"]}``). Each key
    verifies only with the algorithms its type allows (and a JWK's own ``alg``), narrowed
    further by ``algorithms`` when given. The payload is the RFC 8785 form of the received
    JSON object without ``signatures``: any member changed, added or removed, at any depth,
    fails; order and whitespace do not.

    Raises :class:`CardSignatureError` (no signature, unknown ``kid``, refused algorithm,
    signature mismatch, a body that is not a card) with the reason of each signature.
    """
    try:
        text = codec.without_bom(card_bytes) if isinstance(card_bytes, bytes) else card_bytes
        document = json.loads(text, object_pairs_hook=_no_duplicates)
    except (ValueError, RecursionError) as exc:
        if isinstance(exc, CardSignatureError):
            raise
        raise CardSignatureError("the card is not valid JSON") from None
    if not isinstance(document, dict):
        raise CardSignatureError("the card is not a JSON object")
    signatures = document.get("signatures")
    if not isinstance(signatures, list) or not signatures:
        raise CardSignatureError("the card has no signatures")
    encoded = _b64url(canonical_card_payload(document))
    resolved = {kid: _usable_key(kid, key) for kid, key in keys.items()}
    allowed = None if algorithms is None else frozenset(algorithms)
    reasons: list[str] = []
    for signature in signatures:
        try:
            _check_signature(signature, encoded, resolved, allowed)
        except CardSignatureError as exc:
            reasons.append(str(exc))
            continue
        try:
            return codec.decode(
                card_bytes if isinstance(card_bytes, bytes) else card_bytes.encode(),
                AgentCard,
            )
        except codec.DecodeError as exc:
            raise CardSignatureError(
                f"the signed document is not a valid agent card: {exc.message}"
            ) from None
    raise CardSignatureError("no signature of the card verifies: " + "; ".join(reasons))
