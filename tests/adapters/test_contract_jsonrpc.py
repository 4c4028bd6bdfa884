"""Every JSON-RPC method, in both dialects, over HTTP; and the error bodies."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import anyio
import msgspec
import pytest

from a2a_core.protocol import ProtocolOptions
from a2a_core.server import A2AServer, InputRequired, TaskContext
from a2a_core.types import AgentSkill
from adapters.contract import (
    Harness,
    Overrides,
    identity_name,
    make_card,
    message_v03,
    send_params,
    urls_by_binding,
)

pytestmark = pytest.mark.anyio

ERROR_INFO = "type.googleapis.com/google.rpc.ErrorInfo"


async def echo(ctx: TaskContext) -> str:
    return f"echo: {ctx.text}"


async def ask_then_answer(ctx: TaskContext) -> Any:
    if not ctx.is_follow_up:
        return InputRequired("What is your name?")
    return f"Hello, {ctx.text}!"


async def chunks(ctx: TaskContext) -> AsyncIterator[str]:
    for word in ["alpha", "beta", "gamma"]:
        yield word


class Gate:
    """An agent that works, then waits for the test to open the gate."""

    def __init__(self) -> None:
        self.started = anyio.Event()
        self.open = anyio.Event()

    async def __call__(self, ctx: TaskContext) -> str:
        await ctx.working("on it")
        self.started.set()
        await self.open.wait()
        return "gate passed"


# --- v1.0 -----------------------------------------------------------------------------------


async def test_v1_send_get_and_list(harness: Harness) -> None:
    async with harness.serve(A2AServer(echo, card=make_card())) as live:
        response = await live.post_rpc("SendMessage", send_params("hello"), id="req-1")
        sent = response.json()
        task = sent["result"]["task"]
        got = await live.result("GetTask", {"id": task["id"], "historyLength": 1})
        listed = await live.result("ListTasks", {"pageSize": 10})
    assert response.status_code == 200
    assert response.headers["a2a-version"] == "1.0"
    names = [name for name, _ in response.headers.multi_items()]
    assert names.count("content-type") == 1 and names.count("a2a-version") == 1
    assert int(response.headers["content-length"]) == len(response.content)
    assert sent["id"] == "req-1"
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    assert task["artifacts"][0]["parts"] == [{"text": "echo: hello"}]
    assert got["id"] == task["id"] and len(got["history"]) == 1
    assert listed["totalSize"] == 1 and listed["pageSize"] == 10
    assert [t["id"] for t in listed["tasks"]] == [task["id"]]
    assert listed["nextPageToken"] == ""


async def test_v1_multi_turn(harness: Harness) -> None:
    async with harness.serve(A2AServer(ask_then_answer, card=make_card())) as live:
        first = (await live.result("SendMessage", send_params("hi")))["task"]
        second = (
            await live.result("SendMessage", send_params("Ada", task_id=first["id"], mid="m2"))
        )["task"]
    assert first["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
    assert first["status"]["message"]["parts"] == [{"text": "What is your name?"}]
    assert second["id"] == first["id"] and second["contextId"] == first["contextId"]
    assert second["status"]["state"] == "TASK_STATE_COMPLETED"
    assert second["artifacts"][0]["parts"] == [{"text": "Hello, Ada!"}]


async def test_v1_streaming_send(harness: Harness) -> None:
    async with harness.serve(A2AServer(chunks, card=make_card())) as live:
        stream = await live.stream_rpc("SendStreamingMessage", send_params(), id=42)
    assert stream.status == 200
    results = [d["result"] for d in stream.data]
    assert all(d["id"] == 42 and d["jsonrpc"] == "2.0" for d in stream.data)
    assert results[0]["task"]["status"]["state"] == "TASK_STATE_SUBMITTED"
    texts = [
        r["artifactUpdate"]["artifact"]["parts"][0]["text"]
        for r in results
        if "artifactUpdate" in r
    ]
    assert texts == ["alpha", "beta", "gamma"]
    assert results[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"


async def test_v1_cancel(harness: Harness) -> None:
    gate = Gate()
    async with harness.serve(A2AServer(gate, card=make_card())) as live:
        task = (
            await live.result("SendMessage", send_params(configuration={"returnImmediately": True}))
        )["task"]
        await gate.started.wait()
        canceled = await live.result("CancelTask", {"id": task["id"]})
        again = await live.error("CancelTask", {"id": task["id"]})
        stored = await live.result("GetTask", {"id": task["id"]})
    assert canceled["status"]["state"] == "TASK_STATE_CANCELED"
    assert stored["status"]["state"] == "TASK_STATE_CANCELED"
    assert again["code"] == -32002
    assert again["data"][0]["reason"] == "TASK_NOT_CANCELABLE"


async def test_v1_subscribe(harness: Harness) -> None:
    gate = Gate()
    async with harness.serve(A2AServer(gate, card=make_card())) as live:
        task = (
            await live.result("SendMessage", send_params(configuration={"returnImmediately": True}))
        )["task"]
        await gate.started.wait()
        async with live.open_rpc_stream("SubscribeToTask", {"id": task["id"]}, id=7) as stream:
            snapshot = await stream.next_data()
            gate.open.set()
            rest = await stream.rest()
    assert snapshot.data["id"] == 7
    assert snapshot.data["result"]["task"]["id"] == task["id"]
    assert snapshot.data["result"]["task"]["status"]["state"] == "TASK_STATE_WORKING"
    assert rest[-1].data["result"]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"
    assert all(f.data["id"] == 7 for f in rest)


async def test_v1_push_config_crud(harness: Harness) -> None:
    server = A2AServer(lambda ctx: InputRequired("?"), card=make_card(push=True))
    async with harness.serve(server) as live:
        task = (await live.result("SendMessage", send_params()))["task"]
        created = await live.result(
            "CreateTaskPushNotificationConfig",
            {"taskId": task["id"], "url": "https://hooks.example.com/a", "token": "tok"},
        )
        got = await live.result(
            "GetTaskPushNotificationConfig", {"taskId": task["id"], "id": created["id"]}
        )
        listed = await live.result("ListTaskPushNotificationConfigs", {"taskId": task["id"]})
        deleted = await live.result(
            "DeleteTaskPushNotificationConfig", {"taskId": task["id"], "id": created["id"]}
        )
        after = await live.result("ListTaskPushNotificationConfigs", {"taskId": task["id"]})
        refused = await live.error(
            "CreateTaskPushNotificationConfig", {"taskId": task["id"], "url": "http://127.0.0.1/"}
        )
    assert created["taskId"] == task["id"] and created["url"] == "https://hooks.example.com/a"
    # The token is a secret: no reply shows it (the webhook still gets it).
    assert got == created and "token" not in got
    assert [c["id"] for c in listed["configs"]] == [created["id"]]
    assert "token" not in listed["configs"][0]
    assert deleted == {}
    assert after.get("configs", []) == []
    assert refused["code"] == -32602


async def test_push_needs_the_capability(harness: Harness) -> None:
    async with harness.serve(A2AServer(echo, card=make_card(push=False))) as live:
        v1 = await live.error("ListTaskPushNotificationConfigs", {"taskId": "x"})
        v03 = await live.error("tasks/pushNotificationConfig/list", {"id": "x"}, version="0.3")
    assert v1["code"] == v03["code"] == -32003


def per_caller_card(identity: Any) -> Any:
    card = make_card(extended=True)
    vip = AgentSkill(id="vip", name=f"For {identity_name(identity)}", description="d", tags=[])
    return msgspec.structs.replace(card, skills=[*card.skills, vip])


@pytest.mark.parametrize("via", ["put_identity", "native"])
async def test_extended_card_for_an_authenticated_caller(harness: Harness, via: str) -> None:
    """The identity comes from middleware: the adapter's ``put_identity``, or the
    framework's own authentication (Starlette ``request.user``, aiohttp ``IDENTITY_KEY``)."""

    def user(headers: Any) -> str | None:
        return headers.get("x-user")

    def overrides(headers: Any) -> Overrides:
        return Overrides(identity=user(headers))

    server = A2AServer(
        echo,
        card=make_card(extended=True),
        extended_card=per_caller_card,
        base_url=harness.base_url,
    )
    kw: dict[str, Any] = (
        {"middleware": overrides} if via == "put_identity" else {"native_user": user}
    )
    async with harness.serve(server, **kw) as live:
        v1 = await live.result("GetExtendedAgentCard", headers={"x-user": "carol"})
        v03 = await live.result(
            "agent/getAuthenticatedExtendedCard", version="0.3", headers={"x-user": "dave"}
        )
        anonymous = await live.error("GetExtendedAgentCard")
        anonymous_v03 = await live.error("agent/getAuthenticatedExtendedCard", version="0.3")
    assert v1["skills"][-1]["name"] == "For carol"
    assert urls_by_binding(v1) == {
        "JSONRPC": {harness.base_url + "/"},
        "HTTP+JSON": {harness.base_url},
    }
    assert v03["skills"][-1]["name"] == "For dave"
    assert v03["url"] == harness.base_url + "/"  # the v0.3 card shape: the JSON-RPC URL
    assert anonymous["code"] == -32004 and anonymous_v03["code"] == -32004


