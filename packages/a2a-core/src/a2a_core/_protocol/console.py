"""The developer console's files, served by the protocol itself (opt-in).

The console is a static page (HTML, one script, one style sheet, an icon) shipped in the
package under ``a2a_core/_console``. It talks to the agent only through the public
endpoints its card lists, so what it shows is what any client sees. Serving it from the
core means every adapter, and every transport built on `ServerProtocol`, serves it alike.

What bounds it: four files read once, when the console is turned on, and kept as bytes
(about 45 KB); a request is answered from them, with no file system access.

The page is locked down by its headers: a ``Content-Security-Policy`` that allows scripts,
styles, images and connections from the page's own origin only (no inline script, no
frames, no form posts), ``nosniff``, no referrer. Each file has a strong ``ETag`` and
``Cache-Control: no-cache``, so a browser revalidates and an upgraded server shows its new
page at once.
"""

from __future__ import annotations

import hashlib
import html
import re
from importlib import resources
from typing import Final

from a2a_core._protocol.agent_card import _if_none_match_hits
from a2a_core._protocol.http import HttpRequest, HttpResponse

__all__ = ["CONSOLE_CSP", "DEFAULT_CONSOLE_PATH", "ConsolePages", "check_console_path"]

#: Where the console is served by default, under the server's mount.
DEFAULT_CONSOLE_PATH: Final = "/a2a-console/"

#: Everything from the page's own origin, nothing from elsewhere, no inline code.
CONSOLE_CSP: Final = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)

#: The files, by name under the console path ("" is the page), with their media types.
_FILES: Final = {
    "": ("index.html", "text/html; charset=utf-8"),
    "console.js": ("console.js", "text/javascript; charset=utf-8"),
    "console.css": ("console.css", "text/css; charset=utf-8"),
    "icon.svg": ("icon.svg", "image/svg+xml"),
}

#: In the page, replaced by the card's URL relative to the page.
_CARD_URL_MARK: Final = b"{{card-url}}"

#: One segment of a console path: URL-safe characters only, so that the path goes into the
#: page and the ``Location`` header as it is.
_SEGMENT: Final = re.compile(r"[A-Za-z0-9._~-]+")

_SECURITY_HEADERS: Final = (
    ("content-security-policy", CONSOLE_CSP),
    ("x-content-type-options", "nosniff"),
    ("referrer-policy", "no-referrer"),
    ("x-frame-options", "DENY"),
    ("cross-origin-opener-policy", "same-origin"),
)


def check_console_path(path: str) -> str:
    """``path`` if it can hold the console: absolute, ending in ``/``, not the root, with no
    empty, ``.`` or ``..`` segment; else ValueError saying why."""
    if not isinstance(path, str) or not path.startswith("/") or not path.endswith("/"):
        raise ValueError(
            f"the console path must be a path that starts and ends with '/' "
            f"(like {DEFAULT_CONSOLE_PATH!r}), not {path!r}"
        )
    segments = path.strip("/").split("/")
    if path == "/" or not all(_SEGMENT.fullmatch(s) and s not in (".", "..") for s in segments):
        raise ValueError(
            f"the console path must name a folder below the mount, like {DEFAULT_CONSOLE_PATH!r}"
            f" (letters, digits and . _ ~ - in each segment), not {path!r}"
        )
    return path


class ConsolePages:
    """The console's responses for one console path and card path, built once."""

    def __init__(self, path: str, card_path: str) -> None:
        self.path = check_console_path(path)
        folder = resources.files("a2a_core") / "_console"
        # From the page's folder up to the mount, then down to the card: relative, so that
        # the page works under any mount prefix and behind any proxy.
        card_url = "../" * len(path.strip("/").split("/")) + card_path.lstrip("/")
        self._files: dict[str, tuple[bytes, str, str]] = {}
        for name, (file, media_type) in _FILES.items():
            body = (folder / file).read_bytes()
            if file == "index.html":
                body = body.replace(_CARD_URL_MARK, html.escape(card_url).encode())
            etag = f'"{hashlib.sha256(body).hexdigest()[:32]}"'
            self._files[path + name] = (body, media_type, etag)
        #: The paths answered here: the files, and the folder without its slash (redirected).
        self.paths: frozenset[str] = frozenset((*self._files, path.rstrip("/")))

    def respond(self, request: HttpRequest) -> HttpResponse:
        """The file at ``request.path`` (one of `paths`): 200 or 304 to GET and HEAD, a
        redirect from the folder without its slash, 405 to any other method."""
        path = request.path or "/"
        if request.method not in ("GET", "HEAD"):
            return HttpResponse(
                405,
                (("allow", "GET, HEAD"), ("content-type", "text/plain; charset=utf-8")),
                b"Method not allowed: the console is served to GET and HEAD\n",
            )
        found = self._files.get(path)
        if found is None:
            # The folder itself without its slash: relative URLs in the page need the slash.
            # A relative Location keeps any mount prefix and proxy path the client used.
            last = path.rsplit("/", 1)[-1]
            return HttpResponse(308, (("location", f"{last}/"), ("content-length", "0")))
        body, media_type, etag = found
        validators = (("etag", etag), ("cache-control", "no-cache"))
        if _if_none_match_hits(request.headers.get_all("if-none-match"), etag):
            return HttpResponse(304, validators)
        return HttpResponse(
            200, (("content-type", media_type), *validators, *_SECURITY_HEADERS), body
        )
