"""The small values and functions under ServerProtocol: headers, versions, extensions, metadata.

`ServerProtocol` exercises them end to end (test_protocol*.py); these tables pin their own
rules: how ``Headers`` folds case and keeps repeats, what counts as a version, how extension
lists are read, and how the metadata layers merge.
"""

from __future__ import annotations

from typing import Any

import pytest

from a2a_core import types as t
from a2a_core.call import (
    AUTH_METADATA_KEY,
    RESERVED_METADATA_KEYS,
    TENANT_METADATA_KEY,
    merge_metadata,
)
from a2a_core.errors import ExtensionSupportRequiredError, VersionNotSupportedError
from a2a_core.extensions import (
    activate_extensions,
    extension_response_headers,
    requested_extensions,
)
from a2a_core.http import Headers, HttpRequest, SseResponse
from a2a_core.versions import negotiate_version, normalize_version

# --- Headers -----------------------------------------------------------------------------------


def test_headers_fold_case_and_keep_order_and_repeats() -> None:
    headers = Headers([("A2A-Extensions", "a"), (b"a2a-extensions", b"b"), ("X-Other", "\xe9")])
    assert headers.items() == (("a2a-extensions", "a"), ("a2a-extensions", "b"), ("x-other", "é"))
    assert headers.get("A2A-EXTENSIONS") == "a"
    assert headers.get_all("a2a-Extensions") == ["a", "b"]
    assert headers.get("missing") is None
    assert headers.get("missing", "d") == "d"
    assert headers.get_all("missing") == []
    assert len(headers) == 3
    assert "X-OTHER" in headers
    assert "missing" not in headers
    assert 1 not in headers  # type: ignore[comparison-overlap]


def test_headers_are_values() -> None:
    a = Headers([("A", "1")])
    assert a == Headers([("a", "1")])
    assert a != Headers([("a", "2")])
    assert a != [("a", "1")]
    assert hash(a) == hash(Headers([(b"A", b"1")]))
    assert repr(a) == "Headers([('a', '1')])"
    assert len(Headers()) == 0


def test_request_query_params_are_decoded_in_order() -> None:
    request = HttpRequest("GET", "/", query="a=1&b=&a=%2F+x&c")
    assert request.query_params() == [("a", "1"), ("b", ""), ("a", "/ x"), ("c", "")]
    assert request.metadata == {}
    assert request.headers == Headers()


async def _frames() -> Any:
    yield b"data: 1\n\n"


def test_sse_response_header_lookup() -> None:
    response = SseResponse(200, (("content-type", "text/event-stream"),), _frames())
    assert response.header("Content-Type") == "text/event-stream"
    assert response.header("a2a-version") is None


# --- versions ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "normalized"),
    [
        ("1.0", "1.0"),
        ("1", "1.0"),
        ("1.0.1", "1.0"),
        ("v1.0", "1.0"),
        ("V0.3", "0.3"),
        (" 0.3 ", "0.3"),
        ("01.00", "1.0"),
        ("2.7.123456789", "2.7"),
        ("", None),
        ("1.", None),
        ("1.0.0.0", None),
        ("a.b", None),
        ("12345.0", None),
        ("1,0", None),
        ("1.0-beta", None),
    ],
)
def test_normalize_version(raw: str, normalized: str | None) -> None:
    assert normalize_version(raw) == normalized


@pytest.mark.parametrize(
    ("headers", "query", "version", "explicit"),
    [
        ([], "", "0.3", False),
        ([("A2A-Version", "")], "", "0.3", False),
        ([("A2A-Version", "  ")], "", "0.3", False),
        ([("A2A-Version", "1.0.2")], "", "1.0", True),
        ([], "A2A-Version=1", "1.0", True),
        ([], "a2a-version=0.3&A2A-Version=1.0", "0.3", True),
        ([], "A2A-Version=&A2A-Version=1.0", "1.0", True),
        ([("A2A-Version", "")], "A2A-Version=1.0", "1.0", True),
        ([("A2A-Version", "0.3")], "A2A-Version=9", "0.3", True),
    ],
)
def test_negotiate_version(
    headers: list[tuple[str, str]], query: str, version: str, explicit: bool
) -> None:
    negotiated = negotiate_version(
        HttpRequest("POST", "/", query, Headers(headers)), ("0.3", "1.0")
    )
    assert (negotiated.version, negotiated.explicit) == (version, explicit)


def test_no_version_is_0_3_even_when_0_3_is_not_served() -> None:
    # The method's dialect decides later (spec-decisions A1); negotiation itself does not fail.
    negotiated = negotiate_version(HttpRequest("POST", "/"), ("1.0",))
    assert (negotiated.version, negotiated.explicit) == ("0.3", False)


