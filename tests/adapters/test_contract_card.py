"""The agent card over HTTP: validators, conditional requests, HEAD, 405/404, and the URLs in
the card wherever and however the adapter is mounted."""

from __future__ import annotations

import dataclasses
import datetime as dt
import email.utils
import logging
from typing import Any

import pytest

from a2a_core.protocol import ProtocolOptions
from a2a_core.server import A2AServer, TaskContext
from adapters.contract import (
    Harness,
    Overrides,
    make_card,
    message_v03,
    rpc_body,
    send_params,
    urls_by_binding,
)

pytestmark = pytest.mark.anyio

CARD_PATH = "/.well-known/agent-card.json"
LAST_MODIFIED = dt.datetime(2026, 1, 2, 3, 4, 5, tzinfo=dt.UTC)


async def echo(ctx: TaskContext) -> str:
    return f"echo: {ctx.text}"


def card_server(
    base_url: str | None, *, protocol: ProtocolOptions | None = None, **kw: Any
) -> A2AServer:
    fixed = dataclasses.replace(protocol or ProtocolOptions(), last_modified=LAST_MODIFIED)
    return A2AServer(echo, card=make_card(), base_url=base_url, protocol=fixed, **kw)


async def test_card_has_validators_and_the_base_url(anywhere: Harness) -> None:
    async with anywhere.serve(card_server(anywhere.base_url)) as live:
        response = await live.client.get(live.url(CARD_PATH))
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("application/json")
    etag = response.headers["etag"]
    assert etag.startswith('"') and etag.endswith('"') and len(etag) == 66
    assert response.headers["last-modified"] == "Fri, 02 Jan 2026 03:04:05 GMT"
    assert response.headers["cache-control"] == "public, max-age=300"
    card = response.json()
    assert card["name"] == "Contract agent"
    # JSON-RPC at the mount root with its trailing slash (a client POSTs to exactly that URL);
    # HTTP+JSON as the base URL itself (a client appends "/message:send" to it).
    assert urls_by_binding(card) == {
        "JSONRPC": {anywhere.base_url + "/"},
        "HTTP+JSON": {anywhere.base_url},
    }
    bindings = {(i["protocolBinding"], i["protocolVersion"]) for i in card["supportedInterfaces"]}
    assert bindings == {
        ("JSONRPC", "1.0"),
        ("HTTP+JSON", "1.0"),
        ("JSONRPC", "0.3"),
        ("HTTP+JSON", "0.3"),
    }


async def test_conditional_requests_get_304(harness: Harness) -> None:
    async with harness.serve(card_server(harness.base_url)) as live:
        first = await live.client.get(live.url(CARD_PATH))
        etag = first.headers["etag"]
        by_etag = await live.client.get(live.url(CARD_PATH), headers={"if-none-match": etag})
        by_weak_etag = await live.client.get(
            live.url(CARD_PATH), headers={"if-none-match": f'"other", W/{etag}'}
        )
        by_star = await live.client.get(live.url(CARD_PATH), headers={"if-none-match": "*"})
        by_date = await live.client.get(
            live.url(CARD_PATH), headers={"if-modified-since": first.headers["last-modified"]}
        )
        stale_etag = await live.client.get(live.url(CARD_PATH), headers={"if-none-match": '"x"'})
        older = email.utils.format_datetime(LAST_MODIFIED - dt.timedelta(days=1), usegmt=True)
        stale_date = await live.client.get(
            live.url(CARD_PATH), headers={"if-modified-since": older}
        )
    for response in (by_etag, by_weak_etag, by_star, by_date):
        assert response.status_code == 304
        assert response.content == b""
        assert response.headers["etag"] == etag
        assert response.headers["cache-control"] == "public, max-age=300"
    assert stale_etag.status_code == 200 and stale_etag.content == first.content
    assert stale_date.status_code == 200 and stale_date.content == first.content


