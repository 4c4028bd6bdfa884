"""Idempotent sends (issue "work that survives"): a message sent again by the same caller is
answered with what it started, and the agent runs once; through ``A2AServer.handle``.

Sequential and concurrent copies, blocking, non-blocking and streaming; a follow-up sent
again; a ``messageId`` reused for another message, by another caller or in another tenant
(new work, as before); and the switch that turns it off. Across replicas as processes:
tests/sql/test_durable.py.
"""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from a2a_core.server import A2AServer, InputRequired, RecoveryPolicy, TaskContext
from helpers.a2a_client import Client, make_card, user_message

pytestmark = pytest.mark.anyio

HANG_GUARD = 20  # seconds: only against a hang


def send(text: str, mid: str, **configuration: Any) -> dict[str, Any]:
    params: dict[str, Any] = {"message": user_message(text, mid=mid)}
    if configuration:
        params["configuration"] = configuration
    return params


class Counting:
    """An agent that counts its runs, and may be held mid-run."""

    def __init__(self) -> None:
        self.runs = 0
        self.release = anyio.Event()
        self.hold = False

    async def __call__(self, ctx: TaskContext) -> str:
        self.runs += 1
        await ctx.working("on it")
        if self.hold:
            await self.release.wait()
        return f"answer to {ctx.text}"


async def test_a_message_sent_again_is_answered_with_its_task_and_runs_once() -> None:
    agent = Counting()
    server = A2AServer(agent, card=make_card())
    with anyio.fail_after(HANG_GUARD):
        async with server:
            client = Client(server)
            first = await client.result("SendMessage", send("hi", "m-1"))
            again = await client.result("SendMessage", send("hi", "m-1"))
            immediate = await client.result(
                "SendMessage", send("hi", "m-1", returnImmediately=True)
            )
    assert agent.runs == 1
    assert again == first
    assert immediate["task"]["id"] == first["task"]["id"]
    assert first["task"]["status"]["state"] == "TASK_STATE_COMPLETED"


async def test_copies_sent_at_once_run_the_agent_once_and_get_the_same_answer() -> None:
    agent = Counting()
    agent.hold = True
    server = A2AServer(agent, card=make_card())
    answers: list[Any] = []
    with anyio.fail_after(HANG_GUARD):
        async with server:
            client = Client(server)

            async def blocking() -> None:
                answers.append(await client.result("SendMessage", send("hi", "m-1")))

            async with anyio.create_task_group() as group:
                for _ in range(5):
                    group.start_soon(blocking)
                await anyio.sleep(0.1)
                agent.release.set()
    assert agent.runs == 1
    assert len({a["task"]["id"] for a in answers}) == 1
    assert {a["task"]["status"]["state"] for a in answers} == {"TASK_STATE_COMPLETED"}


async def test_a_blocking_copy_of_a_running_task_waits_for_it_to_settle() -> None:
    agent = Counting()
    agent.hold = True
    server = A2AServer(agent, card=make_card())
    with anyio.fail_after(HANG_GUARD):
        async with server:
            client = Client(server)
            started = await client.result("SendMessage", send("hi", "m-1", returnImmediately=True))
            async with anyio.create_task_group() as group:
                answers: list[Any] = []

                async def blocking() -> None:
                    answers.append(await client.result("SendMessage", send("hi", "m-1")))

                group.start_soon(blocking)
                await anyio.sleep(0.1)
                assert not answers  # still waiting, as the first copy would
                agent.release.set()
    assert agent.runs == 1
    assert answers[0]["task"]["id"] == started["task"]["id"]
    assert answers[0]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"


async def test_a_stream_sent_again_gets_the_same_events() -> None:
    agent = Counting()
    server = A2AServer(agent, card=make_card())
    with anyio.fail_after(HANG_GUARD):
        async with server:
            client = Client(server)
            first = await client.stream("SendStreamingMessage", send("hi", "s-1"))
            again = await client.stream("SendStreamingMessage", send("hi", "s-1"))
    assert agent.runs == 1
    assert again == first
    assert len(first) >= 3  # submitted, working, the artifact, completed


