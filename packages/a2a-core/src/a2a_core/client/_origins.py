"""Where the caller's credentials may go, and redirects that never carry them elsewhere (L2).

A card is written by the agent, and a redirect by whoever answers: neither may send the
caller's secrets where the caller did not mean them to go. The rule (docs/client.md):

- a credential goes over https, or over plain http to a loopback host only (the network
  never sees it), unless the caller allowed the origin (``credential_origins``);
- the caller's own credentials (API key, bearer token, user and password, and the OAuth
  tokens fetched for it) go to an interface on the host the caller connected to (the
  card's, or the endpoint's it gave; any port, as cookies are scoped: gRPC beside HTTP),
  or at an origin it allowed; an OAuth client secret goes to a token URL the caller gave
  (``token_url=``), or to one the card names only on that host or at an allowed origin
  (else a hostile card could collect it);
- a redirect to another origin loses every credential header.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Collection, Iterable
from dataclasses import dataclass

import httpx

from a2a_core.client._errors import CredentialRefusedError

__all__ = ["CredentialPolicy", "check_token_url", "grpc_url", "origin_of", "send_guarded"]

_DEFAULT_PORTS = {"http": 80, "https": 443}


def origin_of(url: str | httpx.URL) -> str:
    """``scheme://host:port`` of ``url``, the port spelled out (``https://a.example:443``)."""
    parsed = url if isinstance(url, httpx.URL) else httpx.URL(url)
    host = f"[{parsed.host}]" if ":" in parsed.host else parsed.host
    port = parsed.port or _DEFAULT_PORTS.get(parsed.scheme)
    return f"{parsed.scheme}://{host}:{port}"


def grpc_url(target: str, *, secure: bool) -> str:
    """A gRPC target (``host:port``) as a URL whose scheme says whether it is TLS."""
    if "://" in target:
        return target
    return f"{'https' if secure else 'http'}://{target}"


def is_loopback(host: str) -> bool:
    """Whether ``host`` names this machine (``localhost``, 127.0.0.0/8, ``::1``)."""
    if host.lower().rstrip(".") == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:  # a host name other than localhost: resolved elsewhere
        return False


@dataclass(frozen=True, slots=True)
class CredentialPolicy:
    """The origins a client's credentials may go to (see the module's rule)."""

    home: str
    """The origin the caller connected to (``origin_of`` form)."""
    allowed: frozenset[str] = frozenset()
    """Origins the caller allowed besides, also over plain http."""

    @classmethod
    def of(cls, home_url: str, allowed: Iterable[str] = ()) -> CredentialPolicy:
        try:
            home = origin_of(home_url)
        except httpx.InvalidURL:  # a gRPC target no URL spells (unix:...): no home
            home = ""
        return cls(home, frozenset(origin_of(url) for url in allowed))

    def check_interface(self, url: str) -> None:
        """Refuse (`CredentialRefusedError`) to send the caller's credentials to ``url``."""
        try:
            origin = origin_of(url)
        except httpx.InvalidURL:
            raise CredentialRefusedError(
                f"refused to send the caller's credentials to {url!r}: not an http(s) URL"
            ) from None
        if origin in self.allowed:
            return
        _check_transport(url, origin, "the caller's credentials")
        if not same_host(origin, self.home):
            raise CredentialRefusedError(
                f"refused to send the caller's credentials to {origin}: the card names an "
                f"interface on another host than {self.home}, where the client connected; "
                f"if that agent may have them, pass credential_origins=['{origin}']"
            )


def same_host(origin: str, home: str) -> bool:
    """Whether two origins (`origin_of` form) are on one host, whatever their ports."""
    return bool(home) and origin.rpartition(":")[0] == home.rpartition(":")[0]


def check_token_url(
    url: str, allowed: Collection[str], *, named_by_card: bool = False, home: str = ""
) -> None:
    """Refuse to send an OAuth client secret to ``url``: over plain http off loopback, and,
    when the card named it (``named_by_card``), anywhere but the ``home`` host or an
    ``allowed`` origin (`origin_of` forms)."""
    origin = origin_of(url)
    if origin in allowed:
        return
    _check_transport(url, origin, "the OAuth client secret")
    if named_by_card and not same_host(origin, home):
        raise CredentialRefusedError(
            f"refused to send the OAuth client secret to {origin}, the token URL the card "
            f"names: a card may name any URL. If that is your authorization server, pass "
            f"token_url='{url}' or credential_origins=['{origin}']"
        )


def _check_transport(url: str, origin: str, what: str) -> None:
    parsed = httpx.URL(url)
    # Plain http to this machine never crosses the network (a local agent, a test).
    if parsed.scheme == "https" or is_loopback(parsed.host):
        return
    raise CredentialRefusedError(
        f"refused to send {what} to {origin}: over plain http to a host other than "
        f"loopback it would cross the network in clear; use https, or pass "
        f"credential_origins=['{origin}'] to allow it"
    )


async def send_guarded(
    http: httpx.AsyncClient, request: httpx.Request, secret_headers: Collection[str]
) -> httpx.Response:
    """The response to ``request`` (its body not read), redirects followed as ``http``
    follows them, but ``secret_headers`` dropped on the way to another origin.

    httpx drops only ``Authorization`` (and ``Cookie``) there: an API key in its own header
    would follow a 307 wherever it points.
    """
    response = await http.send(request, stream=True, follow_redirects=False)
    followed = 0
    while http.follow_redirects and response.next_request is not None:
        following = response.next_request
        await response.aclose()
        followed += 1
        if followed > http.max_redirects:
            raise httpx.TooManyRedirects("Exceeded maximum allowed redirects.", request=following)
        if origin_of(following.url) != origin_of(request.url):
            for name in secret_headers:
                following.headers.pop(name, None)
        request = following
        response = await http.send(request, stream=True, follow_redirects=False)
    return response
