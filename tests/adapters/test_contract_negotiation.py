"""Version and extension negotiation, the body limit and malformed bodies, over HTTP."""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator, Sequence
from typing import Any

import pytest

from a2a_core.call import Call
from a2a_core.protocol import ProtocolOptions
from a2a_core.server import A2AServer, Extension, TaskContext, TimestampExtension
from a2a_core.types import AgentExtension
from adapters.contract import Harness, make_card, message_v03, rpc_body, send_params

pytestmark = pytest.mark.anyio

REQUIRED_URI = "https://example.com/extensions/required/v1"


async def echo(ctx: TaskContext) -> str:
    return f"echo: {ctx.text} {list(ctx.extensions)}"


async def test_unsupported_version_is_32009(harness: Harness) -> None:
    async with harness.serve(A2AServer(echo, card=make_card())) as live:
        rpc = await live.rpc("SendMessage", send_params(), version="9.9")
        by_query = await live.client.post(
            live.url("/"),
            params={"A2A-Version": "2.0"},
            content=rpc_body("SendMessage", send_params()),
            headers={"content-type": "application/json"},
        )
        rest = await live.rest("POST", "/message:send", send_params(), version="9.9")
        normalized = await live.post_rpc("SendMessage", send_params(), version="1.0.3")
    assert rpc["error"]["code"] == -32009
    assert rpc["error"]["data"][0]["reason"] == "VERSION_NOT_SUPPORTED"
    assert by_query.json()["error"]["code"] == -32009
    assert rest.status_code == 400
    assert rest.json()["error"]["details"][0]["reason"] == "VERSION_NOT_SUPPORTED"
    assert normalized.headers["a2a-version"] == "1.0"
    assert "task" in normalized.json()["result"]


async def test_strict_versions_refuse_the_other_dialect(harness: Harness) -> None:
    server = A2AServer(echo, card=make_card(), protocol=ProtocolOptions(strict_versions=True))
    async with harness.serve(server) as live:
        refused = await live.error("SendMessage", send_params(), version=None)  # means 0.3
        served = await live.result("SendMessage", send_params(), version="1.0")
    assert refused["code"] == -32009
    assert served["task"]["status"]["state"] == "TASK_STATE_COMPLETED"


async def test_required_extension_missing_is_32008(harness: Harness) -> None:
    required = Extension(AgentExtension(uri=REQUIRED_URI, required=True))
    server = A2AServer(echo, card=make_card(), extensions=[required], base_url=harness.base_url)
    async with harness.serve(server) as live:
        missing = await live.rpc("SendMessage", send_params())
        missing_rest = await live.rest("POST", "/message:send", send_params())
        given = await live.post_rpc(
            "SendMessage", send_params(), headers={"a2a-extensions": REQUIRED_URI}
        )
        card = await live.client.get(live.url("/.well-known/agent-card.json"))
    assert missing["error"]["code"] == -32008
    assert missing_rest.status_code == 400
    assert missing_rest.json()["error"]["details"][0]["reason"] == "EXTENSION_SUPPORT_REQUIRED"
    assert given.headers["a2a-extensions"] == REQUIRED_URI
    task = given.json()["result"]["task"]
    assert task["artifacts"][0]["parts"] == [{"text": f"echo: hi ['{REQUIRED_URI}']"}]
    # The card is not an RPC: it is served without the extension, and declares it.
    assert card.status_code == 200
    declared = card.json()["capabilities"]["extensions"]
    assert declared == [{"uri": REQUIRED_URI, "required": True}]


async def test_extensions_are_activated_and_echoed(harness: Harness) -> None:
    stamp = TimestampExtension()
    server = A2AServer(echo, card=make_card(), extensions=[stamp])
    async with harness.serve(server) as live:
        plain = await live.post_rpc("SendMessage", send_params())
        # Repeated and comma-separated headers, an unknown URI, and v0.3's header name.
        asked = await live.client.post(
            live.url("/"),
            content=rpc_body("SendMessage", send_params(mid="m2")),
            headers=[
                ("content-type", "application/json"),
                ("a2a-version", "1.0"),
                ("a2a-extensions", "https://unknown.example/x, " + stamp.uri),
                ("a2a-extensions", "https://other.example/y"),
            ],
        )
        legacy = await live.post_rpc(
            "message/send",
            {
                "message": {
                    "kind": "message",
                    "messageId": "m3",
                    "role": "user",
                    "parts": [{"kind": "text", "text": "x"}],
                }
            },
            version="0.3",
            headers={"x-a2a-extensions": stamp.uri},
        )
        streamed = await live.stream_rpc(
            "SendStreamingMessage", send_params(mid="m4"), headers={"a2a-extensions": stamp.uri}
        )
        rest = await live.rest(
            "POST", "/message:send", send_params(mid="m5"), headers={"a2a-extensions": stamp.uri}
        )
    assert "a2a-extensions" not in plain.headers
    assert stamp.uri not in plain.json()["result"]["task"].get("metadata", {})
    assert asked.headers["a2a-extensions"] == asked.headers["x-a2a-extensions"] == stamp.uri
    assert asked.json()["result"]["task"]["metadata"][stamp.uri]["timestamp"].endswith("Z")
    assert legacy.headers["a2a-extensions"] == legacy.headers["x-a2a-extensions"] == stamp.uri
    assert stamp.uri in legacy.json()["result"]["metadata"]
    assert streamed.headers["a2a-extensions"] == stamp.uri
    assert stamp.uri in streamed.data[0]["result"]["task"]["metadata"]
    assert rest.headers["a2a-extensions"] == stamp.uri
    assert stamp.uri in rest.json()["task"]["metadata"]


