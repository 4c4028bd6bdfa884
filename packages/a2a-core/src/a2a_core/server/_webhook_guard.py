"""The webhook SSRF guard (L2): which webhook URLs and addresses the server may POST to.

Pure and cheap: it parses and checks, and does no I/O (no DNS lookup, no connection).
:mod:`._webhook_poster` does the resolving, and asks this module about what it found.

- :func:`check_webhook_url` is the static part, what the URL itself shows: http(s) only,
  and no literal loopback, private, link-local, multicast, reserved or unspecified address
  (IPv4-mapped, NAT64 and 6to4 IPv6 forms are unwrapped first, inet_aton spellings such as
  ``0x7f.1`` read as the address they stand for), and no ``localhost``. The server runs it
  when a config is created (or a message brings a webhook), to answer InvalidParams at once.
- :func:`parse_webhook` is the same check, returning the parsed :class:`Webhook` that
  delivery sends to, and :func:`check_resolved` the check of the addresses a hostname
  resolved to at a delivery (every one must be allowed: DNS rebinding).
- :class:`WebhookPolicy` is the guard's one setting, read by the server (when a config is
  created) and by the sender (at every delivery): its exceptions (``allow_hosts``,
  ``allow_private``), parsed once into an :class:`AllowList`.

A refusal is a :class:`WebhookUrlRefusedError`, whose message names the reason and the
host, never the path or query (which may hold a secret).
"""

from __future__ import annotations

import ipaddress
import re
import socket
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final, TypeAlias

if TYPE_CHECKING:  # httpx is imported when a webhook URL is first parsed
    import httpx

__all__ = [
    "AllowList",
    "Webhook",
    "WebhookPolicy",
    "WebhookUrlRefusedError",
    "check_resolved",
    "check_webhook_url",
    "parse_webhook",
]

_IPAddress: TypeAlias = ipaddress.IPv4Address | ipaddress.IPv6Address
_IPNetwork: TypeAlias = ipaddress.IPv4Network | ipaddress.IPv6Network

#: What may be an inet_aton() spelling of an IPv4 address ("0x7f.1", "2130706433"), which
#: the system resolver turns into that address without asking DNS.
_LEGACY_IPV4: Final = re.compile(r"[0-9a-fA-FxX.]+")
#: A DNS name as httpx hands it over (IDNA already applied); anything else cannot resolve.
_HOSTNAME: Final = re.compile(r"[a-z0-9_-]+(\.[a-z0-9_-]+)*")
# Ranges that are private networks proper (and so may be allowed with ``allow_private``),
# as opposed to the other non-global ranges (documentation, benchmarking, reserved...).
_PRIVATE_NETWORKS: Final[tuple[_IPNetwork, ...]] = tuple(
    ipaddress.ip_network(n)
    for n in ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10", "fc00::/7")
)
_NAT64: Final = ipaddress.IPv6Network("64:ff9b::/96")


class WebhookUrlRefusedError(ValueError):
    """A webhook URL the SSRF guard refuses.

    The message names the reason and the host, never the path or query (which may hold a
    secret), so it is safe to log and to return to the client as InvalidParams.
    """


@dataclass(frozen=True, slots=True)
class AllowList:
    """Parsed ``allow_hosts`` and ``allow_private``."""

    hostnames: frozenset[str]
    networks: tuple[_IPNetwork, ...]
    allow_private: bool

    @classmethod
    def parse(cls, allow_hosts: Collection[str], allow_private: bool) -> AllowList:
        if isinstance(allow_hosts, str):
            raise TypeError("allow_hosts is a collection of hosts, not one string")
        names: set[str] = set()
        networks: list[_IPNetwork] = []
        for entry in allow_hosts:
            text = entry.strip().lower()
            try:
                networks.append(ipaddress.ip_network(text.strip("[]"), strict=False))
            except ValueError:
                if not text:
                    raise ValueError("empty entry in allow_hosts") from None
                names.add(text.rstrip("."))
        return cls(frozenset(names), tuple(networks), allow_private)

    def refusal(self, address: _IPAddress) -> str | None:
        """Why ``address`` is refused (``"loopback"``...), or ``None`` if it is allowed."""
        inner = _unwrap(address)
        if any(a in net for net in self.networks for a in (address, inner)):
            return None
        category = _category(inner)
        if category == "private" and self.allow_private:
            return None
        return category


