"""The developer console's files, as the core serves them: off by default, public when on,
locked down by their headers, cached by ETag, and free of anything from another origin."""

from __future__ import annotations

import logging
import re
from importlib import resources

import anyio
import pytest

from a2a_core._protocol.grpc.binding import SERVICE
from a2a_core.auth import ApiKey
from a2a_core.http import Headers, HttpRequest, HttpResponse
from a2a_core.protocol import CONSOLE_CSP, DEFAULT_CONSOLE_PATH, ProtocolOptions
from a2a_core.server import A2AServer
from a2a_core.types import (
    AgentCapabilities,
    AgentCard,
    APIKeySecurityScheme,
    SecurityRequirement,
    SecurityScheme,
    StringList,
)
from helpers.protocol import CARD, make_protocol

FILES = {
    "": "text/html; charset=utf-8",
    "console.js": "text/javascript; charset=utf-8",
    "console.css": "text/css; charset=utf-8",
    "icon.svg": "image/svg+xml",
}


def get(path: str, method: str = "GET", **headers: str) -> HttpRequest:
    return HttpRequest(method=method, path=path, headers=Headers(headers.items()))


def serve(request: HttpRequest, server: A2AServer) -> HttpResponse:
    async def main() -> HttpResponse:
        response = await server.handle(request)
        assert isinstance(response, HttpResponse)
        return response

    return anyio.run(main)


def server(**options: object) -> A2AServer:
    return A2AServer(lambda ctx: "ok", card=CARD, base_url="http://agent.test", **options)  # type: ignore[arg-type]


def test_the_console_is_off_by_default() -> None:
    protocol = make_protocol()
    for name in FILES:
        response = protocol.receive_request(get(DEFAULT_CONSOLE_PATH + name))
        assert isinstance(response, HttpResponse)
        assert response.status == 404
    assert server().console_path is None


@pytest.mark.parametrize("name", list(FILES))
def test_each_file_is_served_with_its_type_and_the_lockdown_headers(name: str) -> None:
    response = serve(get(DEFAULT_CONSOLE_PATH + name), server(console=True))
    assert response.status == 200
    assert response.header("content-type") == FILES[name]
    assert response.header("content-security-policy") == CONSOLE_CSP
    assert response.header("x-content-type-options") == "nosniff"
    assert response.header("referrer-policy") == "no-referrer"
    assert response.header("x-frame-options") == "DENY"
    assert response.header("cross-origin-opener-policy") == "same-origin"
    assert response.header("cache-control") == "no-cache"
    assert response.body
    etag = response.header("etag")
    assert etag and etag.startswith('"')
    again = serve(get(DEFAULT_CONSOLE_PATH + name, **{"if-none-match": etag}), server(console=True))
    assert (again.status, again.body, again.header("etag")) == (304, b"", etag)
    other = serve(
        get(DEFAULT_CONSOLE_PATH + name, **{"if-none-match": '"other"'}), server(console=True)
    )
    assert other.status == 200


def test_the_policy_allows_this_origin_only() -> None:
    directives = dict(d.strip().split(" ", 1) for d in CONSOLE_CSP.split(";"))
    assert directives["default-src"] == "'none'"
    for fetch in ("script-src", "style-src", "img-src", "connect-src"):
        assert directives[fetch] == "'self'"
    assert directives["frame-ancestors"] == "'none'"


def test_the_page_finds_the_card_relative_to_itself() -> None:
    page = serve(get("/a2a-console/"), server(console=True)).body.decode()
    assert '<meta name="a2a-card-url" content="../.well-known/agent-card.json">' in page
    nested = server(console="/tools/console/")
    page = serve(get("/tools/console/"), nested).body.decode()
    assert 'content="../../.well-known/agent-card.json"' in page
    moved = server(
        console=True, protocol=ProtocolOptions(card_path="/cards/agent.json", jsonrpc_path="/rpc")
    )
    page = serve(get("/a2a-console/"), moved).body.decode()
    assert 'content="../cards/agent.json"' in page


def test_head_other_methods_and_the_folder_without_its_slash() -> None:
    on = server(console=True)
    head = serve(get("/a2a-console/console.js", "HEAD"), on)
    assert head.status == 200
    for method in ("POST", "PUT", "DELETE"):
        refused = serve(get("/a2a-console/", method), on)
        assert refused.status == 405
        assert refused.header("allow") == "GET, HEAD"
    moved = serve(get("/a2a-console"), on)
    # Relative, so that a mount prefix or a proxy's path stays in the URL.
    assert (moved.status, moved.header("location")) == (308, "a2a-console/")
    assert serve(get("/a2a-console/other.js"), on).status == 404
    assert serve(get("/a2a-console/../console.js"), on).status == 404


@pytest.mark.parametrize(
    "path",
    [
        "a2a-console/",
        "/a2a-console",
        "/",
        "//",
        "/a/../b/",
        "/a/./",
        "/a//b/",
        "",
        "/a b/",
        '/"><script>/',
        "/a?b/",
        "/%2e%2e/",
        "/message:send/",
    ],
)
def test_a_path_that_cannot_hold_the_console_is_refused(path: str) -> None:
    with pytest.raises(ValueError, match="console path"):
        server(console=path)


@pytest.mark.parametrize("console", [False, None])
def test_false_and_none_leave_it_off(console: object) -> None:
    assert server(console=console).console_path is None


