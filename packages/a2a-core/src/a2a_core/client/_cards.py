"""Fetching agent cards: the well-known URL, a cache revalidated by ETag, signatures (L2)."""

from __future__ import annotations

import base64
import json
import time
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final
from urllib.parse import urlsplit

import anyio
import httpx

from a2a_core._protocol.agent_card import DEFAULT_CARD_PATH
from a2a_core._protocol.client import InvalidReplyError, parse_card
from a2a_core._protocol.codec import without_bom
from a2a_core.client._auth import refuse_unsafe_headers
from a2a_core.client._bodies import ACCEPT_ENCODING, read_limited
from a2a_core.client._errors import CardError, TransportError
from a2a_core.client._retry import BEFORE_REPLY, RetryPolicy
from a2a_core.types import AgentCard

__all__ = ["CardCache", "card_url_for", "fetch_card"]

#: The largest card the client reads (a card is a few KiB; a hostile server's is not).
MAX_CARD_BYTES: Final = 4 * 1024 * 1024
#: The largest signing key set (JWKS) the client reads; a few keys are a few KiB.
MAX_JWKS_BYTES: Final = 1024 * 1024
#: The most keys a signing key set may hold (each is parsed, and tried, at a cost).
MAX_JWKS_KEYS: Final = 64


def card_url_for(url: str, card_path: str = DEFAULT_CARD_PATH) -> str:
    """The card's URL for what the caller gave: a URL ending in ``.json`` is the card's
    own; anything else is the agent's base URL, below which the card is at ``card_path``."""
    if urlsplit(url).path.endswith(".json"):
        return url
    return url.rstrip("/") + card_path


@dataclass(frozen=True, slots=True)
class _Entry:
    etag: str | None
    last_modified: str | None
    body: bytes
    card: AgentCard


class CardCache:
    """Cards by URL, revalidated on every fetch with ``If-None-Match`` (a 304 reuses the
    parsed card). Bounded in entries and in bytes (the cards' bodies; a parsed card holds
    about as much again): the least recently used are dropped beyond either, and a card
    larger than ``max_bytes`` is not kept."""

    def __init__(self, max_entries: int = 64, max_bytes: int = 8 * 1024 * 1024) -> None:
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self._entries: OrderedDict[str, _Entry] = OrderedDict()
        self._bytes = 0

    def get(self, url: str) -> _Entry | None:
        entry = self._entries.get(url)
        if entry is not None:
            self._entries.move_to_end(url)
        return entry

    def put(self, url: str, entry: _Entry) -> None:
        old = self._entries.pop(url, None)
        if old is not None:
            self._bytes -= len(old.body)
        if len(entry.body) > self.max_bytes:
            return
        self._entries[url] = entry
        self._bytes += len(entry.body)
        while len(self._entries) > self.max_entries or self._bytes > self.max_bytes:
            _, dropped = self._entries.popitem(last=False)
            self._bytes -= len(dropped.body)

    @property
    def size_bytes(self) -> int:
        """The bytes of the cards kept."""
        return self._bytes

    def __len__(self) -> int:
        return len(self._entries)


#: The cache `A2AClient.connect` uses unless given one: one process, one set of cards.
DEFAULT_CARD_CACHE: Final = CardCache()


async def fetch_card(
    http: httpx.AsyncClient,
    url: str,
    *,
    cache: CardCache | None = None,
    headers: Mapping[str, str] | None = None,
    signing_keys: Mapping[str, Any] | None = None,
    verify_signature: bool = False,
    retry: RetryPolicy | None = None,
) -> tuple[AgentCard, bytes]:
    """The card at ``url`` (v0.3 cards converted to v1.0) and its bytes.

    With ``signing_keys`` (kid to key, as `a2a_core.signing.verify_agent_card` takes them)
    or ``verify_signature`` (the keys of the JWKS that a signature's ``jku`` names, fetched
    only from the card's own origin), a card none of whose signatures verifies is refused.
    Connection failures are retried as ``retry`` allows. Raises `CardError` (not found, not a
    card, bad signature) or `TransportError`.
    """
    entry = cache.get(url) if cache is not None else None
    request_headers = {
        "Accept": "application/json",
        **(headers or {}),
        "Accept-Encoding": ACCEPT_ENCODING,
    }
    refuse_unsafe_headers(request_headers.items())
    if entry is not None and entry.etag:
        request_headers["If-None-Match"] = entry.etag
    elif entry is not None and entry.last_modified:
        request_headers["If-Modified-Since"] = entry.last_modified
    policy = retry or RetryPolicy()
    started = time.monotonic()
    attempt = 0
    while True:
        try:
            async with http.stream("GET", url, headers=request_headers) as response:
                if response.status_code == 304 and entry is not None:
                    return entry.card, entry.body
                if response.status_code != 200:
                    raise CardError(
                        f"no agent card at {url}: HTTP {response.status_code}",
                        status=response.status_code,
                    )
                body = await read_limited(
                    response,
                    MAX_CARD_BYTES,
                    lambda: CardError(
                        f"the agent card at {url} is larger than {MAX_CARD_BYTES} bytes"
                    ),
                )
                etag = response.headers.get("etag")
                last_modified = response.headers.get("last-modified")
                break
        except BEFORE_REPLY as exc:
            attempt += 1
            if attempt >= policy.attempts or time.monotonic() - started > policy.deadline:
                raise TransportError(
                    f"could not fetch the agent card at {url}: {_describe(exc)}"
                ) from None
            await anyio.sleep(policy.wait(attempt - 1))
        except httpx.HTTPError as exc:
            raise TransportError(
                f"could not fetch the agent card at {url}: {_describe(exc)}"
            ) from None
        except InvalidReplyError as exc:  # an encoding the client does not decode
            raise CardError(f"{url}: {exc}") from None
    try:
        card = parse_card(body)
    except InvalidReplyError as exc:
        raise CardError(f"{url}: {exc}") from None
    if signing_keys is not None or verify_signature:
        keys = signing_keys if signing_keys is not None else await _jwks_keys(http, url, body)
        _verify(body, keys, url)
    if cache is not None:
        cache.put(url, _Entry(etag, last_modified, body, card))
    return card, body