@dataclass(frozen=True, slots=True)
class WebhookPolicy:
    """Which webhook targets the SSRF guard lets through, beyond the public internet.

    One value for both checks of a webhook: the server's when a config is created
    (``PushOptions`` builds it) and the poster's at every delivery (the server gives its
    own to a `WebhookPushSender` it runs or is given, and a backend to the `WebhookPoster`
    of its queue), so that no URL is accepted by one
    and refused by the other. Checked when built: a mistake raises `ValueError`.
    """

    allow_hosts: tuple[str, ...] = ()
    """Host names (matched exactly, case-insensitively, a final dot ignored) and IP
    networks (``"127.0.0.1/32"``, ``"10.1.0.0/16"``, ``"::1"``) allowed anyway."""
    allow_private: bool = False
    """Allow the private networks (10/8, 172.16/12, 192.168/16, 100.64/10, fc00::/7), never
    loopback or link-local (cloud metadata lives at 169.254.169.254)."""
    allow_list: AllowList = field(init=False, repr=False, compare=False)
    """The parsed exceptions."""

    def __post_init__(self) -> None:
        hosts: object = self.allow_hosts  # checked: callers may pass anything
        if (
            isinstance(hosts, str)  # one host where a list is meant: refused, not split
            or not isinstance(hosts, Collection)
            or not all(isinstance(h, str) and h.strip() for h in hosts)
        ):
            raise ValueError(f"allow_hosts must be a sequence of host names, not {hosts!r}")
        if not isinstance(self.allow_private, bool):
            raise ValueError(f"allow_private must be True or False, not {self.allow_private!r}")
        object.__setattr__(self, "allow_hosts", tuple(hosts))
        object.__setattr__(self, "allow_list", AllowList.parse(hosts, self.allow_private))

    def same_as(self, other: WebhookPolicy) -> bool:
        """Whether ``other`` lets the same targets through (host names compared as the guard
        does, networks as networks, in any order)."""
        mine, theirs = self.allow_list, other.allow_list
        return (
            mine.hostnames == theirs.hostnames
            and frozenset(mine.networks) == frozenset(theirs.networks)
            and mine.allow_private == theirs.allow_private
        )

    def check_url(self, url: str) -> None:
        """Raise `WebhookUrlRefusedError` unless ``url`` passes the static checks
        (`check_webhook_url`) under this policy."""
        parse_webhook(url, self.allow_list)


def _unwrap(address: _IPAddress) -> _IPAddress:
    """The IPv4 address an IPv6 address stands for, if it embeds one that gets routed."""
    if isinstance(address, ipaddress.IPv4Address):
        return address
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address in _NAT64:
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    if address.sixtofour is not None:
        return address.sixtofour
    return address


def _category(address: _IPAddress) -> str | None:
    """Which refused kind of address this is, or ``None`` for a public one."""
    # Order matters: 127.0.0.1 is also "private" to the ipaddress module, and only the first
    # matching name is reported.
    if address.is_unspecified:
        return "unspecified"
    if address.is_loopback:
        return "loopback"
    if address.is_link_local:
        return "link-local"
    if address.is_multicast:
        return "multicast"
    if any(address in net for net in _PRIVATE_NETWORKS) or (
        isinstance(address, ipaddress.IPv6Address) and address.is_site_local
    ):
        return "private"
    if address.is_reserved or address.is_private or not address.is_global:
        return "reserved"
    return None


def _ip_literal(host: str) -> _IPAddress | None:
    """The address a host spells directly, including inet_aton forms such as ``0x7f.1``."""
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        pass
    if _LEGACY_IPV4.fullmatch(host):
        try:
            return ipaddress.IPv4Address(socket.inet_aton(host))
        except OSError:
            return None
    return None