async def test_extended_card_for_anonymous_callers_by_choice(harness: Harness) -> None:
    """``extended_card_for_anonymous=True`` serves it to callers without an identity too (the
    card function gets ``None``); authenticated callers still get their own."""

    def overrides(headers: Any) -> Overrides:
        return Overrides(identity=headers.get("x-user"))

    seen: list[Any] = []

    def card_for(identity: Any) -> Any:
        seen.append(identity)
        return per_caller_card(identity or "anyone")

    server = A2AServer(
        echo,
        card=make_card(extended=True),
        extended_card=card_for,
        base_url=harness.base_url,
        protocol=ProtocolOptions(extended_card_for_anonymous=True),
    )
    async with harness.serve(server, middleware=overrides) as live:
        v1 = await live.result("GetExtendedAgentCard")
        v03 = await live.result("agent/getAuthenticatedExtendedCard", version="0.3")
        rest_v1 = await live.rest("GET", "/extendedAgentCard")
        rest_v03 = await live.rest("GET", "/v1/card", version=None)
        named = await live.result("GetExtendedAgentCard", headers={"x-user": "gus"})
    assert v1["skills"][-1]["name"] == "For anyone"
    assert v03["skills"][-1]["name"] == "For anyone"
    assert rest_v1.status_code == 200 and rest_v1.json()["skills"][-1]["name"] == "For anyone"
    assert rest_v03.status_code == 200, rest_v03.text
    assert named["skills"][-1]["name"] == "For gus"
    assert seen.count(None) == 4