class ChoosyStamp(TimestampExtension):
    """Stamps replies, but declines to activate when the client also asks for ``decline``."""

    def __init__(self, uri: str, *, required: bool = False) -> None:
        super().__init__(uri)
        self.declaration = AgentExtension(uri=uri, required=required)
        self.decline = uri + ":decline"
        self.seen: list[str] = []

    def activate(self, requested: Sequence[str], call: Call) -> bool:
        self.seen.append(call.operation.value)
        return self.uri in requested and self.decline not in requested

    def on_result(self, call: Call, result: Any) -> Any:
        self.seen.append("on_result")
        return super().on_result(call, result)


#: A SendMessage in each (binding, dialect): (method or None for REST, path, body, version).
SENDS = {
    "jsonrpc-1.0": ("SendMessage", "/", send_params(), "1.0"),
    "jsonrpc-0.3": ("message/send", "/", {"message": message_v03()}, "0.3"),
    "rest-1.0": (None, "/message:send", send_params(), "1.0"),
    "rest-0.3": (
        None,
        "/v1/message:send",
        {"message": {"messageId": "m1", "role": "ROLE_USER", "content": [{"text": "hi"}]}},
        None,
    ),
}


async def _send_with(live: Any, route: str, extensions: str) -> Any:
    method, path, template, version = SENDS[route]
    # A message of its own each time: the same one again is answered with its first task.
    body = {**template, "message": {**template["message"], "messageId": uuid.uuid4().hex}}
    headers = {"a2a-extensions": extensions}
    if method is None:
        return await live.rest("POST", path, body, version=version, headers=headers)
    return await live.post_rpc(method, body, version=version, headers=headers)


def _task_of(route: str, body: Any) -> Any:
    """The task of a SendMessage reply, in each binding's and dialect's shape."""
    if route == "jsonrpc-1.0":
        return body["result"]["task"]
    if route == "jsonrpc-0.3":
        return body["result"]
    return body["task"]


def _texts(task: Any) -> str:
    part = task["artifacts"][0]["parts"][0]
    return str(part["text"])


@pytest.mark.parametrize("route", list(SENDS))
async def test_extension_activation_is_decided_once(harness: Harness, route: str) -> None:
    # One decision (Extension.activate) drives the reply header, ctx.extensions and the
    # hooks alike: activated, declined, and required-but-declined.
    required = ChoosyStamp("urn:example:required", required=True)
    optional = ChoosyStamp("urn:example:optional")
    server = A2AServer(echo, card=make_card(), extensions=[required, optional])
    both = f"{required.uri}, {optional.uri}"
    async with harness.serve(server) as live:
        activated = await _send_with(live, route, both)
        declined = await _send_with(live, route, f"{both}, {optional.decline}")
        required_declined = await _send_with(live, route, f"{both}, {required.decline}")

    assert activated.status_code == 200, activated.text
    assert activated.headers["a2a-extensions"] == both
    assert activated.headers["x-a2a-extensions"] == both
    task = _task_of(route, activated.json())
    assert _texts(task).endswith(f" {[required.uri, optional.uri]}")  # ctx.extensions
    assert task["metadata"][optional.uri]["timestamp"].endswith("Z")  # the hooks ran
    assert task["metadata"][required.uri]["timestamp"].endswith("Z")

    assert declined.status_code == 200, declined.text
    assert declined.headers["a2a-extensions"] == required.uri
    assert declined.headers["x-a2a-extensions"] == required.uri
    task = _task_of(route, declined.json())
    assert _texts(task).endswith(f" {[required.uri]}")
    assert optional.uri not in task["metadata"]
    assert required.uri in task["metadata"]
    # activate() ran once per call, and the hook only for the call that activated it.
    assert optional.seen == ["SendMessage", "on_result", "SendMessage", "SendMessage"]

    # A required extension that is asked for but declined fails the call as a missing one.
    assert "a2a-extensions" not in required_declined.headers
    if route.startswith("jsonrpc"):
        assert required_declined.status_code == 200
        error = required_declined.json()["error"]
        assert error["code"] == -32008
        assert required.uri in error["message"]
    else:
        assert required_declined.status_code == 400
        body = required_declined.json()
        assert body["error"]["details"][0]["reason"] == "EXTENSION_SUPPORT_REQUIRED"
        assert body.get("code") == (-32008 if route == "rest-0.3" else None)
    assert required.seen.count("on_result") == 2