@dataclass(frozen=True, slots=True)
class Webhook:
    """A webhook URL that passed the static checks."""

    url: httpx.URL
    host: str
    """The host as sent to the resolver: IDNA-encoded, lowercase, no brackets."""
    address: _IPAddress | None
    """The address, when the host is an IP literal."""
    trusted: bool
    """The host is named in ``allow_hosts``: no address checks at all."""

    @property
    def origin(self) -> str:
        """``scheme://host[:port]``: what logs show (the path and query may be secrets)."""
        return f"{self.url.scheme}://{self.url.netloc.decode('ascii', 'replace')}"


def parse_webhook(url: str, allow: AllowList) -> Webhook:
    """The static checks of ``url`` (see :func:`check_webhook_url`) under ``allow``: the
    parsed webhook, or :class:`WebhookUrlRefusedError`."""
    import httpx

    # httpx parses the URL here exactly as it will when sending, so the guard and the client
    # cannot disagree about which host a tricky URL names.
    try:
        parsed = httpx.URL(url)
    except (httpx.InvalidURL, TypeError):
        raise WebhookUrlRefusedError("the webhook URL is not a valid URL") from None
    if parsed.scheme not in ("http", "https"):
        raise WebhookUrlRefusedError("the webhook URL must use http or https")
    host = parsed.raw_host.decode("ascii", "replace").lower()
    if not host:
        raise WebhookUrlRefusedError("the webhook URL has no host")
    if parsed.port is not None and not 0 < parsed.port < 65536:
        raise WebhookUrlRefusedError("the webhook URL is not a valid URL (port)")
    name = host.rstrip(".")
    if name in allow.hostnames:
        return Webhook(parsed, host, None, trusted=True)
    address = _ip_literal(name)
    if address is not None:
        reason = allow.refusal(address)
        if reason is not None:
            raise WebhookUrlRefusedError(f"the webhook host {name} is a {reason} address")
        return Webhook(parsed, host, address, trusted=False)
    if not _HOSTNAME.fullmatch(name):
        raise WebhookUrlRefusedError("the webhook URL is not a valid URL (host)")
    if name == "localhost" or name.endswith(".localhost"):
        raise WebhookUrlRefusedError(f"the webhook host {name} is a loopback name")
    return Webhook(parsed, host, None, trusted=False)


def check_webhook_url(
    url: str, *, allow_hosts: Collection[str] = (), allow_private: bool = False
) -> None:
    """Raise :class:`WebhookUrlRefusedError` unless ``url`` passes the static SSRF checks.

    Static means what the URL itself shows: the scheme (http or https only), a host that is
    an IP literal (refused if loopback, private, link-local, multicast, reserved or
    unspecified, IPv4-mapped IPv6 included), and the ``localhost`` names. A hostname passes
    here and is checked again at every delivery, after resolution (:func:`check_resolved`),
    by :class:`~a2a_core.server.WebhookPoster` (it may point somewhere
    else by then: DNS rebinding).

    ``allow_hosts`` lists hostnames (matched exactly, case-insensitively; no address checks
    for them) and IP networks (``"127.0.0.1/32"``, ``"10.1.0.0/16"``, ``"::1"``) that are
    allowed anyway. ``allow_private`` allows the private networks (10/8, 172.16/12,
    192.168/16, 100.64/10, fc00::/7) but not loopback, link-local (cloud metadata lives at
    169.254.169.254) or the others.
    """
    parse_webhook(url, AllowList.parse(allow_hosts, allow_private))


def check_resolved(webhook: Webhook, found: Iterable[str], allow: AllowList) -> list[str]:
    """The distinct addresses among ``found`` (what ``webhook.host`` resolved to), in order.

    Raises :class:`WebhookUrlRefusedError` if any of them is refused under ``allow``, or is
    not an IP address at all: one bad answer refuses the host, whichever address a client
    would have picked. Empty when nothing was found (the caller decides what that means).
    """
    addresses: list[str] = []
    for text in found:
        try:
            address = ipaddress.ip_address(text)
        except ValueError:
            raise WebhookUrlRefusedError(
                f"the webhook host {webhook.host} resolved to something not an address"
            ) from None
        reason = allow.refusal(address)
        if reason is not None:
            raise WebhookUrlRefusedError(
                f"the webhook host {webhook.host} resolves to a {reason} address"
            )
        if text not in addresses:
            addresses.append(text)
    return addresses