async def test_extended_card_not_declared_or_not_configured(harness: Harness) -> None:
    def user(headers: Any) -> Overrides:
        return Overrides(identity="erin")

    server = A2AServer(echo, card=make_card(extended=True), base_url=harness.base_url)
    async with harness.serve(server, middleware=user) as live:
        not_configured = await live.error("GetExtendedAgentCard")
    assert not_configured["code"] == -32007


# --- v0.3 -----------------------------------------------------------------------------------


async def test_v03_send_get_and_multi_turn(harness: Harness) -> None:
    async with harness.serve(A2AServer(ask_then_answer, card=make_card())) as live:
        response = await live.post_rpc(
            "message/send", {"message": message_v03("hi")}, version="0.3"
        )
        first = response.json()["result"]
        second = await live.result(
            "message/send",
            {"message": message_v03("Ada", task_id=first["id"], mid="m2")},
            version="0.3",
        )
        got = await live.result("tasks/get", {"id": first["id"], "historyLength": 2}, version="0.3")
    assert response.headers["a2a-version"] == "0.3"
    assert first["kind"] == "task" and first["status"]["state"] == "input-required"
    assert second["id"] == first["id"] and second["status"]["state"] == "completed"
    assert second["artifacts"][0]["parts"] == [{"kind": "text", "text": "Hello, Ada!"}]
    assert got["kind"] == "task" and len(got["history"]) == 2