async def test_extension_activation_on_streams(harness: Harness) -> None:
    optional = ChoosyStamp("urn:example:optional")
    async with harness.serve(A2AServer(echo, card=make_card(), extensions=[optional])) as live:
        activated = await live.stream_rpc(
            "SendStreamingMessage", send_params(), headers={"a2a-extensions": optional.uri}
        )
        declined = await live.stream_rpc(
            "SendStreamingMessage",
            send_params(mid="m2"),
            headers={"a2a-extensions": f"{optional.uri}, {optional.decline}"},
        )
    assert activated.headers["a2a-extensions"] == optional.uri
    assert optional.uri in activated.data[0]["result"]["task"]["metadata"]
    assert "a2a-extensions" not in declined.headers
    assert all(optional.uri not in json.dumps(d) for d in declined.data)


async def test_body_limit(harness: Harness) -> None:
    server = A2AServer(echo, card=make_card(), protocol=ProtocolOptions(max_body_size=1024))
    async with harness.serve(server) as live:
        big = send_params("x" * 64 * 1024)
        rpc = await live.rpc("SendMessage", big)
        rest = await live.rest("POST", "/message:send", big)
        huge = await live.rpc("SendMessage", send_params("y" * 2 * 1024 * 1024))
        # Just under the limit is fine; and the server keeps serving on the same client.
        small = send_params("z")
        small["message"]["metadata"] = {"pad": ""}
        small["message"]["metadata"]["pad"] = "p" * (1024 - len(rpc_body("SendMessage", small)))
        body = rpc_body("SendMessage", small)
        assert len(body) == 1024
        headers = {"content-type": "application/json", "a2a-version": "1.0"}
        fits = await live.client.post(live.url("/"), content=body, headers=headers)

        # Without a Content-Length (chunked uploads), the limit holds just the same.
        async def chunked(data: bytes) -> AsyncIterator[bytes]:
            for i in range(0, len(data), 100):
                yield data[i : i + 100]

        chunked_fits = (
            await live.client.post(live.url("/"), content=chunked(body), headers=headers)
        ).json()
        big_body = rpc_body("SendMessage", big)
        chunked_big = (
            await live.client.post(live.url("/"), content=chunked(big_body), headers=headers)
        ).json()
    assert rpc["error"]["code"] == -32600 and rpc["id"] is None
    assert chunked_big["error"]["code"] == -32600
    assert chunked_fits["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
    assert huge["error"]["code"] == -32600
    assert 400 <= rest.status_code < 500
    assert rest.json()["error"]["status"] == "INVALID_ARGUMENT"
    assert fits.json()["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"


async def test_version_is_checked_before_the_body(harness: Harness) -> None:
    """The order of checks holds over HTTP: an unsupported version wins over a bad body."""
    server = A2AServer(echo, card=make_card(), protocol=ProtocolOptions(max_body_size=64))
    async with harness.serve(server) as live:
        response = await live.client.post(
            live.url("/"),
            content=b"{" * 10_000,
            headers={"content-type": "application/json", "a2a-version": "7.0"},
        )
        body_first = await live.client.post(
            live.url("/"),
            content=b"{" * 10_000,
            headers={"content-type": "application/json", "a2a-version": "1.0"},
        )
    assert response.json()["error"]["code"] == -32009
    assert body_first.json()["error"]["code"] == -32600


async def test_malformed_json_is_32700(harness: Harness) -> None:
    async with harness.serve(A2AServer(echo, card=make_card())) as live:
        headers = {"content-type": "application/json", "a2a-version": "1.0"}
        garbage = await live.client.post(
            live.url("/"), content=b"\xff\xfe not json", headers=headers
        )
        deep = await live.client.post(
            live.url("/"), content=b"[" * 100 + b"]" * 100, headers=headers
        )
        after = await live.result("SendMessage", send_params())
    doc = json.loads(garbage.content)
    assert garbage.status_code == 200
    assert doc == {"jsonrpc": "2.0", "id": None, "error": doc["error"]}
    assert doc["error"]["code"] == -32700
    assert deep.json()["error"]["code"] == -32600  # nesting beyond the limit
    assert after["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
