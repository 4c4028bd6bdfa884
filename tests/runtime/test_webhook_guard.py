"""The webhook SSRF guard as a module of its own (``a2a_core.server._webhook_guard``).

The guard's verdicts on URLs are tested in ``test_push.py`` (through ``check_webhook_url``
and the sender); here: what the delivery side asks of it (the parsed webhook, the check of
resolved addresses), that it does no I/O, and that the old import path still works.
"""

from __future__ import annotations

import ast
import ipaddress
from pathlib import Path

import pytest

from a2a_core.server import _push_delivery as push_delivery
from a2a_core.server import _webhook_guard as webhook_guard
from a2a_core.server._webhook_guard import (
    AllowList,
    WebhookUrlRefusedError,
    check_resolved,
    check_webhook_url,
    parse_webhook,
)

NOTHING_ALLOWED = AllowList.parse((), allow_private=False)


def test_the_old_names_are_still_importable_from_push_delivery() -> None:
    assert push_delivery.WebhookUrlRefusedError is WebhookUrlRefusedError
    assert push_delivery.check_webhook_url is check_webhook_url
    assert {"WebhookUrlRefusedError", "check_webhook_url"} <= set(push_delivery.__all__)
    with pytest.raises(push_delivery.WebhookUrlRefusedError, match="loopback"):
        push_delivery.check_webhook_url("http://127.0.0.1/")


def test_the_guard_does_no_io() -> None:
    """Its imports are pure modules (httpx only for its URL parser), and of ``socket`` it
    uses only ``inet_aton``, a parser: no lookup, no connection."""
    tree = ast.parse(Path(webhook_guard.__file__).read_text())
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, "imports nothing of the runtime"
            imported.add((node.module or "").split(".")[0])
    assert imported == {
        "__future__",
        "collections",
        "dataclasses",
        "httpx",
        "ipaddress",
        "re",
        "socket",
        "typing",
    }
    used = {
        node.attr
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and node.value.id in {"socket", "httpx"}
    }
    assert used == {"inet_aton", "URL", "InvalidURL"}


def test_parse_webhook_tells_delivery_what_is_left_to_check() -> None:
    named = parse_webhook("https://Hooks.Example.COM:8443/p?secret=1", NOTHING_ALLOWED)
    assert (named.host, named.address, named.trusted) == ("hooks.example.com", None, False)
    assert named.origin == "https://hooks.example.com:8443"  # no path, no query
    literal = parse_webhook("http://[2001:db8::1]/", AllowList.parse(["2001:db8::/32"], False))
    assert literal.address == ipaddress.ip_address("2001:db8::1")
    assert literal.host == "2001:db8::1"
    trusted = parse_webhook("http://localhost:8080/", AllowList.parse(["LOCALHOST"], False))
    assert trusted.trusted and trusted.address is None
    with pytest.raises(WebhookUrlRefusedError, match="loopback name"):
        parse_webhook("http://localhost:8080/", NOTHING_ALLOWED)


def test_check_resolved_keeps_distinct_addresses_in_order() -> None:
    hook = parse_webhook("http://hooks.example.com/", NOTHING_ALLOWED)
    found = ["93.184.216.34", "2606:2800:220:1::1", "93.184.216.34"]
    assert check_resolved(hook, found, NOTHING_ALLOWED) == ["93.184.216.34", "2606:2800:220:1::1"]
    assert check_resolved(hook, [], NOTHING_ALLOWED) == []


@pytest.mark.parametrize(
    ("found", "reason"),
    [
        (["93.184.216.34", "10.0.0.1"], "resolves to a private address"),
        (["::ffff:127.0.0.1"], "resolves to a loopback address"),
        (["169.254.169.254"], "resolves to a link-local address"),
        (["93.184.216.34", "not-an-address"], "resolved to something not an address"),
    ],
)
def test_one_refused_answer_refuses_the_host(found: list[str], reason: str) -> None:
    hook = parse_webhook("http://hooks.example.com/secret", NOTHING_ALLOWED)
    with pytest.raises(WebhookUrlRefusedError, match=reason) as info:
        check_resolved(hook, found, NOTHING_ALLOWED)
    assert "hooks.example.com" in str(info.value)
    assert "secret" not in str(info.value)


def test_check_resolved_applies_the_exceptions() -> None:
    hook = parse_webhook("http://hooks.internal/", NOTHING_ALLOWED)
    private = AllowList.parse((), allow_private=True)
    assert check_resolved(hook, ["10.1.2.3"], private) == ["10.1.2.3"]
    with pytest.raises(WebhookUrlRefusedError, match="loopback"):
        check_resolved(hook, ["127.0.0.1"], private)  # allow_private never allows loopback
    network = AllowList.parse(["127.0.0.0/8"], allow_private=False)
    assert check_resolved(hook, ["127.0.0.5"], network) == ["127.0.0.5"]