@pytest.mark.parametrize("console", [1, 0, b"/a2a-console/", ["/a/"]])
def test_a_console_that_is_neither_a_flag_nor_a_path_is_refused(console: object) -> None:
    with pytest.raises(TypeError, match="console must be True, False or a folder path"):
        server(console=console)


def test_the_console_needs_the_public_card_and_a_path_of_its_own() -> None:
    with pytest.raises(ValueError, match="reads the public card"):
        server(console=True, protocol=ProtocolOptions(card_path=None))
    with pytest.raises(ValueError, match="already served"):
        server(console="/rpc/", protocol=ProtocolOptions(jsonrpc_path="/rpc/"))
    # An HTTP+JSON route (GET /tasks is ListTasks) would be hidden, and made public.
    with pytest.raises(ValueError, match=r"already served by the protocol \(/tasks"):
        server(console="/tasks/")
    # So would gRPC's methods, which share the mount.
    with pytest.raises(ValueError, match="already served"):
        server(console=f"/{SERVICE}/")
    # Elsewhere, the same names are free.
    assert server(console="/tasks/", protocol=ProtocolOptions(rest_path="/rest")).console_path


SECURED = AgentCard(
    name="Secured",
    description="Needs a key.",
    supported_interfaces=[],
    version="1.0.0",
    capabilities=AgentCapabilities(),
    default_input_modes=["text/plain"],
    default_output_modes=["text/plain"],
    skills=[],
    security_schemes={
        "key": SecurityScheme(
            api_key_security_scheme=APIKeySecurityScheme(location="header", name="X-API-Key")
        )
    },
    security_requirements=[SecurityRequirement(schemes={"key": StringList()})],
)


def test_the_console_needs_no_credentials_where_every_call_does() -> None:
    secured = A2AServer(
        lambda ctx: "ok",
        card=SECURED,
        base_url="http://agent.test",
        authenticators={"key": ApiKey({"secret": "alice"})},
        console=True,
    )
    for name in FILES:
        assert serve(get(DEFAULT_CONSOLE_PATH + name), secured).status == 200
    assert serve(get("/tasks"), secured).status == 401
    assert serve(get("/a2a-console/missing.js"), secured).status == 401


def test_serve_console_turns_it_on_for_a_server_built_elsewhere() -> None:
    built = server()
    assert serve(get("/a2a-console/"), built).status == 404
    built.serve_console("/console/")
    assert built.console_path == "/console/"
    assert serve(get("/console/"), built).status == 200
    built.serve_console()  # moved: the old path is no longer served
    assert serve(get("/console/"), built).status == 404
    assert serve(get("/a2a-console/"), built).status == 200


@pytest.mark.parametrize(
    ("host", "warned"),
    [
        ("127.0.0.1", False),
        ("localhost", False),
        ("::1", False),
        ("[::1]", False),
        ("0.0.0.0", True),
        ("::", True),
        ("192.168.1.20", True),
        ("agent.example", True),
    ],
)
def test_a_console_listening_beyond_loopback_is_warned_about(
    host: str, warned: bool, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, "a2a_core.server"):
        assert server(console=True).warn_if_console_exposed(host) is warned
        assert server().warn_if_console_exposed(host) is False
    assert any("developer console" in r.getMessage() for r in caplog.records) is warned


# The files themselves: nothing from another origin, nothing the policy would block.

STATIC = resources.files("a2a_core") / "_console"
EXTERNAL = re.compile(r"""(?:https?:)?//[a-z0-9.-]+\.[a-z]{2,}""", re.IGNORECASE)


@pytest.mark.parametrize("name", ["index.html", "console.js", "console.css", "icon.svg"])
def test_no_file_names_another_origin(name: str) -> None:
    text = (STATIC / name).read_text()
    # The SVG's XML namespace is a name, not a resource: the only URL allowed.
    found = [u for u in EXTERNAL.findall(text) if u != "http://www.w3.org"]
    assert found == []
    assert "@import" not in text


def test_the_page_has_no_inline_code_the_policy_would_block() -> None:
    page = (STATIC / "index.html").read_text()
    assert re.findall(r"<script(?![^>]*\bsrc=)", page) == []
    assert "<style" not in page
    assert re.findall(r"\sstyle=", page) == []
    assert re.findall(r"\son[a-z]+=", page) == []
    script = (STATIC / "console.js").read_text()
    # Text from the agent or its card is only ever shown as text.
    assert "innerHTML" not in script and "insertAdjacentHTML" not in script
    assert "eval(" not in script and "new Function" not in script
    assert "localStorage" not in script and "sessionStorage" not in script  # the token


@pytest.mark.parametrize(
    "testid",
    [
        "card-name",
        "chat-input",
        "chat-send",
        "chat-transcript",
        "task-list",
        "frames-log",
        "cancel-task",
    ],
)
def test_the_test_hooks_are_in_the_page(testid: str) -> None:
    assert f'data-testid="{testid}"' in (STATIC / "index.html").read_text()


def test_every_form_field_has_a_label() -> None:
    page = (STATIC / "index.html").read_text()
    fields = re.findall(r"<(?:input|select|textarea)\b[^>]*\bid=\"([^\"]+)\"", page)
    assert fields
    for field in fields:
        labelled = f'for="{field}"' in page or re.search(
            rf"<label[^>]*>[^<]*<input[^>]*id=\"{field}\"", page
        )
        assert labelled, field