def _verify(body: bytes, keys: Mapping[str, Any], url: str) -> None:
    try:
        from a2a_core.signing import CardSignatureError, verify_agent_card
    except ImportError:  # pragma: no cover - the signing extra is not installed
        raise CardError(
            "verifying card signatures needs the signing extra's packages: "
            "pip install 'PyJWT[crypto]' rfc8785"
        ) from None
    try:
        verify_agent_card(body, keys)
    except (CardSignatureError, ValueError) as exc:
        raise CardError(f"the agent card at {url} is not signed by a trusted key: {exc}") from None


def _signature_headers(body: bytes) -> list[dict[str, Any]]:
    """The protected headers of the card's signatures that decode (the others are the
    verifier's to refuse)."""
    headers: list[dict[str, Any]] = []
    try:
        signatures = json.loads(without_bom(body)).get("signatures") or ()
    except (ValueError, AttributeError, RecursionError):
        return headers
    for signature in signatures if isinstance(signatures, list) else ():
        protected = signature.get("protected") if isinstance(signature, dict) else None
        if not isinstance(protected, str):
            continue
        try:
            header = json.loads(base64.urlsafe_b64decode(protected + "=" * (-len(protected) % 4)))
        except (ValueError, RecursionError):
            continue
        if isinstance(header, dict):
            headers.append(header)
    return headers


async def _jwks_keys(http: httpx.AsyncClient, card_url: str, body: bytes) -> dict[str, Any]:
    """The keys of the JWKS the card's signature names (``jku``) that a signature uses."""
    headers = _signature_headers(body)
    jku = next((h["jku"] for h in headers if isinstance(h.get("jku"), str)), None)
    if jku is None:
        raise CardError(f"the agent card at {card_url} has no signature naming its keys (jku)")
    card_origin, key_origin = urlsplit(card_url), urlsplit(jku)
    # A key set named by the card itself proves nothing unless it comes from where the card
    # came from: the same scheme, host and port (and no redirect may take it elsewhere).
    if (card_origin.scheme, card_origin.netloc) != (key_origin.scheme, key_origin.netloc):
        raise CardError(
            f"the card's signing keys are at another origin ({jku}); pass signing_keys= instead"
        )
    keys = (await _read_jwks(http, jku)).get("keys")
    if not isinstance(keys, list):
        raise CardError(f"no key set (JWKS) at {jku}")
    if len(keys) > MAX_JWKS_KEYS:
        raise CardError(f"the key set at {jku} holds more than {MAX_JWKS_KEYS} keys")
    # Only the keys a signature names are parsed: another key of a type this client does not
    # know (or cannot use) does not spoil the set.
    named = {h["kid"] for h in headers if isinstance(h.get("kid"), str)}
    return {
        k["kid"]: k
        for k in keys
        if isinstance(k, dict) and isinstance(k.get("kid"), str) and k["kid"] in named
    }


async def _read_jwks(http: httpx.AsyncClient, jku: str) -> dict[str, Any]:
    """The JSON object at ``jku``, read within `MAX_JWKS_BYTES` as it is decoded."""
    try:
        async with http.stream(
            "GET", jku, headers={"Accept-Encoding": ACCEPT_ENCODING}, follow_redirects=False
        ) as reply:
            if reply.status_code != 200:
                raise CardError(f"no key set (JWKS) at {jku}: HTTP {reply.status_code}")
            body = await read_limited(
                reply,
                MAX_JWKS_BYTES,
                lambda: CardError(f"the key set at {jku} is larger than {MAX_JWKS_BYTES} bytes"),
            )
            document = json.loads(without_bom(body))
    except (httpx.HTTPError, InvalidReplyError, ValueError, RecursionError) as exc:
        raise CardError(f"no key set (JWKS) at {jku}: {_describe(exc)[:200]}") from None
    if not isinstance(document, dict):
        raise CardError(f"no key set (JWKS) at {jku}")
    return document


def _describe(exc: BaseException) -> str:
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
