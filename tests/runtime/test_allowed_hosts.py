"""The Host names a server answers for (the guard against DNS rebinding), through
``A2AServer.handle`` with bytes; over real HTTP on both adapters in
tests/examples/test_examples.py."""

from __future__ import annotations

from typing import Any

import pytest

from a2a_core._protocol.hosts import HostAllowList, loopback_hosts
from a2a_core.http import HttpResponse
from a2a_core.protocol import ProtocolOptions
from a2a_core.server import A2AServer
from helpers.a2a_client import Client, make_card, rpc_body

pytestmark = pytest.mark.anyio

CARD_PATH = "/.well-known/agent-card.json"


@pytest.mark.parametrize(
    ("header", "admitted"),
    [
        ("agent.example.com", True),
        ("AGENT.example.com.:8443", True),
        ("api.corp.example", True),
        ("corp.example", True),
        ("evilcorp.example", False),
        ("agent.example.com.evil.example", False),
        ("[::1]:8000", True),
        ("[::1", False),
        ("[::1]x", False),
        ("127.0.0.1:notaport", False),
        ("", False),
        (None, True),  # no Host: not a browser (gRPC's metadata has none)
    ],
)
def test_the_allow_list_matches_names_and_domains(header: str | None, admitted: bool) -> None:
    allowed = HostAllowList(["agent.example.com", ".corp.example", "::1"])
    assert allowed.admits(header) is admitted


def test_a_star_admits_any_host_and_typos_fail_at_once() -> None:
    assert HostAllowList(["*"]).admits("anything.example")
    with pytest.raises(ValueError, match="not one string"):
        ProtocolOptions(allowed_hosts="agent.example.com")
    with pytest.raises(ValueError, match="not a host name"):
        ProtocolOptions(allowed_hosts=["agent.example.com/"])
    with pytest.raises(ValueError, match="not a host name"):
        HostAllowList(["https://agent.example.com/"])
    with pytest.raises(ValueError, match="host names"):
        HostAllowList([""])


def test_loopback_names_include_the_public_urls_host() -> None:
    names = loopback_hosts("127.0.0.1", "https://agent.example.com:8443/a2a")
    allowed = HostAllowList(names)
    assert allowed.admits("agent.example.com:8443")
    assert allowed.admits("localhost:8000") and allowed.admits("x.localhost")
    assert not allowed.admits("evil.example")


async def test_a_server_answers_only_its_hosts_and_says_why() -> None:
    protocol = ProtocolOptions(allowed_hosts=["agent.example.com"])
    server = A2AServer(lambda ctx: "hi", card=make_card(), protocol=protocol)
    client = Client(server)
    async with server:
        refused = await server.handle(client.request("GET", CARD_PATH, headers={"host": "evil"}))
        body = rpc_body("ListTasks", {})
        listed = await server.handle(client.request("POST", "/", body, headers={"host": "evil"}))
        card = await server.handle(
            client.request("GET", CARD_PATH, headers={"host": "agent.example.com"})
        )
    for response in (refused, listed):
        assert isinstance(response, HttpResponse)
        assert response.status == 421
        assert b"allowed_hosts" in response.body and b"evil" not in response.body
        assert response.refusal is not None and response.refusal.reason == "MISDIRECTED_REQUEST"
    assert isinstance(card, HttpResponse) and card.status == 200


@pytest.mark.parametrize(
    ("bind", "guarded"), [("127.0.0.1", True), ("::1", True), ("0.0.0.0", False)]
)
def test_only_a_loopback_bind_is_guarded_by_default(bind: str, guarded: bool) -> None:
    server = A2AServer(lambda ctx: "hi", card=make_card())
    assert server.guard_loopback(bind) is guarded
    assert (server.allowed_hosts is not None) is guarded


def test_given_hosts_are_kept_on_a_loopback_bind() -> None:
    protocol = ProtocolOptions(allowed_hosts=["*"])
    server = A2AServer(lambda ctx: "hi", card=make_card(), protocol=protocol)
    assert not server.guard_loopback("127.0.0.1")
    allowed: Any = server.allowed_hosts
    assert allowed.admits("evil.example")