async def test_v03_method_without_a_version_header(harness: Harness) -> None:
    """No ``A2A-Version`` means 0.3; a v1.0 method is still served (not strict)."""
    async with harness.serve(A2AServer(echo, card=make_card())) as live:
        v03 = await live.post_rpc("message/send", {"message": message_v03()}, version=None)
        v1 = await live.post_rpc("SendMessage", send_params(), version=None)
    assert v03.headers["a2a-version"] == "0.3" and v03.json()["result"]["kind"] == "task"
    assert v1.headers["a2a-version"] == "1.0" and "task" in v1.json()["result"]


async def test_v03_streaming_send(harness: Harness) -> None:
    async with harness.serve(A2AServer(chunks, card=make_card())) as live:
        stream = await live.stream_rpc("message/stream", {"message": message_v03()}, version="0.3")
    results = [d["result"] for d in stream.data]
    assert stream.headers["a2a-version"] == "0.3"
    assert results[0]["kind"] == "task"
    assert [
        r["artifact"]["parts"][0]["text"] for r in results if r["kind"] == "artifact-update"
    ] == [
        "alpha",
        "beta",
        "gamma",
    ]
    assert results[-1]["kind"] == "status-update" and results[-1]["final"] is True
    assert results[-1]["status"]["state"] == "completed"


async def test_v03_cancel_and_resubscribe(harness: Harness) -> None:
    gate = Gate()
    async with harness.serve(A2AServer(gate, card=make_card())) as live:
        task = await live.result(
            "message/send",
            {"message": message_v03(), "configuration": {"blocking": False}},
            version="0.3",
        )
        await gate.started.wait()
        canceled = await live.result("tasks/cancel", {"id": task["id"]}, version="0.3")
        # Resubscribing to a finished task (v0.3): the final task, then the end.
        final = await live.stream_rpc("tasks/resubscribe", {"id": task["id"]}, version="0.3")
        again = await live.error("tasks/cancel", {"id": task["id"]}, version="0.3")
    assert canceled["kind"] == "task" and canceled["status"]["state"] == "canceled"
    assert [d["result"]["status"]["state"] for d in final.data] == ["canceled"]
    assert again["code"] == -32002
    assert not isinstance(again.get("data"), list)  # v0.3 errors carry no ErrorInfo array


async def test_v03_resubscribe_follows_a_running_task(harness: Harness) -> None:
    gate = Gate()
    async with harness.serve(A2AServer(gate, card=make_card())) as live:
        task = await live.result(
            "message/send",
            {"message": message_v03(), "configuration": {"blocking": False}},
            version="0.3",
        )
        await gate.started.wait()
        params = {"id": task["id"]}
        async with live.open_rpc_stream("tasks/resubscribe", params, version="0.3") as stream:
            snapshot = await stream.next_data()
            gate.open.set()
            rest = await stream.rest()
    assert snapshot.data["result"]["kind"] == "task" and snapshot.data["result"]["id"] == task["id"]
    last = rest[-1].data["result"]
    assert last["kind"] == "status-update" and last["final"] is True
    assert last["status"]["state"] == "completed"


async def test_v03_push_config_crud(harness: Harness) -> None:
    server = A2AServer(lambda ctx: InputRequired("?"), card=make_card(push=True))
    async with harness.serve(server) as live:
        task = (await live.result("SendMessage", send_params()))["task"]
        config = {"url": "https://hooks.example.com/b", "id": "hook-1", "token": "t"}
        created = await live.result(
            "tasks/pushNotificationConfig/set",
            {"taskId": task["id"], "pushNotificationConfig": config},
            version="0.3",
        )
        got = await live.result(
            "tasks/pushNotificationConfig/get",
            {"id": task["id"], "pushNotificationConfigId": "hook-1"},
            version="0.3",
        )
        listed = await live.result(
            "tasks/pushNotificationConfig/list", {"id": task["id"]}, version="0.3"
        )
        deleted = await live.result(
            "tasks/pushNotificationConfig/delete",
            {"id": task["id"], "pushNotificationConfigId": "hook-1"},
            version="0.3",
        )
        missing = await live.error(
            "tasks/pushNotificationConfig/get",
            {"id": task["id"], "pushNotificationConfigId": "hook-1"},
            version="0.3",
        )
    shown = {"url": "https://hooks.example.com/b", "id": "hook-1"}  # the token omitted
    assert created == {"taskId": task["id"], "pushNotificationConfig": shown}
    assert got == created
    assert listed == [created]
    assert deleted is None
    assert missing["code"] == -32001


