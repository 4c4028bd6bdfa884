"""Tasks are owned by the caller that created them (issue "safe by default", item 1).

Driven through ``A2AServer.handle`` with the identity an adapter or middleware would set,
under asyncio and trio, on both writer paths (the runtime conftest), on JSON-RPC and REST,
in both dialects. Another caller's task must look exactly like a missing one.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pytest
from starlette.authentication import SimpleUser

from a2a_core.call import Call
from a2a_core.http import HttpResponse
from a2a_core.server import ANONYMOUS_OWNER, A2AServer, InputRequired, TaskContext, owner_key
from helpers.a2a_client import Client, make_card, user_message

pytestmark = pytest.mark.anyio


async def waits(ctx: TaskContext) -> Any:
    return InputRequired("more?")


def send_params(text: str = "hi", **kw: Any) -> dict[str, Any]:
    return {"message": user_message(text, **kw)}


async def not_found_answers(client: Client, task_id: str, config_id: str) -> list[dict[str, Any]]:
    """Every operation on one task, as ``client``: the error objects."""
    return [
        await client.error("GetTask", {"id": task_id}),
        await client.error("CancelTask", {"id": task_id}),
        await client.error("SubscribeToTask", {"id": task_id}),
        await client.error("SendMessage", send_params(task_id=task_id, mid="m-other")),
        await client.error(
            "CreateTaskPushNotificationConfig",
            {"taskId": task_id, "url": "https://example.com/other"},
        ),
        await client.error("ListTaskPushNotificationConfigs", {"taskId": task_id}),
        await client.error("GetTaskPushNotificationConfig", {"taskId": task_id, "id": config_id}),
        await client.error(
            "DeleteTaskPushNotificationConfig", {"taskId": task_id, "id": config_id}
        ),
    ]


async def test_another_caller_gets_task_not_found_for_every_operation() -> None:
    async with A2AServer(waits, card=make_card()) as server:
        alice, bob = Client(server, identity="alice"), Client(server, identity="bob")
        anonymous = Client(server)
        task = (await alice.result("SendMessage", send_params()))["task"]
        config = await alice.result(
            "CreateTaskPushNotificationConfig",
            {"taskId": task["id"], "url": "https://example.com/alice"},
        )
        missing = await bob.error("GetTask", {"id": "no-such-task"})
        by_bob = await not_found_answers(bob, task["id"], config["id"])
        by_anonymous = await not_found_answers(anonymous, task["id"], config["id"])
        # Nothing bob or the anonymous caller did changed alice's task or its webhook.
        after = await alice.result("GetTask", {"id": task["id"]})
        still_there = await alice.result(
            "GetTaskPushNotificationConfig", {"taskId": task["id"], "id": config["id"]}
        )
    for error in by_bob + by_anonymous:
        assert error["code"] == -32001
        assert error["message"] == missing["message"]
    assert after["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
    assert len(after["history"]) == 1  # bob's follow-up was not recorded
    assert still_there["id"] == config["id"]


async def test_list_tasks_lists_the_callers_own_tasks_with_their_total_and_pages() -> None:
    async with A2AServer(waits, card=make_card()) as server:
        alice, bob = Client(server, identity="alice"), Client(server, identity="bob")
        anonymous = Client(server)
        alice_ids = [
            (await alice.result("SendMessage", send_params(mid=f"a{i}")))["task"]["id"]
            for i in range(5)
        ]
        bob_ids = [
            (await bob.result("SendMessage", send_params(mid=f"b{i}")))["task"]["id"]
            for i in range(3)
        ]
        first = await alice.result("ListTasks", {"pageSize": 2})
        second = await alice.result(
            "ListTasks", {"pageSize": 2, "pageToken": first["nextPageToken"]}
        )
        third = await alice.result(
            "ListTasks", {"pageSize": 2, "pageToken": second["nextPageToken"]}
        )
        bobs = await bob.result("ListTasks", {})
        bob_in_context = await bob.result(
            "ListTasks", {"contextId": first["tasks"][0]["contextId"]}
        )
        anonymous_list = await anonymous.result("ListTasks", {})
        # A token is bound to its owner: bob cannot page through alice's list with it.
        stolen = await bob.error("ListTasks", {"pageSize": 2, "pageToken": first["nextPageToken"]})
    listed = [t["id"] for page in (first, second, third) for t in page["tasks"]]
    assert sorted(listed) == sorted(alice_ids)
    assert first["totalSize"] == 5 and third["nextPageToken"] == ""
    assert sorted(t["id"] for t in bobs["tasks"]) == sorted(bob_ids) and bobs["totalSize"] == 3
    assert bob_in_context["tasks"] == [] and bob_in_context["totalSize"] == 0
    assert anonymous_list["tasks"] == [] and anonymous_list["totalSize"] == 0
    assert stolen["code"] == -32602


async def test_list_tasks_with_a_state_filter_counts_only_the_callers_tasks() -> None:
    async def agent(ctx: TaskContext) -> Any:
        return "done" if ctx.text == "finish" else InputRequired("more?")

    async with A2AServer(agent, card=make_card()) as server:
        alice, bob = Client(server, identity="alice"), Client(server, identity="bob")
        await alice.result("SendMessage", send_params("finish", mid="a1"))
        await alice.result("SendMessage", send_params("wait", mid="a2"))
        await bob.result("SendMessage", send_params("finish", mid="b1"))
        done = await alice.result("ListTasks", {"status": "TASK_STATE_COMPLETED"})
    assert done["totalSize"] == 1 and len(done["tasks"]) == 1


async def test_anonymous_callers_share_one_owner() -> None:
    async with A2AServer(waits, card=make_card()) as server:
        one, other = Client(server), Client(server)
        task = (await one.result("SendMessage", send_params()))["task"]
        got = await other.result("GetTask", {"id": task["id"]})
        listed = await other.result("ListTasks", {})
        followed = await other.result("SendMessage", send_params(task_id=task["id"], mid="m2"))
        stored = await server.backend.store.get(task["id"])
    assert got["id"] == task["id"] and listed["totalSize"] == 1
    assert followed["task"]["id"] == task["id"]
    assert stored is not None and stored.owner == ANONYMOUS_OWNER


async def test_the_stored_task_records_its_owner_and_tenant() -> None:
    async with A2AServer(waits, card=make_card()) as server:
        task = (await Client(server, identity="alice").result("SendMessage", send_params()))["task"]
        stored = await server.backend.store.get(task["id"])
    assert stored is not None and stored.owner == "alice" and stored.tenant == ""


async def test_rest_and_v0_3_refuse_another_callers_task_too() -> None:
    async with A2AServer(waits, card=make_card()) as server:
        alice = Client(server, identity="alice")
        bob_rest, bob_v03 = (
            Client(server, identity="bob"),
            Client(server, identity="bob", version="0.3"),
        )
        task = (await alice.result("SendMessage", send_params()))["task"]
        got = await server.handle(bob_rest.request("GET", f"/tasks/{task['id']}"))
        canceled = await server.handle(bob_rest.request("POST", f"/tasks/{task['id']}:cancel"))
        listed = await server.handle(bob_rest.request("GET", "/tasks"))
        legacy = await bob_v03.rpc("tasks/get", {"id": task["id"]})
        mine = await server.handle(
            Client(server, identity="alice").request("GET", f"/tasks/{task['id']}")
        )
    assert isinstance(got, HttpResponse) and got.status == 404
    assert isinstance(canceled, HttpResponse) and canceled.status == 404
    assert isinstance(listed, HttpResponse) and json.loads(listed.body)["totalSize"] == 0
    assert legacy["error"]["code"] == -32001
    assert isinstance(mine, HttpResponse) and mine.status == 200


async def test_ownership_off_lets_every_caller_act_on_every_task() -> None:
    async with A2AServer(waits, card=make_card(), task_owner=None) as server:
        alice, bob = Client(server, identity="alice"), Client(server, identity="bob")
        task = (await alice.result("SendMessage", send_params()))["task"]
        got = await bob.result("GetTask", {"id": task["id"]})
        listed = await bob.result("ListTasks", {})
        stored = await server.backend.store.get(task["id"])
    assert got["id"] == task["id"] and listed["totalSize"] == 1
    assert stored is not None and stored.owner == ""


async def test_a_key_function_decides_who_shares_tasks() -> None:
    def by_team(call: Call) -> str:
        return str(call.identity["team"]) if call.identity else ""

    async with A2AServer(waits, card=make_card(), task_owner=by_team) as server:
        ann = Client(server, identity={"sub": "ann", "team": "red"})
        ben = Client(server, identity={"sub": "ben", "team": "red"})
        cat = Client(server, identity={"sub": "cat", "team": "blue"})
        task = (await ann.result("SendMessage", send_params()))["task"]
        same_team = await ben.result("GetTask", {"id": task["id"]})
        other_team = await cat.error("GetTask", {"id": task["id"]})
    assert same_team["id"] == task["id"]
    assert other_team["code"] == -32001


async def test_ownership_and_authorize_task_must_both_allow() -> None:
    def never_cancel(operation: str, task: Any, call: Any) -> bool:
        return operation != "cancel"

    async with A2AServer(waits, card=make_card(), authorize_task=never_cancel) as server:
        alice, bob = Client(server, identity="alice"), Client(server, identity="bob")
        task = (await alice.result("SendMessage", send_params()))["task"]
        owner_denied_by_hook = await alice.error("CancelTask", {"id": task["id"]})
        hook_allows_not_owner = await bob.error("GetTask", {"id": task["id"]})
        both_allow = await alice.result("GetTask", {"id": task["id"]})
    assert owner_denied_by_hook["code"] == -32001
    assert hook_allows_not_owner["code"] == -32001
    assert both_allow["id"] == task["id"]


@dataclass
class Principal:
    username: str


@pytest.mark.parametrize(
    ("identity", "key"),
    [
        (None, ""),
        ("alice", "alice"),
        (42, "42"),
        ({"sub": "s-1", "id": "ignored"}, "s-1"),
        ({"id": 7}, "7"),
        (Principal("bob"), "bob"),
        (SimpleUser("carol"), "carol"),  # Starlette's user: identity raises, username works
    ],
)
def test_owner_key_of_the_usual_identities(identity: Any, key: str) -> None:
    assert owner_key(identity) == key


@pytest.mark.parametrize("identity", [object(), {"name": "x"}, True, 1.5])
def test_an_identity_without_a_key_is_refused_rather_than_guessed(identity: Any) -> None:
    with pytest.raises(TypeError, match="task_owner"):
        owner_key(identity)


async def test_a_server_whose_identities_have_no_key_answers_internal_error() -> None:
    async with A2AServer(waits, card=make_card()) as server:
        error = await Client(server, identity=object()).error("SendMessage", send_params())
        listing = await Client(server, identity=object()).error("ListTasks", {})
    assert error["code"] == -32603 and listing["code"] == -32603
    assert "task_owner" not in error["message"]  # details go to the log, not to the client


def test_verified_identities_are_keyed_by_authority_and_subject() -> None:
    from a2a_core.security import AuthenticatedIdentity
    from a2a_core.server import owner_key

    a = AuthenticatedIdentity(subject="alice", scheme="bearer", issuer="https://one")
    b = AuthenticatedIdentity(subject="alice", scheme="bearer", issuer="https://two")
    key = AuthenticatedIdentity(subject="alice", scheme="apiKey")
    # A subject and an authority that would concatenate alike stay apart.
    tricky = AuthenticatedIdentity(subject="e|alice", scheme="bearer", issuer="https://on")
    keys = {owner_key(i) for i in (a, b, key, tricky)}
    assert len(keys) == 4
    assert owner_key(a) == owner_key(
        AuthenticatedIdentity(subject="alice", scheme="x", issuer="https://one")
    )
    assert "alice" not in {owner_key(i) for i in (a, key)}