async def test_head_has_the_headers_and_no_body(harness: Harness) -> None:
    async with harness.serve(card_server(harness.base_url)) as live:
        get = await live.client.get(live.url(CARD_PATH))
        head = await live.client.head(live.url(CARD_PATH))
        again = await live.client.get(live.url(CARD_PATH))  # the connection is still usable
    assert head.status_code == 200
    assert head.content == b""
    assert head.headers["content-length"] == str(len(get.content))
    for name in ("etag", "last-modified", "cache-control", "content-type"):
        assert head.headers[name] == get.headers[name]
    assert again.status_code == 200 and again.content == get.content


@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE"])
async def test_other_methods_on_the_card_get_405(harness: Harness, method: str) -> None:
    async with harness.serve(card_server(harness.base_url)) as live:
        response = await live.client.request(method, live.url(CARD_PATH), content=b"{}")
    assert response.status_code == 405
    assert response.headers["allow"] == "GET, HEAD"


async def test_unknown_paths_get_404(anywhere: Harness) -> None:
    async with anywhere.serve(card_server(anywhere.base_url)) as live:
        unknown = await live.client.get(live.url("/no/such/path"))
        not_card = await live.client.get(live.url("/.well-known/other.json"))
        jsonrpc_get = await live.client.get(live.url("/"))
    assert unknown.status_code == 404
    assert unknown.json()["error"]["code"] == 404
    assert not_card.status_code == 404
    assert jsonrpc_get.status_code == 405  # the JSON-RPC endpoint takes POST only
    assert jsonrpc_get.headers["allow"] == "POST"


async def test_the_urls_in_the_card_work_as_published(anywhere: Harness) -> None:
    """A client that only knows the card reaches every interface at the URL it lists, under
    every mount form: a plain Starlette ``Mount`` and FastAPI's ``app.mount`` too, which answer
    the bare mount path (``POST /a2a``) with a 307 that clients do not follow (httpx here
    does not): the JSON-RPC URL of the card is the mount root with its trailing slash."""
    async with anywhere.serve(card_server(anywhere.base_url)) as live:
        card = (await live.client.get(live.url(CARD_PATH))).json()
        by_binding = {
            (i["protocolBinding"], i["protocolVersion"]): i["url"]
            for i in card["supportedInterfaces"]
        }
        rpc = await live.client.post(
            by_binding[("JSONRPC", "1.0")],
            content=rpc_body("SendMessage", send_params("card")),
            headers={"content-type": "application/json", "a2a-version": "1.0"},
        )
        rest = await live.client.post(
            by_binding[("HTTP+JSON", "1.0")] + "/message:send",
            json=send_params("rest", mid="m2"),
            headers={"a2a-version": "1.0"},
        )
        rpc_v03 = await live.client.post(
            by_binding[("JSONRPC", "0.3")],
            content=rpc_body("message/send", {"message": message_v03("card 0.3", mid="m3")}),
            headers={"content-type": "application/json", "a2a-version": "0.3"},
        )
        rest_v03 = await live.client.post(
            by_binding[("HTTP+JSON", "0.3")] + "/v1/message:send",
            # The v0.3 REST binding speaks the v0.3 proto's JSON, not the JSON-RPC shapes.
            json={"message": {"messageId": "m4", "role": "ROLE_USER", "content": [{"text": "r"}]}},
            headers={"a2a-version": "0.3"},
        )
    assert by_binding == {
        ("JSONRPC", "1.0"): anywhere.base_url + "/",
        ("HTTP+JSON", "1.0"): anywhere.base_url,
        ("JSONRPC", "0.3"): anywhere.base_url + "/",
        ("HTTP+JSON", "0.3"): anywhere.base_url,
    }
    assert rpc.status_code == 200, (rpc.status_code, rpc.headers)
    assert rpc.json()["result"]["task"]["artifacts"][0]["parts"] == [{"text": "echo: card"}]
    assert rest.status_code == 200, (rest.status_code, rest.headers)
    assert rest.json()["task"]["artifacts"][0]["parts"] == [{"text": "echo: rest"}]
    assert rpc_v03.status_code == 200, (rpc_v03.status_code, rpc_v03.headers)
    assert rpc_v03.json()["result"]["artifacts"][0]["parts"] == [
        {"kind": "text", "text": "echo: card 0.3"}
    ]
    assert rest_v03.status_code == 200, (rest_v03.status_code, rest_v03.headers)
    assert rest_v03.json()["task"]["artifacts"][0]["parts"] == [{"text": "echo: r"}]