# --- errors ---------------------------------------------------------------------------------


async def test_error_bodies_in_both_dialects(harness: Harness) -> None:
    async with harness.serve(A2AServer(echo, card=make_card())) as live:
        v1 = await live.rpc("GetTask", {"id": "no-such-task"}, id=5)
        v03 = await live.rpc("tasks/get", {"id": "no-such-task"}, id=6, version="0.3")
        unknown = await live.rpc("tasks/frobnicate", {}, id=7)
        bad_params = await live.error("GetTask", {"id": 12})
        negative = await live.error("GetTask", {"id": "x", "historyLength": -1})
    assert v1["id"] == 5 and v1["error"]["code"] == -32001
    info = v1["error"]["data"][0]
    assert (info["@type"], info["reason"], info["domain"]) == (
        ERROR_INFO,
        "TASK_NOT_FOUND",
        "a2a-protocol.org",
    )
    assert v03["id"] == 6 and v03["error"]["code"] == -32001
    assert not isinstance(v03["error"].get("data"), list)
    assert unknown["id"] == 7 and unknown["error"]["code"] == -32601
    assert bad_params["code"] == -32602 and negative["code"] == -32602


async def test_agent_failures_leak_nothing(harness: Harness) -> None:
    async def broken(ctx: TaskContext) -> str:
        raise RuntimeError("secret database password in here")

    async with harness.serve(A2AServer(broken, card=make_card()), expect_errors=True) as live:
        response = await live.post_rpc("SendMessage", send_params())
        stream = await live.stream_rpc("SendStreamingMessage", send_params(mid="m2"))
        after = await live.result("ListTasks", {})
    # The details go to the server's log, and only there.
    assert {r.name for r in live.errors} == {"a2a_core.server"}
    assert all(r.exc_info and "secret" in str(r.exc_info[1]) for r in live.errors)
    body = response.text + stream.raw.decode()
    assert response.json()["result"]["task"]["status"]["state"] == "TASK_STATE_FAILED"
    assert stream.data[-1]["result"]["statusUpdate"]["status"]["state"] == "TASK_STATE_FAILED"
    assert "secret" not in body and "RuntimeError" not in body and "Traceback" not in body
    assert after["totalSize"] == 2


async def test_malformed_requests(harness: Harness) -> None:
    async with harness.serve(A2AServer(echo, card=make_card())) as live:
        headers = {"content-type": "application/json", "a2a-version": "1.0"}
        not_json = await live.client.post(live.url("/"), content=b"{not json", headers=headers)
        truncated = await live.client.post(
            live.url("/"), content=b'{"jsonrpc":"2.0","id":1,"method":"Send', headers=headers
        )
        not_rpc = await live.client.post(live.url("/"), content=b'{"id": 1}', headers=headers)
        empty = await live.client.post(live.url("/"), content=b"", headers=headers)
        batch = await live.client.post(live.url("/"), content=b"[]", headers=headers)
        fine = await live.result("SendMessage", send_params())
    for response in (not_json, truncated):
        assert response.status_code == 200
        doc = response.json()
        assert doc["error"]["code"] == -32700 and doc["id"] is None
    assert not_rpc.json()["error"]["code"] == -32600
    assert empty.json()["error"]["code"] in (-32700, -32600)
    assert batch.json()["error"]["code"] == -32600
    assert fine["task"]["status"]["state"] == "TASK_STATE_COMPLETED"  # still serving


async def test_unicode_survives_the_round_trip(harness: Harness) -> None:
    async with harness.serve(A2AServer(echo, card=make_card())) as live:
        text = "héllo wörld ✓ 日本語 \U0001f600"
        response = await live.post_rpc("SendMessage", send_params(text))
    task = json.loads(response.content)["result"]["task"]
    assert task["artifacts"][0]["parts"] == [{"text": f"echo: {text}"}]