def test_unsupported_version_names_what_is_supported_and_cuts_long_input() -> None:
    long = "9" * 40
    with pytest.raises(VersionNotSupportedError) as caught:
        negotiate_version(
            HttpRequest("POST", "/", headers=Headers([("A2A-Version", long)])), ("1.0",)
        )
    shown = "9" * 32 + "..."
    assert caught.value.message == f"A2A-Version {shown!r} is not supported; supported: 1.0"
    assert caught.value.data == {"requestedVersion": shown, "supportedVersions": ["1.0"]}
    assert caught.value.metadata == {"requestedVersion": shown, "supportedVersions": "1.0"}


# --- extensions --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("headers", "uris"),
    [
        ([], ()),
        ([("A2A-Extensions", "urn:a")], ("urn:a",)),
        ([("A2A-Extensions", " urn:a , urn:b,,")], ("urn:a", "urn:b")),
        ([("A2A-Extensions", "urn:a"), ("A2A-Extensions", "urn:b, urn:a")], ("urn:a", "urn:b")),
        ([("X-A2A-Extensions", "urn:c"), ("A2A-Extensions", "urn:a")], ("urn:a", "urn:c")),
        ([("A2A-Extensions", ", ,")], ()),
    ],
)
def test_requested_extensions(headers: list[tuple[str, str]], uris: tuple[str, ...]) -> None:
    assert requested_extensions(Headers(headers)) == uris


def test_requested_extensions_are_bounded() -> None:
    many = ",".join(f"urn:{i}" for i in range(200))
    assert len(requested_extensions(Headers([("A2A-Extensions", many)]))) == 64


REQ = t.AgentExtension(uri="urn:req", required=True)
OPT = t.AgentExtension(uri="urn:opt")


def test_activation_keeps_the_request_order_and_only_declared_uris() -> None:
    assert activate_extensions(("urn:x", "urn:opt", "urn:req"), (REQ, OPT)) == (
        "urn:opt",
        "urn:req",
    )
    assert activate_extensions((), (OPT,)) == ()


def test_a_missing_required_extension_is_named() -> None:
    other = t.AgentExtension(uri="urn:req2", required=True)
    with pytest.raises(ExtensionSupportRequiredError) as caught:
        activate_extensions(("urn:opt",), (REQ, OPT, other))
    assert caught.value.message == "Required extension(s) not requested: urn:req, urn:req2"
    assert caught.value.data == {"requiredExtensions": ["urn:req", "urn:req2"]}
    assert caught.value.metadata == {"requiredExtensions": "urn:req,urn:req2"}


def test_extension_response_headers() -> None:
    assert extension_response_headers(()) == ()
    assert extension_response_headers(("urn:a", "urn:b")) == (
        ("a2a-extensions", "urn:a, urn:b"),
        ("x-a2a-extensions", "urn:a, urn:b"),
    )


# --- metadata ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("server", "per_request", "from_call", "identity", "tenant", "merged"),
    [
        ({}, {}, {}, None, "", {}),
        ({"a": 1, "b": 1}, {"b": 2, "c": 2}, {"c": 3}, None, "", {"a": 1, "b": 2, "c": 3}),
        ({}, {}, {AUTH_METADATA_KEY: "x", TENANT_METADATA_KEY: "y", "k": 1}, None, "", {"k": 1}),
        ({}, {}, {AUTH_METADATA_KEY: "x"}, "alice", "", {AUTH_METADATA_KEY: "alice"}),
        ({TENANT_METADATA_KEY: "cfg"}, {}, {}, None, "", {}),
        ({}, {TENANT_METADATA_KEY: "mw"}, {}, None, "t", {TENANT_METADATA_KEY: "t"}),
        ({}, {AUTH_METADATA_KEY: "mw"}, {}, None, "", {}),
    ],
    ids=[
        "empty",
        "later-wins",
        "client-reserved-dropped",
        "identity",
        "no-tenant",
        "tenant",
        "no-identity",
    ],
)
def test_merge_metadata(
    server: dict[str, Any],
    per_request: dict[str, Any],
    from_call: dict[str, Any],
    identity: Any,
    tenant: str,
    merged: dict[str, Any],
) -> None:
    assert (
        merge_metadata(server, per_request, from_call, identity=identity, tenant=tenant) == merged
    )


def test_merge_metadata_copies() -> None:
    server = {"a": 1}
    result = merge_metadata(server, {}, {"b": 2})
    result["a"] = 9
    assert server == {"a": 1}
    assert {AUTH_METADATA_KEY, TENANT_METADATA_KEY} == RESERVED_METADATA_KEYS