async def test_base_url_from_middleware(anywhere: Harness) -> None:
    """``put_base_url`` per request wins over the configured URL; each URL has its own ETag."""

    def public_url(headers: Any) -> Overrides:
        host = headers.get("x-public-host")
        return Overrides(base_url=f"https://{host}/agents" if host else None)

    server = card_server("https://configured.example/a2a")
    async with anywhere.serve(server, middleware=public_url) as live:
        one = await live.client.get(live.url(CARD_PATH), headers={"x-public-host": "one.example"})
        two = await live.client.get(live.url(CARD_PATH), headers={"x-public-host": "two.example"})
        configured = await live.client.get(live.url(CARD_PATH))
    assert urls_by_binding(one.json()) == {
        "JSONRPC": {"https://one.example/agents/"},
        "HTTP+JSON": {"https://one.example/agents"},
    }
    assert urls_by_binding(two.json()) == {
        "JSONRPC": {"https://two.example/agents/"},
        "HTTP+JSON": {"https://two.example/agents"},
    }
    assert urls_by_binding(configured.json()) == {
        "JSONRPC": {"https://configured.example/a2a/"},
        "HTTP+JSON": {"https://configured.example/a2a"},
    }
    assert len({one.headers["etag"], two.headers["etag"], configured.headers["etag"]}) == 3


async def test_trust_host_header_derives_the_url_from_the_request(anywhere: Harness) -> None:
    async with anywhere.serve(card_server(None), trust_host_header=True) as live:
        direct = await live.client.get(live.url(CARD_PATH))
        proxied = await live.client.get(
            live.url(CARD_PATH), headers={"host": "agents.example:8443"}
        )
    assert urls_by_binding(direct.json()) == {
        "JSONRPC": {anywhere.base_url + "/"},
        "HTTP+JSON": {anywhere.base_url},
    }
    proxied_base = f"http://agents.example:8443{anywhere.prefix}"
    assert urls_by_binding(proxied.json()) == {
        "JSONRPC": {proxied_base + "/"},
        "HTTP+JSON": {proxied_base},
    }


async def test_card_path_can_be_moved_or_disabled(harness: Harness) -> None:
    server = card_server(harness.base_url, protocol=ProtocolOptions(card_path="/card.json"))
    async with harness.serve(server) as live:
        moved = await live.client.get(live.url("/card.json"))
        old = await live.client.get(live.url(CARD_PATH))
    assert moved.status_code == 200 and moved.json()["name"] == "Contract agent"
    assert old.status_code == 404


async def test_no_base_url_is_reported_at_start_and_answered_503(
    anywhere: Harness, caplog: pytest.LogCaptureFixture
) -> None:
    """A server with no ``base_url`` whose adapter does not derive one: the log says what to
    add when the application starts, and the card is a 503 saying the same, never a 500."""
    caplog.set_level(logging.WARNING, "a2a_core.server")
    async with anywhere.serve(card_server(None), expect_errors=True) as live:
        at_start = [r.getMessage() for r in caplog.records if r.name == "a2a_core.server"]
        card = await live.client.get(live.url(CARD_PATH))
        again = await live.client.get(live.url(CARD_PATH))
        sent = await live.result("SendMessage", send_params())  # calls need no base URL
        logged = [r.getMessage() for r in live.errors]
    assert len(at_start) == 1 and "base_url" in at_start[0], at_start
    assert "trust_host_header" in at_start[0] and "put_base_url" in at_start[0]
    assert card.status_code == again.status_code == 503
    error = card.json()["error"]
    assert error["status"] == "UNAVAILABLE"
    assert "Give A2AServer a base_url" in error["message"]
    assert sent["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
    assert len(logged) == 1 and "base_url" in logged[0]  # once, not per request


async def test_a_derived_base_url_is_not_reported(
    anywhere: Harness, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, "a2a_core.server")
    async with anywhere.serve(card_server(None), trust_host_header=True) as live:
        card = await live.client.get(live.url(CARD_PATH))
    assert card.status_code == 200
    assert not [r for r in caplog.records if r.name == "a2a_core.server"]
