"""Reading an agent card and choosing where to call (L1, pure).

`parse_card` takes the bytes of a card in either version: a v1.0 card (it has
``supportedInterfaces``) is decoded as it is; a v0.3 card (``url``, ``preferredTransport``,
``additionalInterfaces``) is converted to the v1.0 model, its interfaces marked with the
version they speak. A "hybrid" card that carries both (a v1.0 card with the v0.3 fields
merged in for older clients) is read as v1.0.

`choose_interface` picks one of the card's interfaces as an `Endpoint`: the first, in the
card's order, whose binding and major.minor version this client speaks, or the first that
matches the caller's preferences when given.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, Literal
from urllib.parse import urljoin

import msgspec

from a2a_core._install import install_hint
from a2a_core._protocol import codec
from a2a_core._protocol.client.errors import InvalidReplyError, NoUsableInterfaceError
from a2a_core._protocol.operations import Binding, Dialect
from a2a_core._protocol.versions import normalize_version
from a2a_core.compat.v0_3 import convert as v03c
from a2a_core.compat.v0_3 import types as v03
from a2a_core.types import AgentCard, AgentInterface

__all__ = [
    "BINDING_NAMES",
    "HTTP_BINDINGS",
    "CardBinding",
    "Endpoint",
    "choose_interface",
    "parse_card",
]

#: A binding as agent cards name it.
CardBinding = Literal["JSONRPC", "HTTP+JSON", "GRPC"]
#: The card's binding names the client protocol knows, and what each is in the core.
BINDING_NAMES: Final[dict[str, Binding]] = {
    "JSONRPC": "jsonrpc",
    "HTTP+JSON": "rest",
    "GRPC": "grpc",
}
_CARD_NAMES: Final[dict[Binding, CardBinding]] = {
    "jsonrpc": "JSONRPC",
    "rest": "HTTP+JSON",
    "grpc": "GRPC",
}
#: The bindings spoken over HTTP (gRPC needs the ``a2aserve-grpc`` transport).
HTTP_BINDINGS: Final = ("JSONRPC", "HTTP+JSON")
_DIALECTS: Final[tuple[Dialect, ...]] = ("1.0", "0.3")
_ANY_OBJECT: Final = msgspec.json.Decoder(dict[str, object])


@dataclass(frozen=True, slots=True)
class Endpoint:
    """One interface of an agent, as the client calls it."""

    url: str
    """The interface's URL, absolute (as the card gives it, resolved against the card's);
    for gRPC the ``host:port`` to dial."""
    binding: Binding
    """``"jsonrpc"``, ``"rest"`` or ``"grpc"`` (the card's ``JSONRPC``, ``HTTP+JSON``,
    ``GRPC``)."""
    dialect: Dialect
    """The wire dialect spoken there: ``"1.0"`` or ``"0.3"`` (its major.minor version)."""
    tenant: str = ""
    """The tenant the card says to copy into every request to this interface."""

    @property
    def card_binding(self) -> CardBinding:
        """The binding as cards name it."""
        return _CARD_NAMES[self.binding]


def parse_card(body: bytes) -> AgentCard:
    """The v1.0 model of the card in ``body`` (a v1.0, hybrid or v0.3 card).

    Raises `InvalidReplyError` when the body is not a JSON object, or is one that is neither
    kind of card; never anything else.
    """
    body = codec.without_bom(body)
    try:
        fields = _ANY_OBJECT.decode(body)
    except (msgspec.DecodeError, msgspec.ValidationError, UnicodeDecodeError):
        raise InvalidReplyError("the agent card is not a JSON object", body=body) from None
    except RecursionError:
        raise InvalidReplyError("the agent card is nested too deeply") from None
    try:
        if "supportedInterfaces" in fields or "supported_interfaces" in fields:
            return codec.decode(body, AgentCard)
        if "url" in fields:
            return v03c.card_to_v1(codec.decode(body, v03.AgentCard))
    except codec.DecodeError as exc:
        raise InvalidReplyError(f"the agent card is not valid: {exc.message}") from None
    except (ValueError, TypeError, OverflowError) as exc:  # a conversion refusing a value
        raise InvalidReplyError(f"the agent card is not valid: {exc}") from None
    raise InvalidReplyError(
        "the document is not an agent card: it has neither supportedInterfaces (v1.0) "
        "nor url (v0.3)"
    )


def _endpoint(interface: AgentInterface, base_url: str | None) -> Endpoint | None:
    binding = BINDING_NAMES.get(interface.protocol_binding.upper())
    version = normalize_version(interface.protocol_version)
    if binding is None or version not in _DIALECTS:
        return None
    if binding == "grpc":
        # gRPC's url is the host:port to dial, and only v1.0's service is spoken.
        if version != "1.0":
            return None
        return Endpoint(url=interface.url, binding=binding, dialect="1.0", tenant=interface.tenant)
    url = urljoin(base_url, interface.url) if base_url else interface.url
    dialect: Dialect = "1.0" if version == "1.0" else "0.3"
    return Endpoint(url=url, binding=binding, dialect=dialect, tenant=interface.tenant)


def choose_interface(
    card: AgentCard,
    *,
    bindings: Sequence[str] | None = None,
    versions: Sequence[str] | None = None,
    base_url: str | None = None,
    spoken: Sequence[str] = HTTP_BINDINGS,
) -> Endpoint:
    """The interface to call: the card's first one this client speaks.

    ``bindings`` (card names: ``JSONRPC``, ``HTTP+JSON``, ``GRPC``) and ``versions``
    (``1.0``, ``0.3``; any spelling `normalize_version` reads) narrow the choice and order
    it by preference, the card's order breaking ties. ``base_url`` resolves relative
    interface URLs (the card's own URL). ``spoken`` are the bindings the caller has a
    transport for (``GRPC`` too when ``a2aserve-grpc`` is installed). Raises
    `NoUsableInterfaceError`, naming what the card offers, when nothing fits.
    """
    wanted_bindings = [b.upper() for b in bindings] if bindings else None
    wanted_versions = [normalize_version(v) or v for v in versions] if versions else None
    candidates: list[tuple[int, int, int, Endpoint]] = []
    for position, interface in enumerate(card.supported_interfaces):
        endpoint = _endpoint(interface, base_url)
        if endpoint is None or endpoint.card_binding not in spoken:
            continue
        binding_rank = version_rank = 0
        if wanted_bindings is not None:
            if endpoint.card_binding not in wanted_bindings:
                continue
            binding_rank = wanted_bindings.index(endpoint.card_binding)
        if wanted_versions is not None:
            if endpoint.dialect not in wanted_versions:
                continue
            version_rank = wanted_versions.index(endpoint.dialect)
        candidates.append((binding_rank, version_rank, position, endpoint))
    if not candidates:
        offered = ", ".join(
            f"{i.protocol_binding} {i.protocol_version} at {i.url}"
            for i in card.supported_interfaces
        )
        wanted = []
        if wanted_bindings:
            wanted.append("binding " + " or ".join(wanted_bindings))
        if wanted_versions:
            wanted.append("version " + " or ".join(wanted_versions))
        asked = f" with {' and '.join(wanted)}" if wanted else ""
        speaks = " or ".join(spoken)
        hint = ""
        if "GRPC" not in spoken and any(
            i.protocol_binding.upper() == "GRPC" for i in card.supported_interfaces
        ):
            hint = f" (for GRPC, a2aserve-grpc: {install_hint('a2aserve-grpc')})"
        raise NoUsableInterfaceError(
            f"the agent card lists no interface{asked} that this client speaks "
            f"({speaks}, version 1.0 or 0.3); it lists: {offered or 'none'}{hint}"
        )
    return min(candidates, key=lambda item: item[:3])[3]
