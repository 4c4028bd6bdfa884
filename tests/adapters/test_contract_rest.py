"""The HTTP+JSON (REST) binding over HTTP: v1.0 routes (also under a tenant), the v0.3
``/v1/...`` routes, and AIP-193 error bodies."""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest

from a2a_core.server import A2AServer, InputRequired, TaskContext
from adapters.contract import Harness, Overrides, make_card, send_params

pytestmark = pytest.mark.anyio

MESSAGE_V03 = {"messageId": "m1", "role": "ROLE_USER", "content": [{"text": "hi"}]}


async def echo(ctx: TaskContext) -> str:
    return f"echo: {ctx.text}"


async def ask_then_answer(ctx: TaskContext) -> Any:
    if not ctx.is_follow_up:
        return InputRequired("more?")
    return f"got {ctx.text}"


def error_of(response: Any) -> dict[str, Any]:
    """The AIP-193 error of a REST reply (checking its shape)."""
    assert response.headers["content-type"].startswith("application/json")
    error: dict[str, Any] = response.json()["error"]
    assert error["code"] == response.status_code
    assert isinstance(error["status"], str) and isinstance(error["message"], str)
    return error


async def test_v1_message_and_task_routes(harness: Harness) -> None:
    async with harness.serve(A2AServer(ask_then_answer, card=make_card())) as live:
        sent = await live.rest("POST", "/message:send", send_params("one"))
        task = sent.json()["task"]
        follow = await live.rest(
            "POST", "/message:send", send_params("two", task_id=task["id"], mid="m2")
        )
        got = await live.rest("GET", f"/tasks/{task['id']}", params={"historyLength": 1})
        listed = await live.rest(
            "GET", "/tasks", params={"pageSize": 5, "includeArtifacts": "true"}
        )
        other = (await live.rest("POST", "/message:send", send_params("x", mid="m3"))).json()[
            "task"
        ]
        canceled = await live.rest("POST", f"/tasks/{other['id']}:cancel")
        cancel_again = await live.rest("POST", f"/tasks/{other['id']}:cancel")
    assert sent.status_code == 200 and sent.headers["a2a-version"] == "1.0"
    assert task["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
    assert follow.json()["task"]["artifacts"][0]["parts"] == [{"text": "got two"}]
    assert got.status_code == 200
    assert got.json()["id"] == task["id"] and len(got.json()["history"]) == 1
    page = listed.json()
    assert page["totalSize"] == 1 and page["pageSize"] == 5
    assert "artifacts" in next(t for t in page["tasks"] if t["id"] == task["id"])
    assert canceled.status_code == 200
    assert canceled.json()["status"]["state"] == "TASK_STATE_CANCELED"
    assert cancel_again.status_code == 409
    assert error_of(cancel_again)["details"][0]["reason"] == "TASK_NOT_CANCELABLE"


async def test_v1_streaming_routes_send_bare_stream_responses(harness: Harness) -> None:
    async def chunks(ctx: TaskContext) -> Any:
        yield "a"
        yield "b"

    async with harness.serve(A2AServer(chunks, card=make_card())) as live:
        stream = await live.stream("POST", "/message:stream", json.dumps(send_params()).encode())
    assert stream.headers["content-type"] == "text/event-stream"
    assert "jsonrpc" not in stream.data[0] and "task" in stream.data[0]
    chunks_seen = [
        d["artifactUpdate"]["artifact"]["parts"][0]["text"]
        for d in stream.data
        if "artifactUpdate" in d
    ]
    assert chunks_seen == ["a", "b"]
    assert stream.data[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"


async def test_v1_push_config_routes(harness: Harness) -> None:
    server = A2AServer(lambda ctx: InputRequired("?"), card=make_card(push=True))
    async with harness.serve(server) as live:
        task = (await live.rest("POST", "/message:send", send_params())).json()["task"]
        base = f"/tasks/{task['id']}/pushNotificationConfigs"
        created = await live.rest(
            "POST",
            base,
            {"taskId": task["id"], "id": "cfg 1", "url": "https://hooks.example.com/c"},
        )
        # An id with a space travels percent-encoded in the path, and comes back decoded.
        got = await live.rest("GET", f"{base}/cfg%201")
        listed = await live.rest("GET", base)
        deleted = await live.rest("DELETE", f"{base}/cfg%201")
        missing = await live.rest("GET", f"{base}/cfg%201")
    assert created.status_code == 200, created.text
    assert created.json()["id"] == "cfg 1" and created.json()["taskId"] == task["id"]
    assert got.json() == created.json()
    assert [c["id"] for c in listed.json()["configs"]] == ["cfg 1"]
    assert deleted.status_code == 200
    assert missing.status_code == 404


async def test_v1_extended_card_route(harness: Harness) -> None:
    def authenticated(headers: Any) -> Overrides:
        return Overrides(identity=headers.get("x-user"))

    server = A2AServer(
        echo,
        card=make_card(extended=True),
        extended_card=make_card(extended=True),
        base_url=harness.base_url,
    )
    async with harness.serve(server, middleware=authenticated) as live:
        card = await live.rest("GET", "/extendedAgentCard", headers={"x-user": "fay"})
        anonymous = await live.rest("GET", "/extendedAgentCard")
    assert card.status_code == 200 and card.json()["name"] == "Contract agent"
    assert anonymous.status_code == 400
    assert error_of(anonymous)["details"][0]["reason"] == "UNSUPPORTED_OPERATION"


async def test_v1_tenant_routes_keep_tenants_apart(harness: Harness) -> None:
    seen: list[Any] = []

    async def agent(ctx: TaskContext) -> str:
        seen.append(ctx.metadata.get("a2a.tenant"))
        return "ok"

    async with harness.serve(A2AServer(agent, card=make_card())) as live:
        task = (await live.rest("POST", "/acme/message:send", send_params())).json()["task"]
        in_tenant = await live.rest("GET", f"/acme/tasks/{task['id']}")
        other_tenant = await live.rest("GET", f"/globex/tasks/{task['id']}")
        no_tenant = await live.rest("GET", f"/tasks/{task['id']}")
        acme = await live.rest("GET", "/acme/tasks")
        globex = await live.rest("GET", "/globex/tasks")
    assert seen == ["acme"]
    assert in_tenant.status_code == 200 and in_tenant.json()["id"] == task["id"]
    assert other_tenant.status_code == 404 and no_tenant.status_code == 404
    assert acme.json()["totalSize"] == 1 and globex.json()["totalSize"] == 0


async def test_v03_routes(harness: Harness) -> None:
    def authenticated(headers: Any) -> Overrides:
        return Overrides(identity=headers.get("x-user"))

    server = A2AServer(
        ask_then_answer,
        card=make_card(push=True, extended=True),
        extended_card=make_card(extended=True),
        base_url=harness.base_url,
    )
    async with harness.serve(server, middleware=authenticated) as live:
        sent = await live.rest("POST", "/v1/message:send", {"message": MESSAGE_V03}, version=None)
        task = sent.json()["task"]
        tid = task["id"]
        got = await live.rest("GET", f"/v1/tasks/{tid}", version=None)
        configs = f"/v1/tasks/{tid}/pushNotificationConfigs"
        created = await live.rest(
            "POST",
            configs,
            {"pushNotificationConfig": {"id": "h1", "url": "https://hooks.example.com/d"}},
            version=None,
        )
        got_config = await live.rest("GET", f"{configs}/h1", version=None)
        listed = await live.rest("GET", configs, version=None)
        # Deleted before the cancel, which would otherwise be delivered to the webhook.
        deleted = await live.rest("DELETE", f"{configs}/h1", version=None)
        # An interrupted task: the subscription is its snapshot, and it stays open until the
        # task is terminal (here: canceled by another request).
        async with live.open_stream(
            "GET", f"/v1/tasks/{tid}:subscribe", None, version=None
        ) as subscription:
            snapshot = await subscription.next_data()
            canceled = await live.rest("POST", f"/v1/tasks/{tid}:cancel", version=None)
            with anyio.fail_after(10):
                subscribed = [snapshot, *await subscription.rest()]
        card = await live.rest("GET", "/v1/card", version=None, headers={"x-user": "kim"})
        missing = await live.rest("GET", "/v1/tasks/nope", version=None)
    assert sent.status_code == 200 and sent.headers["a2a-version"] == "0.3"
    assert task["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
    assert got.status_code == 200 and got.json()["id"] == tid
    assert created.status_code == 200, created.text
    assert created.json()["name"] == f"tasks/{tid}/pushNotificationConfigs/h1"
    assert got_config.json() == created.json()
    assert len(listed.json()["configs"]) == 1
    assert deleted.status_code == 200
    assert snapshot.data["task"]["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
    assert [f.data["statusUpdate"]["status"]["state"] for f in subscribed[1:]] == [
        "TASK_STATE_CANCELLED"
    ]
    assert subscribed[-1].data["statusUpdate"]["final"] is True
    assert canceled.json()["status"]["state"] == "TASK_STATE_CANCELLED"
    assert card.status_code == 200
    # The v0.3 card: ``url`` is the preferred (JSON-RPC) interface, the mount root with its
    # slash; the REST interface is the base URL itself.
    assert card.json()["url"] == harness.base_url + "/"
    assert card.json()["preferredTransport"] == "JSONRPC"
    assert {(i["transport"], i["url"]) for i in card.json()["additionalInterfaces"]} == {
        ("JSONRPC", harness.base_url + "/"),
        ("HTTP+JSON", harness.base_url),
    }
    assert missing.status_code == 404 and error_of(missing)["status"] == "NOT_FOUND"


async def test_v03_streaming_route(harness: Harness) -> None:
    async def chunks(ctx: TaskContext) -> Any:
        yield "x"

    async with harness.serve(A2AServer(chunks, card=make_card())) as live:
        stream = await live.stream(
            "POST",
            "/v1/message:stream",
            json.dumps({"message": MESSAGE_V03}).encode(),
            version=None,
        )
    assert stream.headers["content-type"] == "text/event-stream"
    assert stream.headers["a2a-version"] == "0.3"
    assert "task" in stream.data[0]
    assert stream.data[-1]["statusUpdate"]["final"] is True


async def test_rest_error_bodies(harness: Harness) -> None:
    async with harness.serve(A2AServer(echo, card=make_card())) as live:
        not_found = await live.rest("GET", "/tasks/nope")
        no_route = await live.rest("GET", "/no/such/route")
        wrong_method = await live.rest("DELETE", "/message:send")
        malformed = await live.client.post(
            live.url("/message:send"),
            content=b"{oops",
            headers={"content-type": "application/json"},
        )
        invalid = await live.rest("POST", "/message:send", {"message": {"parts": "nope"}})
        wrong_type = await live.client.post(
            live.url("/message:send"), content=b"hi", headers={"content-type": "text/plain"}
        )
        bad_query = await live.rest("GET", "/tasks", params={"pageSize": "many"})
    assert not_found.status_code == 404
    info = error_of(not_found)["details"][0]
    assert info["reason"] == "TASK_NOT_FOUND" and info["domain"] == "a2a-protocol.org"
    assert no_route.status_code == 404 and error_of(no_route)
    assert wrong_method.status_code == 405 and wrong_method.headers["allow"] == "POST"
    assert malformed.status_code == 400 and error_of(malformed)
    assert invalid.status_code == 400 and error_of(invalid)["status"] == "INVALID_ARGUMENT"
    assert wrong_type.status_code == 415 and error_of(wrong_type)
    assert bad_query.status_code == 400 and error_of(bad_query)


async def test_query_parameters_arrive_exactly(harness: Harness) -> None:
    """The adapter hands the core the raw query string: values with escapes survive."""
    context_id = "50%41 off&more=1+2"
    async with harness.serve(A2AServer(echo, card=make_card())) as live:
        sent = await live.result("SendMessage", send_params(context_id=context_id))
        listed = await live.rest("GET", "/tasks", params={"contextId": context_id})
        other = await live.rest("GET", "/tasks", params={"contextId": "50A off"})
    assert sent["task"]["contextId"] == context_id
    assert [t["id"] for t in listed.json()["tasks"]] == [sent["task"]["id"]]
    assert other.json()["totalSize"] == 0
