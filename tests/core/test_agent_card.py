"""The public agent card: its content per base URL, its bytes, and its HTTP exchange.

Golden tables drive `AgentCardPublisher.respond` with `HttpRequest` values for every caching
case (RFC 9110 §13), and check the card's JSON against literal expectations and against the
strict v1.0 JSON Schema. Hypothesis checks that no method, path or header value makes it
raise or answer anything but 200, 304 or 405.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from a2a_core import codec
from a2a_core import types as t
from a2a_core.agent_card import (
    DEFAULT_CARD_PATH,
    AgentCardPublisher,
    CardOptions,
    ServedInterface,
    build_card,
    encode_card,
)
from a2a_core.errors import LocalProtocolError, MissingBaseUrlError
from a2a_core.http import Headers, HttpRequest, HttpResponse
from helpers.schema_v1 import validator_for

# 03:04:05.678 UTC: the fraction must not leak into Last-Modified or its comparisons.
LAST_MODIFIED = dt.datetime(2025, 1, 2, 3, 4, 5, 678_000, tzinfo=dt.UTC)
LAST_MODIFIED_TEXT = "Thu, 02 Jan 2025 03:04:05 GMT"
BASE = "https://agent.example.com/a2a"
EXT_TEMPLATE = t.AgentExtension(uri="urn:ext:template-only", description="kept")
EXT_OLD = t.AgentExtension(uri="urn:ext:shared", description="old")
EXT_NEW = t.AgentExtension(uri="urn:ext:shared", description="new", required=True)
EXT_DECLARED = t.AgentExtension(uri="urn:ext:declared", params={"k": 1})
GRPC = t.AgentInterface(url="grpc.example.com:443", protocol_binding="GRPC", protocol_version="1.0")

TEMPLATE = t.AgentCard(
    name="Echo",
    description="Repeats what it hears.",
    supported_interfaces=[],
    version="2.1.0",
    capabilities=t.AgentCapabilities(
        streaming=True, extensions=[EXT_OLD, EXT_TEMPLATE], extended_agent_card=True
    ),
    security_schemes={
        "key": t.SecurityScheme(
            api_key_security_scheme=t.APIKeySecurityScheme(location="header", name="X-Key")
        )
    },
    security_requirements=[t.SecurityRequirement(schemes={"key": t.StringList(list=[])})],
    default_input_modes=["text/plain"],
    default_output_modes=["text/plain"],
    skills=[t.AgentSkill(id="echo", name="Echo", description="Echoes", tags=["echo"])],
)
# Given out of order on purpose: the card must still list 1.0 before 0.3.
SERVED = (
    ServedInterface("JSONRPC", "0.3", ""),
    ServedInterface("JSONRPC", "1.0", ""),
    ServedInterface("HTTP+JSON", "1.0", "/rest"),
    ServedInterface("HTTP+JSON", "0.3", "/rest"),
)
EXPECTED_INTERFACES = [
    {"url": BASE, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
    {"url": BASE + "/rest", "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"},
    {"url": BASE, "protocolBinding": "JSONRPC", "protocolVersion": "0.3"},
    {"url": BASE + "/rest", "protocolBinding": "HTTP+JSON", "protocolVersion": "0.3"},
]
EXPECTED_CARD: dict[str, Any] = {
    "name": "Echo",
    "description": "Repeats what it hears.",
    "supportedInterfaces": EXPECTED_INTERFACES,
    "version": "2.1.0",
    "capabilities": {
        "streaming": True,
        "extensions": [
            {"uri": "urn:ext:shared", "description": "new", "required": True},
            {"uri": "urn:ext:template-only", "description": "kept"},
            {"uri": "urn:ext:declared", "params": {"k": 1}},
        ],
        "extendedAgentCard": True,
    },
    "securitySchemes": {"key": {"apiKeySecurityScheme": {"location": "header", "name": "X-Key"}}},
    "securityRequirements": [{"schemes": {"key": {}}}],
    "defaultInputModes": ["text/plain"],
    "defaultOutputModes": ["text/plain"],
    "skills": [{"id": "echo", "name": "Echo", "description": "Echoes", "tags": ["echo"]}],
}


def make_publisher(
    *,
    base_url: str | None = BASE,
    template: t.AgentCard = TEMPLATE,
    interfaces: tuple[ServedInterface, ...] = SERVED,
    extensions: tuple[t.AgentExtension, ...] = (EXT_NEW, EXT_DECLARED),
    **options: Any,
) -> AgentCardPublisher:
    return AgentCardPublisher(
        template,
        interfaces=interfaces,
        extensions=extensions,
        base_url=base_url,
        options=CardOptions(last_modified=options.pop("last_modified", LAST_MODIFIED), **options),
    )


PUBLISHER = make_publisher()
DOCUMENT = PUBLISHER.document_for()
ETAG = DOCUMENT.etag
OPAQUE = ETAG.strip('"')


def get(*headers: tuple[str, str], method: str = "GET", **kwargs: Any) -> HttpRequest:
    return HttpRequest(method, DEFAULT_CARD_PATH, headers=Headers(headers), **kwargs)


# --- 200 and the card ----------------------------------------------------------------------


def test_get_serves_the_card_with_caching_headers() -> None:
    response = PUBLISHER.respond(get())
    assert response.status == 200
    assert response.headers == (
        ("content-type", "application/json"),
        ("etag", ETAG),
        ("last-modified", LAST_MODIFIED_TEXT),
        ("cache-control", "public, max-age=300"),
    )
    assert json.loads(response.body) == EXPECTED_CARD
    assert response.body == DOCUMENT.body


def test_head_has_the_get_headers_and_length_but_no_body() -> None:
    get_response = PUBLISHER.respond(get())
    response = PUBLISHER.respond(get(method="HEAD"))
    assert response.status == 200
    assert response.body == b""
    assert response.headers == (*get_response.headers, ("content-length", str(len(DOCUMENT.body))))


def test_default_card_is_pure_v1_and_validates_against_the_strict_schema() -> None:
    body = json.loads(PUBLISHER.respond(get()).body)
    assert list(validator_for("AgentCard").iter_errors(body)) == []
    assert not {"url", "preferredTransport", "protocolVersion", "additionalInterfaces"} & set(body)


def test_card_value_matches_the_bytes_and_decodes_back() -> None:
    card = PUBLISHER.card_for()
    assert isinstance(card, t.AgentCard)
    assert codec.encode(card) == DOCUMENT.body
    assert codec.decode(DOCUMENT.body, t.AgentCard) == card


def test_configured_options_reach_the_headers() -> None:
    publisher = make_publisher(
        cache_control="public, max-age=60", content_type="application/a2a+json", vary="Host"
    )
    response = publisher.respond(get())
    assert response.header("cache-control") == "public, max-age=60"
    assert response.header("content-type") == "application/a2a+json"
    assert response.header("vary") == "Host"
    not_modified = publisher.respond(get(("if-none-match", ETAG)))
    assert not_modified.status == 304
    assert not_modified.header("vary") == "Host"


# --- conditional requests ------------------------------------------------------------------

CONDITIONAL_CASES = [
    pytest.param([("if-none-match", ETAG)], 304, id="exact-etag"),
    pytest.param([("if-none-match", f"W/{ETAG}")], 304, id="weak-etag-matches-weakly"),
    pytest.param([("if-none-match", "*")], 304, id="star"),
    pytest.param([("if-none-match", " * ")], 304, id="star-padded"),
    pytest.param([("if-none-match", f'"a", W/"b",{ETAG} , "c"')], 304, id="list-one-matches"),
    pytest.param([("if-none-match", '"a"'), ("if-none-match", ETAG)], 304, id="repeated-header"),
    pytest.param([("if-none-match", '"0000"')], 200, id="other-etag"),
    pytest.param([("if-none-match", OPAQUE)], 200, id="unquoted-etag"),
    pytest.param([("if-none-match", f'"{OPAQUE.upper()}"')], 200, id="case-differs"),
    pytest.param([("if-none-match", "")], 200, id="empty-etag"),
    pytest.param([("if-none-match", "garbage, *x")], 200, id="garbage-etag"),
    pytest.param([("if-modified-since", LAST_MODIFIED_TEXT)], 304, id="ims-equal"),
    pytest.param([("if-modified-since", "Thu, 02 Jan 2025 03:04:06 GMT")], 304, id="ims-later"),
    pytest.param([("if-modified-since", "Thu, 02 Jan 2025 04:04:05 +0100")], 304, id="ims-offset"),
    pytest.param([("if-modified-since", "Thu, 02 Jan 2025 03:04:04 GMT")], 200, id="ims-earlier"),
    pytest.param([("if-modified-since", "Thursday, 02-Jan-25 03:04:05 GMT")], 304, id="ims-rfc850"),
    pytest.param([("if-modified-since", "yesterday")], 200, id="ims-garbage"),
    pytest.param([("if-modified-since", "")], 200, id="ims-empty"),
    pytest.param([("if-modified-since", "Thu, 32 Jan 2025 03:04:05 GMT")], 200, id="ims-bad-day"),
    pytest.param(
        [("if-modified-since", LAST_MODIFIED_TEXT), ("if-modified-since", LAST_MODIFIED_TEXT)],
        200,
        id="ims-repeated-ignored",
    ),
    pytest.param(
        [("if-none-match", '"other"'), ("if-modified-since", "Fri, 01 Jan 2100 00:00:00 GMT")],
        200,
        id="both-inm-wins-200",
    ),
    pytest.param(
        [("if-none-match", ETAG), ("if-modified-since", "Mon, 01 Jan 1990 00:00:00 GMT")],
        304,
        id="both-inm-wins-304",
    ),
    pytest.param(
        [("if-none-match", "garbage"), ("if-modified-since", LAST_MODIFIED_TEXT)],
        200,
        id="present-garbage-inm-disables-ims",
    ),
]


@pytest.mark.parametrize("method", ["GET", "HEAD"])
@pytest.mark.parametrize(("headers", "status"), CONDITIONAL_CASES)
def test_conditional_request(method: str, headers: list[tuple[str, str]], status: int) -> None:
    response = PUBLISHER.respond(get(*headers, method=method))
    assert response.status == status
    if status == 304:
        assert response.body == b""
        assert response.headers == (
            ("etag", ETAG),
            ("last-modified", LAST_MODIFIED_TEXT),
            ("cache-control", "public, max-age=300"),
        )
    else:
        assert response.body == (DOCUMENT.body if method == "GET" else b"")
        assert response.header("etag") == ETAG


# --- 405 -----------------------------------------------------------------------------------


@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE", "PATCH", "OPTIONS", "get", ""])
def test_other_methods_get_405_with_allow(method: str) -> None:
    response = PUBLISHER.respond(get(("if-none-match", "*"), method=method))
    assert response.status == 405
    assert response.header("allow") == "GET, HEAD"
    assert response.header("content-type") == "application/json"
    assert json.loads(response.body)["error"]["code"] == 405
    assert response.header("etag") is None


def test_405_needs_no_base_url() -> None:
    publisher = make_publisher(base_url=None)
    assert publisher.respond(get(method="POST")).status == 405


# --- validators ----------------------------------------------------------------------------


def test_etag_is_the_quoted_sha256_of_the_body() -> None:
    digest = hashlib.sha256(DOCUMENT.body).hexdigest()
    assert DOCUMENT.etag == f'"{digest}"'
    assert re.fullmatch(r'"[0-9a-f]{64}"', ETAG)


def test_etag_is_stable_for_the_same_bytes() -> None:
    again = make_publisher()
    assert again.document_for().body == DOCUMENT.body
    assert again.respond(get()).header("etag") == ETAG
    # same base URL spelled with a trailing slash: same card, same tag
    assert PUBLISHER.document_for(BASE + "/").etag == ETAG


def test_etag_changes_with_the_base_url_and_the_variant() -> None:
    other = PUBLISHER.document_for("https://other.example.com")
    legacy = make_publisher(legacy_v0_3_fields=True).document_for()
    assert len({ETAG, other.etag, legacy.etag}) == 3
    assert other.body != DOCUMENT.body


@pytest.mark.parametrize(
    ("last_modified", "text"),
    [
        pytest.param(LAST_MODIFIED, LAST_MODIFIED_TEXT, id="utc"),
        pytest.param(dt.datetime(2025, 1, 2, 3, 4, 5, 999_999), LAST_MODIFIED_TEXT, id="naive"),
        pytest.param(
            dt.datetime(2025, 1, 2, 5, 4, 5, tzinfo=dt.timezone(dt.timedelta(hours=2))),
            LAST_MODIFIED_TEXT,
            id="offset",
        ),
    ],
)
def test_last_modified_is_an_imf_fixdate_in_gmt(last_modified: dt.datetime, text: str) -> None:
    publisher = make_publisher(last_modified=last_modified)
    assert publisher.respond(get()).header("last-modified") == text
    assert publisher.respond(get(("if-modified-since", text))).status == 304


# --- interfaces and base URLs --------------------------------------------------------------


@pytest.mark.parametrize(
    ("base_url", "path", "url"),
    [
        ("https://h", "", "https://h"),
        ("https://h/", "", "https://h"),
        ("https://h", "/", "https://h/"),
        ("https://h/", "/rest", "https://h/rest"),
        ("https://h/a2a", "", "https://h/a2a"),
        ("https://h/a2a/", "/", "https://h/a2a/"),
        ("https://h/a2a", "/rest", "https://h/a2a/rest"),
        ("https://h/a2a//", "/rest", "https://h/a2a/rest"),
        ("http://h:8080/x/y", "/v1/rest", "http://h:8080/x/y/v1/rest"),
    ],
)
def test_base_url_join(base_url: str, path: str, url: str) -> None:
    publisher = make_publisher(
        base_url=base_url, interfaces=(ServedInterface("JSONRPC", "1.0", path),)
    )
    assert [i.url for i in publisher.card_for().supported_interfaces] == [url]


def test_interfaces_newest_version_first_then_template_entries_without_duplicates() -> None:
    duplicate = t.AgentInterface(url=BASE, protocol_binding="JSONRPC", protocol_version="1.0")
    stale = t.AgentInterface(
        url="https://old.example.com", protocol_binding="JSONRPC", protocol_version="1.0"
    )
    template = _with_interfaces(GRPC, duplicate, stale, GRPC)
    card = make_publisher(template=template).card_for()
    assert [codec.encode(i) for i in card.supported_interfaces] == [
        *(json.dumps(i, separators=(",", ":")).encode() for i in EXPECTED_INTERFACES),
        codec.encode(GRPC),
        codec.encode(stale),
    ]


def test_order_is_stable_within_a_version_and_keeps_tenants() -> None:
    served = (
        ServedInterface("HTTP+JSON", "0.3", "/rest"),
        ServedInterface("HTTP+JSON", "1.0", "/rest", tenant="acme"),
        ServedInterface("JSONRPC", "0.3", ""),
        ServedInterface("JSONRPC", "1.0", ""),
        ServedInterface("JSONRPC", "10.0", "/next"),
    )
    card = make_publisher(interfaces=served).card_for()
    assert [
        (i.protocol_binding, i.protocol_version, i.tenant) for i in card.supported_interfaces
    ] == [
        ("JSONRPC", "10.0", ""),
        ("HTTP+JSON", "1.0", "acme"),
        ("JSONRPC", "1.0", ""),
        ("HTTP+JSON", "0.3", ""),
        ("JSONRPC", "0.3", ""),
    ]


def test_template_interfaces_alone_need_no_base_url() -> None:
    publisher = make_publisher(base_url=None, interfaces=(), template=_with_interfaces(GRPC))
    response = publisher.respond(get())
    assert response.status == 200
    assert json.loads(response.body)["supportedInterfaces"] == [
        {"url": "grpc.example.com:443", "protocolBinding": "GRPC", "protocolVersion": "1.0"}
    ]


def test_per_request_base_url_precedence() -> None:
    publisher = make_publisher()
    from_request = get(base_url="https://req.example.com/")
    assert _first_url(publisher.respond(from_request)) == "https://req.example.com"
    assert (
        _first_url(publisher.respond(from_request, "https://arg.example.com"))
        == "https://arg.example.com"
    )
    assert _first_url(publisher.respond(get())) == BASE
    assert _first_url(publisher.respond(get(base_url="/"))) == BASE  # slashes only: none


@pytest.mark.parametrize("base_url", [None, "", "/", "///"])
def test_missing_base_url_is_a_developer_error(base_url: str | None) -> None:
    publisher = make_publisher(base_url=None)
    with pytest.raises(MissingBaseUrlError, match="base_url"):
        publisher.respond(get(base_url=base_url))
    with pytest.raises(MissingBaseUrlError, match="base_url"):
        publisher.card_for(base_url)
    with pytest.raises(MissingBaseUrlError, match="base_url"):
        build_card(TEMPLATE, SERVED, base_url=base_url)
    assert publisher.cache_size == 0
    assert (
        _first_url(publisher.respond(get(base_url="https://late.example.com")))
        == "https://late.example.com"
    )


# --- extensions ----------------------------------------------------------------------------


def test_declared_extensions_replace_same_uri_in_place_and_append_the_rest() -> None:
    card = build_card(TEMPLATE, (), (EXT_DECLARED, EXT_NEW))
    assert card.capabilities.extensions == [EXT_NEW, EXT_TEMPLATE, EXT_DECLARED]
    assert card.capabilities.streaming is True
    assert card.capabilities.extended_agent_card is True


def test_no_declared_extensions_keeps_the_template_ones() -> None:
    card = build_card(TEMPLATE, (), ())
    assert card.capabilities.extensions == [EXT_OLD, EXT_TEMPLATE]
    assert TEMPLATE.capabilities.extensions == [EXT_OLD, EXT_TEMPLATE]  # template untouched


# --- legacy hybrid card --------------------------------------------------------------------


def test_legacy_card_adds_the_v0_3_fields() -> None:
    body = json.loads(make_publisher(legacy_v0_3_fields=True).respond(get()).body)
    assert body["url"] == BASE
    assert body["preferredTransport"] == "JSONRPC"
    assert body["protocolVersion"] == "0.3.0"
    assert body["additionalInterfaces"] == [
        {"url": BASE, "transport": "JSONRPC"},
        {"url": BASE + "/rest", "transport": "HTTP+JSON"},
    ]
    assert body["supportsAuthenticatedExtendedCard"] is True
    assert body["security"] == [{"key": []}]
    assert body["securitySchemes"] == {
        "key": {
            "type": "apiKey",
            "in": "header",
            "name": "X-Key",
            "apiKeySecurityScheme": {"location": "header", "name": "X-Key"},
        }
    }
    # Everything of the v1.0 card is still there, unchanged; skills gain their modes (the
    # card's defaults: what a skill without its own has anyway).
    changed = ("securitySchemes", "skills")
    assert {k: v for k, v in body.items() if k in EXPECTED_CARD and k not in changed} == {
        k: v for k, v in EXPECTED_CARD.items() if k not in changed
    }
    assert body["skills"] == [
        {**skill, "inputModes": ["text/plain"], "outputModes": ["text/plain"]}
        for skill in EXPECTED_CARD["skills"]
    ]


@pytest.mark.parametrize(
    ("scheme", "v0_3_members"),
    [
        pytest.param(
            t.SecurityScheme(
                http_auth_security_scheme=t.HTTPAuthSecurityScheme(
                    scheme="Bearer", bearer_format="JWT"
                )
            ),
            {"type": "http", "scheme": "Bearer", "bearerFormat": "JWT"},
            id="http",
        ),
        pytest.param(
            t.SecurityScheme(mtls_security_scheme=t.MutualTlsSecurityScheme(description="m")),
            {"type": "mutualTLS", "description": "m"},
            id="mtls",
        ),
        pytest.param(
            t.SecurityScheme(
                open_id_connect_security_scheme=t.OpenIdConnectSecurityScheme(
                    open_id_connect_url="https://id"
                )
            ),
            {"type": "openIdConnect", "openIdConnectUrl": "https://id"},
            id="oidc",
        ),
    ],
)
def test_legacy_card_adds_v0_3_members_to_every_scheme(
    scheme: t.SecurityScheme, v0_3_members: dict[str, Any]
) -> None:
    template = msgspec.structs.replace(
        TEMPLATE, security_schemes={"s": scheme}, security_requirements=[]
    )
    body = json.loads(
        make_publisher(template=template, legacy_v0_3_fields=True).respond(get()).body
    )
    v1_members = json.loads(codec.encode(scheme))
    assert body["securitySchemes"] == {"s": {**v0_3_members, **v1_members}}
    assert "security" not in body


def test_legacy_card_fails_the_strict_schema_so_it_must_stay_opt_in() -> None:
    body = json.loads(make_publisher(legacy_v0_3_fields=True).respond(get()).body)
    messages = " ".join(e.message for e in validator_for("AgentCard").iter_errors(body))
    assert "url" in messages
    assert "preferredTransport" in messages
    assert "protocolVersion" in messages


def test_encode_card_default_is_the_codec_encoding() -> None:
    card = PUBLISHER.card_for()
    assert encode_card(card) == codec.encode(card)
    assert encode_card(card, legacy_v0_3_fields=True) != codec.encode(card)


# --- path ----------------------------------------------------------------------------------


def test_matches_path() -> None:
    assert PUBLISHER.matches_path("/.well-known/agent-card.json")
    assert not PUBLISHER.matches_path("/.well-known/agent-card.json/")
    assert not PUBLISHER.matches_path("/.well-known/agent.json")
    assert not PUBLISHER.matches_path("/")
    custom = make_publisher(path="/card")
    assert custom.matches_path("/card")
    assert not custom.matches_path(DEFAULT_CARD_PATH)
    disabled = make_publisher(path=None)
    assert not disabled.matches_path(DEFAULT_CARD_PATH)
    assert disabled.options.path is None


# --- configuration errors ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        pytest.param({"path": "card.json"}, "card path", id="relative-card-path"),
        pytest.param(
            {"interfaces": (ServedInterface("JSONRPC", "1", ""),)}, "Major.Minor", id="version"
        ),
        pytest.param(
            {"interfaces": (ServedInterface("JSONRPC", "v1.0", ""),)}, "Major.Minor", id="version-v"
        ),
        pytest.param({"interfaces": (ServedInterface("", "1.0", ""),)}, "binding", id="binding"),
        pytest.param(
            {"interfaces": (ServedInterface("JSONRPC", "1.0", "rest"),)}, "path", id="iface-path"
        ),
        pytest.param(
            {"extensions": (EXT_NEW, EXT_OLD)}, "urn:ext:shared", id="duplicate-extension"
        ),
        pytest.param({"interfaces": ()}, "supportedInterfaces", id="no-interface-at-all"),
    ],
)
def test_configuration_errors_raise_at_construction(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(LocalProtocolError, match=message):
        make_publisher(**kwargs)


def test_invalid_template_is_refused_at_construction() -> None:
    bad = t.AgentCard(
        name="x",
        description="x",
        supported_interfaces=[
            t.AgentInterface(url="", protocol_binding="GRPC", protocol_version="1.0")
        ],
        version="1",
        capabilities=t.AgentCapabilities(),
        default_input_modes=[],
        default_output_modes=[],
        skills=[],
    )
    with pytest.raises(LocalProtocolError, match="not valid"):
        make_publisher(template=bad)


def test_cache_limit_must_be_positive() -> None:
    with pytest.raises(LocalProtocolError, match="cache_limit"):
        AgentCardPublisher(
            TEMPLATE, options=CardOptions(last_modified=LAST_MODIFIED), cache_limit=0
        )


# --- the cache -----------------------------------------------------------------------------


def test_cache_is_a_bounded_lru() -> None:
    publisher = make_publisher()
    assert publisher.cache_limit == 64
    hot = publisher.document_for("https://hot.example.com")
    first_cold = publisher.document_for("https://cold-0.example.com")
    for n in range(1, 200):
        url = f"https://cold-{n}.example.com"
        document = publisher.document_for(url)
        assert document.card.supported_interfaces[0].url == url
        assert publisher.cache_size <= 64
        assert publisher.document_for("https://hot.example.com") is hot  # kept: recently used
    assert publisher.cache_size == 64
    again = publisher.document_for("https://cold-0.example.com")
    assert again is not first_cold  # evicted, then rebuilt...
    assert again == first_cold  # ...identical


def test_cache_limit_is_configurable() -> None:
    publisher = AgentCardPublisher(
        TEMPLATE, interfaces=SERVED, options=CardOptions(last_modified=LAST_MODIFIED), cache_limit=2
    )
    for n in range(5):
        publisher.respond(get(base_url=f"https://h{n}"))
    assert publisher.cache_size == 2


# --- never raises on client input ----------------------------------------------------------

HEADER_NAMES = st.sampled_from(
    ["if-none-match", "if-modified-since", "If-None-Match", "IF-MODIFIED-SINCE", "accept", "host"]
)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    method=st.one_of(
        st.sampled_from(["GET", "HEAD", "POST", "PUT", "DELETE", "OPTIONS"]), st.text()
    ),
    path=st.text(),
    headers=st.lists(
        st.tuples(
            HEADER_NAMES,
            st.one_of(
                st.text(),
                st.just(ETAG),
                st.just(f"W/{ETAG}"),
                st.just(LAST_MODIFIED_TEXT),
                st.datetimes(timezones=st.just(dt.UTC)).map(
                    lambda d: d.strftime("%a, %d %b %Y %H:%M:%S GMT")
                ),
            ),
        ),
        max_size=4,
    ),
)
def test_any_request_gets_200_304_or_405(
    method: str, path: str, headers: list[tuple[str, str]]
) -> None:
    response = PUBLISHER.respond(HttpRequest(method, path, headers=Headers(headers)))
    assert response.status in {200, 304, 405}
    if response.status == 405:
        assert method not in {"GET", "HEAD"}
    else:
        assert method in {"GET", "HEAD"}
        assert response.header("etag") == ETAG
        expected_body = DOCUMENT.body if response.status == 200 and method == "GET" else b""
        assert response.body == expected_body


@settings(max_examples=200, deadline=None)
@given(base_url=st.text(min_size=1).filter(lambda s: s.rstrip("/")))
def test_any_base_url_gives_a_card_that_keeps_it(base_url: str) -> None:
    publisher = make_publisher(base_url=None)
    document = publisher.document_for(base_url)
    urls = [i.url for i in document.card.supported_interfaces]
    assert urls[0] == base_url.rstrip("/")
    assert all(u.startswith(base_url.rstrip("/")) for u in urls)
    assert json.loads(document.body)["supportedInterfaces"][0]["url"] == urls[0]


# --- helpers -------------------------------------------------------------------------------


def _with_interfaces(*interfaces: t.AgentInterface) -> t.AgentCard:
    return msgspec.structs.replace(TEMPLATE, supported_interfaces=list(interfaces))


def _first_url(response: Any) -> str:
    url: str = json.loads(response.body)["supportedInterfaces"][0]["url"]
    return url


def test_legacy_card_skills_carry_their_modes_or_the_cards_defaults() -> None:
    # A v0.3-era card model requires both on each skill (optional in both specs).
    own = t.AgentSkill(
        id="pic", name="Pic", description="Draws", tags=["art"], output_modes=["image/png"]
    )
    template = msgspec.structs.replace(TEMPLATE, skills=[*TEMPLATE.skills, own])
    body = json.loads(
        make_publisher(template=template, legacy_v0_3_fields=True).respond(get()).body
    )
    plain, drawing = body["skills"]
    assert plain["inputModes"] == TEMPLATE.default_input_modes
    assert plain["outputModes"] == TEMPLATE.default_output_modes
    assert drawing["inputModes"] == TEMPLATE.default_input_modes
    assert drawing["outputModes"] == ["image/png"]
    # The pure v1.0 card says nothing it was not given.
    pure = json.loads(make_publisher(template=template).respond(get()).body)
    assert "inputModes" not in pure["skills"][0]


def test_the_v02_card_path_serves_the_same_card_with_legacy_fields_only() -> None:
    from helpers.protocol import make_protocol

    legacy = make_protocol(legacy_card_fields=True)
    current = legacy.receive_request(HttpRequest("GET", "/.well-known/agent-card.json"))
    old = legacy.receive_request(HttpRequest("GET", "/.well-known/agent.json"))
    assert isinstance(current, HttpResponse) and isinstance(old, HttpResponse)
    assert old.status == 200 and old.body == current.body
    etag = old.header("etag")
    assert etag and etag == current.header("etag")
    again = legacy.receive_request(
        HttpRequest("GET", "/.well-known/agent.json", headers=Headers([("if-none-match", etag)]))
    )
    assert isinstance(again, HttpResponse) and again.status == 304
    assert "/.well-known/agent.json" in legacy.public_paths
    # Without the legacy fields (the default) the v0.2 path is not a card.
    pure = make_protocol().receive_request(HttpRequest("GET", "/.well-known/agent.json"))
    assert isinstance(pure, HttpResponse) and pure.status == 404
