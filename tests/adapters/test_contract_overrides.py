"""Per-request overrides set by upstream middleware (base URL, metadata, identity), and
authorization denials, over HTTP."""

from __future__ import annotations

from typing import Any

import pytest

from a2a_core.call import Call
from a2a_core.protocol import ProtocolOptions
from a2a_core.server import A2AServer, InputRequired, TaskContext
from a2a_core.types import Task
from adapters.contract import (
    Harness,
    Overrides,
    identity_name,
    make_card,
    send_params,
    urls_by_binding,
)

pytestmark = pytest.mark.anyio


def from_headers(headers: Any) -> Overrides:
    """The middleware of these tests: identity, metadata and base URL from headers."""
    return Overrides(
        identity=headers.get("x-user"),
        metadata={"layer": "request", "request_only": headers.get("x-trace")}
        if "x-trace" in headers
        else None,
        base_url=headers.get("x-public-url"),
    )


@pytest.mark.parametrize("binding", ["jsonrpc", "rest"])
async def test_metadata_and_identity_reach_the_agent(harness: Harness, binding: str) -> None:
    seen: list[tuple[dict[str, Any], Any]] = []

    async def agent(ctx: TaskContext) -> str:
        seen.append((dict(ctx.metadata), ctx.identity))
        return "ok"

    server = A2AServer(
        agent,
        card=make_card(),
        protocol=ProtocolOptions(metadata={"layer": "server", "server_only": 1}),
    )
    params = send_params()
    # The call's own metadata wins over the other layers, but never sets reserved keys.
    params["metadata"] = {"layer": "call", "a2a.auth": "mallory", "a2a.tenant": "evil"}
    headers = {"x-user": "alice", "x-trace": "t-1"}
    async with harness.serve(server, middleware=from_headers) as live:
        if binding == "jsonrpc":
            await live.result("SendMessage", params, headers=headers)
            await live.result("SendMessage", send_params(mid="m2"))  # no middleware values
        else:
            first = await live.rest("POST", "/message:send", params, headers=headers)
            second = await live.rest("POST", "/message:send", send_params(mid="m2"))
            assert first.status_code == second.status_code == 200
    (metadata, identity), (bare, anonymous) = seen
    assert metadata == {
        "layer": "call",
        "server_only": 1,
        "request_only": "t-1",
        "a2a.auth": "alice",
    }
    assert identity == "alice"
    assert bare == {"layer": "server", "server_only": 1}  # nothing leaks between requests
    assert anonymous is None


async def test_native_authentication_is_the_identity(harness: Harness) -> None:
    """Starlette's ``request.user`` / aiohttp's ``IDENTITY_KEY``, without ``put_identity``."""
    seen: list[Any] = []

    async def agent(ctx: TaskContext) -> str:
        seen.append(identity_name(ctx.identity))
        return "ok"

    server = A2AServer(agent, card=make_card())
    async with harness.serve(server, native_user=lambda h: h.get("x-user")) as live:
        await live.result("SendMessage", send_params(), headers={"x-user": "gwen"})
        await live.result("SendMessage", send_params(mid="m2"))
    assert seen == ["gwen", None]


async def test_base_url_override_in_the_extended_card(harness: Harness) -> None:
    server = A2AServer(
        lambda ctx: "x",
        card=make_card(extended=True),
        extended_card=make_card(extended=True),
        base_url="https://configured.example",
    )
    async with harness.serve(server, middleware=from_headers) as live:
        public = await live.result(
            "GetExtendedAgentCard",
            headers={"x-user": "hal", "x-public-url": "https://edge.example/agent"},
        )
        configured = await live.result("GetExtendedAgentCard", headers={"x-user": "hal"})
    assert urls_by_binding(public) == {
        "JSONRPC": {"https://edge.example/agent/"},
        "HTTP+JSON": {"https://edge.example/agent"},
    }
    assert urls_by_binding(configured) == {
        "JSONRPC": {"https://configured.example/"},
        "HTTP+JSON": {"https://configured.example"},
    }


