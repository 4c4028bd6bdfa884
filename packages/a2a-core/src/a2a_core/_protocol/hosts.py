"""The Host names a server answers for (L1, pure): the guard against DNS rebinding.

A page on ``evil.example`` whose name is made to resolve to 127.0.0.1 makes the browser
send its requests to a server listening on loopback, with ``Host: evil.example``, and read
the answers as that page's own origin (the console's, ListTasks). A server that answers only
the names that reach it honestly cannot be read that way, as Django's ``ALLOWED_HOSTS`` and
Vite's ``server.allowedHosts`` do. ``ProtocolOptions(allowed_hosts=...)`` sets the names; the
whole-process runners (``a2a_starlette.run``, ``a2a_aiohttp.run``, ``a2aserve serve``) set
the loopback ones (`loopback_hosts`) for a server bound to loopback that has none.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from typing import Final
from urllib.parse import urlsplit

__all__ = ["HostAllowList", "REFUSED_HOST_TEXT", "loopback_hosts"]

#: The body of a refused request's answer (421 Misdirected Request).
REFUSED_HOST_TEXT: Final = (
    b"This server does not answer for the Host this request names. Ask its operator to "
    b"add the name to allowed_hosts (ProtocolOptions, --allowed-hosts).\n"
)

#: The names that reach a loopback listener honestly.
_LOOPBACK: Final = ("localhost", ".localhost", "127.0.0.1", "::1")


def loopback_hosts(bind_host: str, public_url: str | None = None) -> tuple[str, ...]:
    """The names a server bound to loopback ``bind_host`` answers for: loopback's, the
    bind host's own, and the host of ``public_url`` (what its card tells clients)."""
    names = [*_LOOPBACK, bind_host]
    if public_url:
        names.append(urlsplit(public_url).hostname or "")
    return tuple(name for name in names if name)


def _normalised(host: str) -> str:
    """``host`` without brackets, a trailing dot or case (``[::1]`` -> ``::1``)."""
    return host.strip().strip("[]").rstrip(".").lower()


def _hostname(header: str) -> str | None:
    """The name of a ``Host`` header (its port dropped); ``None`` when it is not one."""
    header = header.strip()
    if header.startswith("["):  # an IPv6 literal, maybe with a port
        end = header.find("]")
        if end < 0 or (header[end + 1 :] and not header[end + 1 :].startswith(":")):
            return None
        return _normalised(header[1:end])
    name, _, port = header.partition(":")
    if port and not port.isdigit():
        return None
    return _normalised(name) or None


class HostAllowList:
    """Host names, each exact or (``.example.com``) a domain and its subdomains; ``*``
    allows any Host."""

    __slots__ = ("_any", "_exact", "_suffixes", "names")

    def __init__(self, names: Iterable[str]) -> None:
        self.names = tuple(names)
        if not all(isinstance(name, str) and name.strip() for name in self.names):
            raise ValueError("allowed_hosts must be host names (e.g. 'agent.example.com')")
        cleaned = [_normalised(name) for name in self.names]
        self._any = "*" in cleaned
        self._suffixes = tuple(name for name in cleaned if name.startswith("."))
        self._exact = frozenset(name for name in cleaned if not name.startswith("."))
        self._exact |= {suffix[1:] for suffix in self._suffixes}
        for name in self._exact - {"*"}:
            _check_name(name)

    def admits(self, header: str | None) -> bool:
        """Whether a request with this ``Host`` header is answered. A request with none is:
        browsers always send one (HTTP/1.1 requires it), so it cannot be a rebinding page;
        a gRPC call, whose ``:authority`` is not among its metadata, has none."""
        if self._any or header is None:
            return True
        name = _hostname(header)
        if name is None:
            return False
        return name in self._exact or name.endswith(self._suffixes)


def _check_name(name: str) -> None:
    """Refuse what cannot be a Host name, so that a typo fails at start-up."""
    try:
        ipaddress.ip_address(name)
        return
    except ValueError:
        pass
    if not all(label and len(label) < 64 for label in name.split(".")) or any(
        c for c in name if not (c.isalnum() or c in "-.")
    ):
        raise ValueError(f"allowed_hosts: {name!r} is not a host name")