async def test_a_follow_up_sent_again_is_not_run_again() -> None:
    runs: list[str] = []

    async def agent(ctx: TaskContext) -> str | InputRequired:
        runs.append(ctx.text)
        if not ctx.is_follow_up:
            return InputRequired("your name?")
        return f"hello {ctx.text}"

    server = A2AServer(agent, card=make_card())
    with anyio.fail_after(HANG_GUARD):
        async with server:
            client = Client(server)
            asked = await client.result("SendMessage", send("hi", "m-1"))
            task_id = asked["task"]["id"]
            follow_up = {"message": user_message("Ada", mid="m-2", task_id=task_id)}
            answered = await client.result("SendMessage", follow_up)
            again = await client.result("SendMessage", follow_up)
    assert runs == ["hi", "Ada"]
    assert answered["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
    assert again == answered  # not "Task is completed": the same answer


async def test_a_message_id_reused_for_other_work_starts_new_work() -> None:
    agent = Counting()

    def owner(call: Any) -> str:
        return str(call.request.metadata.get("caller", ""))

    server = A2AServer(agent, card=make_card(), task_owner=owner)
    with anyio.fail_after(HANG_GUARD):
        async with server:
            client = Client(server)
            first = await client.result("SendMessage", send("hi", "m-1"))
            other_text = await client.result("SendMessage", send("bye", "m-1"))
            other_caller = await client.result(
                "SendMessage", {**send("hi", "m-1"), "metadata": {"caller": "bob"}}
            )
            other_tenant = await client.result("SendMessage", {**send("hi", "m-1"), "tenant": "t2"})
    assert agent.runs == 4
    ids = {first["task"]["id"], other_text["task"]["id"], other_caller["task"]["id"]}
    assert len(ids | {other_tenant["task"]["id"]}) == 4


async def test_idempotent_sends_can_be_turned_off() -> None:
    agent = Counting()
    server = A2AServer(agent, card=make_card(), recovery=RecoveryPolicy(idempotent_sends=False))
    with anyio.fail_after(HANG_GUARD):
        async with server:
            client = Client(server)
            first = await client.result("SendMessage", send("hi", "m-1"))
            again = await client.result("SendMessage", send("hi", "m-1"))
    assert agent.runs == 2
    assert first["task"]["id"] != again["task"]["id"]


async def test_the_first_message_sent_again_while_a_follow_up_runs_is_not_run_again() -> None:
    runs: list[str] = []
    release = anyio.Event()

    async def agent(ctx: TaskContext) -> str | InputRequired:
        runs.append(ctx.text)
        if not ctx.is_follow_up:
            return InputRequired("your name?")
        await release.wait()
        return f"hello {ctx.text}"

    server = A2AServer(agent, card=make_card())
    with anyio.fail_after(HANG_GUARD):
        async with server:
            client = Client(server)
            first = send("hi", "m-1")
            task_id = (await client.result("SendMessage", first))["task"]["id"]
            follow_up = {
                "message": user_message("Ada", mid="m-2", task_id=task_id),
                "configuration": {"returnImmediately": True},
            }
            await client.result("SendMessage", follow_up)
            # While the follow-up runs: the first message again, and the follow-up again.
            again = await client.result("SendMessage", send("hi", "m-1", returnImmediately=True))
            copy = await client.result("SendMessage", follow_up)
            release.set()
            done = await client.result("SendMessage", send("hi", "m-1"))
    assert runs == ["hi", "Ada"]
    assert again["task"]["id"] == copy["task"]["id"] == task_id
    assert done["task"]["status"]["state"] == "TASK_STATE_COMPLETED"


async def test_after_the_window_the_same_message_is_new_work() -> None:
    agent = Counting()
    server = A2AServer(agent, card=make_card(), recovery=RecoveryPolicy(idempotency_window=0.2))
    with anyio.fail_after(HANG_GUARD):
        async with server:
            client = Client(server)
            first = await client.result("SendMessage", send("probe", "fixed"))
            soon = await client.result("SendMessage", send("probe", "fixed"))
            await anyio.sleep(0.4)
            later = await client.result("SendMessage", send("probe", "fixed"))
    assert agent.runs == 2
    assert soon["task"]["id"] == first["task"]["id"] != later["task"]["id"]
    with pytest.raises(ValueError, match="idempotency_window"):
        RecoveryPolicy(idempotency_window=0)