async def test_authorization_denials_look_like_missing_tasks(harness: Harness) -> None:
    owners: dict[str, Any] = {}
    asked: list[str] = []

    async def agent(ctx: TaskContext) -> Any:
        owners.setdefault(ctx.task_id, ctx.identity)
        return InputRequired("more?")

    def only_the_owner(operation: str, task: Task, call: Call) -> bool:
        asked.append(operation)
        return owners.get(task.id) == call.identity

    # Ownership off, so that the hook alone decides (and is asked for every verb).
    server = A2AServer(
        agent, card=make_card(push=True), authorize_task=only_the_owner, task_owner=None
    )
    alice, bob = {"x-user": "alice"}, {"x-user": "bob"}
    async with harness.serve(server, middleware=from_headers) as live:
        task = (await live.result("SendMessage", send_params(), headers=alice))["task"]
        tid = task["id"]
        own = await live.result("GetTask", {"id": tid}, headers=alice)
        rpc_errors = [
            await live.error("GetTask", {"id": tid}, headers=bob),
            await live.error("CancelTask", {"id": tid}, headers=bob),
            await live.error("SubscribeToTask", {"id": tid}, headers=bob),
            await live.error("SendMessage", send_params(task_id=tid, mid="m2"), headers=bob),
            await live.error(
                "CreateTaskPushNotificationConfig",
                {"taskId": tid, "url": "https://hooks.example.com/x"},
                headers=bob,
            ),
            await live.error("ListTaskPushNotificationConfigs", {"taskId": tid}, headers=bob),
            await live.error("tasks/get", {"id": tid}, headers=bob, version="0.3"),
        ]
        rest_replies = [
            await live.rest("GET", f"/tasks/{tid}", headers=bob),
            await live.rest("POST", f"/tasks/{tid}:cancel", headers=bob),
            await live.rest("GET", f"/tasks/{tid}:subscribe", headers=bob),
            await live.rest("GET", f"/tasks/{tid}/pushNotificationConfigs", headers=bob),
            await live.rest("GET", f"/v1/tasks/{tid}", headers=bob, version=None),
        ]
        unknown = await live.rest("GET", "/tasks/no-such-task", headers=bob)
        bob_list = await live.result("ListTasks", {}, headers=bob)
        alice_list = await live.result("ListTasks", {}, headers=alice)
        still = await live.result("GetTask", {"id": tid}, headers=alice)
    assert own["id"] == tid
    assert {e["code"] for e in rpc_errors} == {-32001}
    assert {r.status_code for r in rest_replies} == {404}
    # A denial is indistinguishable from a task that does not exist.
    assert {r.json()["error"]["message"] for r in rest_replies} == {
        unknown.json()["error"]["message"]
    }
    assert bob_list["tasks"] == [] and bob_list["totalSize"] == 0
    assert alice_list["totalSize"] == 1
    assert still["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"  # bob changed nothing
    assert {"get", "cancel", "subscribe", "send", "push_set", "push_list", "list"} <= set(asked)


async def test_tasks_belong_to_their_caller_by_default(harness: Harness) -> None:
    """No hook, no option: the identity middleware sets is the owner of the tasks it makes."""
    server = A2AServer(lambda ctx: InputRequired("more?"), card=make_card(push=True))
    alice, bob = {"x-user": "alice"}, {"x-user": "bob"}
    async with harness.serve(server, middleware=from_headers) as live:
        tid = (await live.result("SendMessage", send_params(), headers=alice))["task"]["id"]
        rpc_errors = [
            await live.error("GetTask", {"id": tid}, headers=bob),
            await live.error("CancelTask", {"id": tid}, headers=bob),
            await live.error("SubscribeToTask", {"id": tid}, headers=bob),
            await live.error("SendMessage", send_params(task_id=tid, mid="m2"), headers=bob),
            await live.error("ListTaskPushNotificationConfigs", {"taskId": tid}, headers=bob),
            await live.error("tasks/get", {"id": tid}, headers=bob, version="0.3"),
            await live.error("GetTask", {"id": tid}),  # anonymous
        ]
        rest_replies = [
            await live.rest("GET", f"/tasks/{tid}", headers=bob),
            await live.rest("POST", f"/tasks/{tid}:cancel", headers=bob),
            await live.rest("GET", f"/tasks/{tid}:subscribe", headers=bob),
            await live.rest("GET", f"/v1/tasks/{tid}", headers=bob, version=None),
        ]
        bob_list = await live.result("ListTasks", {}, headers=bob)
        alice_list = await live.result("ListTasks", {}, headers=alice)
        still = await live.result("GetTask", {"id": tid}, headers=alice)
    assert {e["code"] for e in rpc_errors} == {-32001}
    assert {r.status_code for r in rest_replies} == {404}
    assert bob_list["totalSize"] == 0 and alice_list["totalSize"] == 1
    assert still["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
