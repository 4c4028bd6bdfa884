"""The runtime through its one entry point, ``A2AServer.handle``, under asyncio and trio.

Every test builds requests as bytes (as an adapter would), runs a real agent, and checks the
replies and the stored task. Nothing of ours is mocked; no test asserts a duration.
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator
from typing import Any

import anyio
import msgspec
import pytest

from a2a_core.errors import ContentTypeNotSupportedError
from a2a_core.http import HttpResponse
from a2a_core.protocol import ProtocolOptions
from a2a_core.server import (
    A2AServer,
    AuthRequired,
    InMemoryBackend,
    InputRequired,
    StreamOptions,
    TaskContext,
    TimestampExtension,
)
from a2a_core.sse import parse_frames
from a2a_core.types import Message, Part, Role
from helpers.a2a_client import Client, collect, make_card, rpc_body, user_message

pytestmark = pytest.mark.anyio


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


async def echo(ctx: TaskContext) -> str:
    return f"echo: {ctx.text}"


def send_params(text: str = "hi", **kw: Any) -> dict[str, Any]:
    config = kw.pop("configuration", None)
    params: dict[str, Any] = {"message": user_message(text, **kw)}
    if config is not None:
        params["configuration"] = config
    return params


async def test_echo_completes_a_task_with_an_artifact() -> None:
    async with A2AServer(echo, card=make_card()) as server:
        result = await Client(server).result("SendMessage", send_params("hello"))
    task = result["task"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    assert task["artifacts"][0]["parts"] == [{"text": "echo: hello"}]
    assert task["history"][0]["parts"] == [{"text": "hello"}]
    assert task["contextId"] and task["history"][0]["contextId"] == task["contextId"]
    assert task["history"][0]["taskId"] == task["id"]


async def test_the_backend_passed_in_holds_the_state() -> None:
    # Its (empty, so falsy) event log is the one written to, not a new one.
    backend = InMemoryBackend()
    async with A2AServer(echo, card=make_card(), backend=backend) as server:
        result = await Client(server).result("SendMessage", send_params("hello"))
    assert (await backend.store.get(result["task"]["id"])) is not None
    events = await backend.event_log.read(result["task"]["id"])
    assert [e.seq for e in events] == [1, 2, 3]
    assert events[-1].event.status_update is not None


async def test_v0_3_send_gets_a_v0_3_task() -> None:
    params = {
        "message": {
            "kind": "message",
            "messageId": "m",
            "role": "user",
            "parts": [{"kind": "text", "text": "yo"}],
        }
    }
    async with A2AServer(echo, card=make_card()) as server:
        result = await Client(server, version="0.3").result("message/send", params)
    assert result["kind"] == "task"
    assert result["status"]["state"] == "completed"
    assert result["artifacts"][0]["parts"] == [{"kind": "text", "text": "echo: yo"}]


async def test_a_message_reply_creates_no_task() -> None:
    async def reply(ctx: TaskContext) -> Message:
        return Message(message_id="r1", role=Role.AGENT, parts=[Part(text="just a message")])

    async with A2AServer(reply, card=make_card()) as server:
        client = Client(server)
        result = await client.result("SendMessage", send_params(context_id="ctx-1"))
        listed = await client.result("ListTasks", {})
    assert result == {
        "message": {
            "messageId": "r1",
            "contextId": "ctx-1",
            "role": "ROLE_AGENT",
            "parts": [{"text": "just a message"}],
        }
    }
    assert listed["tasks"] == [] and listed["totalSize"] == 0


async def test_client_context_id_is_kept_and_reference_task_ids_pass_through() -> None:
    seen: list[list[str]] = []

    async def agent(ctx: TaskContext) -> str:
        seen.append(ctx.message.reference_task_ids)
        return "ok"

    async with A2AServer(agent, card=make_card()) as server:
        params = send_params(context_id="my-context")
        params["message"]["referenceTaskIds"] = ["t-old"]
        task = (await Client(server).result("SendMessage", params))["task"]
    assert task["contextId"] == "my-context"
    assert seen == [["t-old"]]


async def test_multi_turn_continues_the_same_task() -> None:
    async def agent(ctx: TaskContext) -> Any:
        if not ctx.is_follow_up:
            return InputRequired("What is your name?")
        return f"Hello, {ctx.text}!"

    async with A2AServer(agent, card=make_card()) as server:
        client = Client(server)
        first = (await client.result("SendMessage", send_params("hi")))["task"]
        assert first["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
        assert first["status"]["message"]["parts"] == [{"text": "What is your name?"}]
        second = (
            await client.result("SendMessage", send_params("Ada", task_id=first["id"], mid="m2"))
        )["task"]
    assert second["id"] == first["id"] and second["contextId"] == first["contextId"]
    assert second["status"]["state"] == "TASK_STATE_COMPLETED"
    assert second["artifacts"][0]["parts"] == [{"text": "Hello, Ada!"}]
    texts = [m["parts"][0]["text"] for m in second["history"]]
    assert texts == ["hi", "What is your name?", "Ada"]


async def test_an_answer_waits_for_the_agent_that_asked_to_return() -> None:
    # The agent asks, then takes a moment to return (as a bridged executor unwinds): the
    # answer that comes meanwhile waits for it and continues the task.
    returning = anyio.Event()

    async def agent(ctx: TaskContext) -> Any:
        if ctx.is_follow_up:
            return f"Hello, {ctx.text}!"
        await ctx.input_required("What is your name?")
        await anyio.sleep(0.3)
        returning.set()
        return None

    async with A2AServer(agent, card=make_card()) as server:
        client = Client(server)
        first = (await client.result("SendMessage", send_params("hi")))["task"]
        assert first["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
        assert not returning.is_set()  # the agent is still running
        second = (
            await client.result("SendMessage", send_params("Ada", task_id=first["id"], mid="m2"))
        )["task"]
    assert returning.is_set()
    assert second["status"]["state"] == "TASK_STATE_COMPLETED"
    assert second["artifacts"][0]["parts"] == [{"text": "Hello, Ada!"}]


async def test_a_message_to_a_task_its_agent_is_busy_with_is_refused() -> None:
    release = anyio.Event()

    async def agent(ctx: TaskContext) -> Any:
        await ctx.working()
        await release.wait()
        return "done"

    async with A2AServer(agent, card=make_card()) as server:
        client = Client(server)
        config = {"returnImmediately": True}
        task = (await client.result("SendMessage", send_params(configuration=config)))["task"]
        with anyio.fail_after(10):
            refused = await client.error(
                "SendMessage", send_params("more", task_id=task["id"], mid="m2")
            )
        release.set()
    assert refused["code"] == -32004
    assert "still processing" in refused["message"]


async def test_follow_up_errors() -> None:
    async with A2AServer(echo, card=make_card()) as server:
        client = Client(server)
        done = (await client.result("SendMessage", send_params()))["task"]
        terminal = await client.error("SendMessage", send_params(task_id=done["id"], mid="m2"))
        unknown = await client.error("SendMessage", send_params(task_id="no-such-task"))
        mismatch = await client.error(
            "SendMessage", send_params(task_id=done["id"], context_id="other")
        )
    assert terminal["code"] == -32004
    assert unknown["code"] == -32001
    assert mismatch["code"] in (-32004, -32602)


async def test_context_mismatch_on_an_open_task_is_invalid_params() -> None:
    async with A2AServer(lambda ctx: InputRequired("more?"), card=make_card()) as server:
        client = Client(server)
        task = (await client.result("SendMessage", send_params()))["task"]
        error = await client.error(
            "SendMessage", send_params(task_id=task["id"], context_id="other", mid="m2")
        )
    assert error["code"] == -32602


async def test_return_immediately_returns_while_the_agent_runs_on() -> None:
    release = anyio.Event()

    async def slow(ctx: TaskContext) -> str:
        await ctx.working("started")
        await release.wait()
        return "finished"

    async with A2AServer(slow, card=make_card()) as server:
        client = Client(server)
        task = (
            await client.result(
                "SendMessage", send_params(configuration={"returnImmediately": True})
            )
        )["task"]
        assert task["status"]["state"] in ("TASK_STATE_SUBMITTED", "TASK_STATE_WORKING")
        release.set()
        with anyio.fail_after(5):
            while True:
                got = await client.result("GetTask", {"id": task["id"]})
                if got["status"]["state"] == "TASK_STATE_COMPLETED":
                    break
                await anyio.sleep(0.01)
    assert got["artifacts"][0]["parts"] == [{"text": "finished"}]


async def test_v0_3_blocking_false_returns_immediately() -> None:
    release = anyio.Event()

    async def slow(ctx: TaskContext) -> str:
        await release.wait()
        return "done"

    params = {
        "message": {
            "kind": "message",
            "messageId": "m",
            "role": "user",
            "parts": [{"kind": "text", "text": "x"}],
        },
        "configuration": {"blocking": False},
    }
    async with A2AServer(slow, card=make_card()) as server:
        result = await Client(server, version="0.3").result("message/send", params)
        release.set()
    assert result["kind"] == "task"
    assert result["status"]["state"] == "submitted"


async def test_history_length_limits_the_returned_history() -> None:
    async with A2AServer(lambda ctx: InputRequired("again?"), card=make_card()) as server:
        client = Client(server)
        task = (await client.result("SendMessage", send_params("one")))["task"]
        await client.result("SendMessage", send_params("two", task_id=task["id"], mid="m2"))
        none = await client.result("GetTask", {"id": task["id"], "historyLength": 0})
        last = await client.result("GetTask", {"id": task["id"], "historyLength": 1})
        full = await client.result("GetTask", {"id": task["id"]})
        negative = await client.error("GetTask", {"id": task["id"], "historyLength": -1})
    assert "history" not in none
    assert [m["parts"][0]["text"] for m in last["history"]] == ["two"]
    assert [m["parts"][0]["text"] for m in full["history"]] == ["one", "again?", "two"]
    assert negative["code"] == -32602


async def chunks(ctx: TaskContext) -> AsyncIterator[str]:
    for word in ["alpha", "beta", "gamma"]:
        yield word


async def test_streaming_generator_sends_snapshot_chunks_and_final_status() -> None:
    async with A2AServer(chunks, card=make_card()) as server:
        frames = await Client(server).stream("SendStreamingMessage", send_params())
    results = [data["result"] for _, data in frames]
    assert list(results[0]) == ["task"]
    assert results[0]["task"]["status"]["state"] == "TASK_STATE_SUBMITTED"
    updates = [r["artifactUpdate"] for r in results[1:4]]
    assert [u["artifact"]["parts"][0]["text"] for u in updates] == ["alpha", "beta", "gamma"]
    assert [u.get("append", False) for u in updates] == [False, True, True]
    assert len({u["artifact"]["artifactId"] for u in updates}) == 1
    assert results[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"
    ids = [int(i) for i, _ in frames if i is not None]
    assert ids == sorted(ids) and len(ids) == len(frames)


async def test_streamed_artifact_is_stored_whole() -> None:
    async with A2AServer(chunks, card=make_card()) as server:
        client = Client(server)
        frames = await client.stream("SendStreamingMessage", send_params())
        task_id = frames[0][1]["result"]["task"]["id"]
        stored = await client.result("GetTask", {"id": task_id})
    assert [p["text"] for p in stored["artifacts"][0]["parts"]] == ["alpha", "beta", "gamma"]


async def test_v0_3_stream_marks_the_last_event_final() -> None:
    params = {
        "message": {
            "kind": "message",
            "messageId": "m",
            "role": "user",
            "parts": [{"kind": "text", "text": "x"}],
        }
    }
    async with A2AServer(chunks, card=make_card()) as server:
        frames = await Client(server, version="0.3").stream("message/stream", params)
    kinds = [data["result"]["kind"] for _, data in frames]
    assert kinds[0] == "task" and kinds[-1] == "status-update"
    assert frames[-1][1]["result"]["final"] is True
    assert all(
        not d["result"].get("final")
        for _, d in frames[:-1]
        if d["result"]["kind"] == "status-update"
    )


async def test_message_only_stream_is_one_message() -> None:
    async def reply(ctx: TaskContext) -> Message:
        return Message(message_id="r", role=Role.AGENT, parts=[Part(text="hey")])

    async with A2AServer(reply, card=make_card()) as server:
        frames = await Client(server).stream("SendStreamingMessage", send_params())
    assert len(frames) == 1
    assert frames[0][1]["result"]["message"]["parts"] == [{"text": "hey"}]


async def test_streaming_is_refused_without_the_capability() -> None:
    async with A2AServer(chunks, card=make_card(streaming=False)) as server:
        error = await Client(server).error("SendStreamingMessage", send_params())
    assert error["code"] == -32004


async def test_cancel_stops_the_agent_and_cancel_again_fails() -> None:
    cancelled = anyio.Event()

    async def forever(ctx: TaskContext) -> None:
        await ctx.working()
        try:
            await anyio.sleep_forever()
        finally:
            cancelled.set()

    async with A2AServer(forever, card=make_card()) as server:
        client = Client(server)
        task = (
            await client.result(
                "SendMessage", send_params(configuration={"returnImmediately": True})
            )
        )["task"]
        canceled = await client.result("CancelTask", {"id": task["id"]})
        again = await client.error("CancelTask", {"id": task["id"]})
        stored = await client.result("GetTask", {"id": task["id"]})
    assert cancelled.is_set()
    assert canceled["status"]["state"] == "TASK_STATE_CANCELED"
    assert stored["status"]["state"] == "TASK_STATE_CANCELED"
    assert again["code"] == -32002


async def test_cancel_of_a_completed_or_unknown_task() -> None:
    async with A2AServer(echo, card=make_card()) as server:
        client = Client(server)
        task = (await client.result("SendMessage", send_params()))["task"]
        done = await client.error("CancelTask", {"id": task["id"]})
        unknown = await client.error("CancelTask", {"id": "nope"})
    assert done["code"] == -32002
    assert unknown["code"] == -32001


async def test_cancel_of_an_interrupted_task() -> None:
    async with A2AServer(lambda ctx: InputRequired("?"), card=make_card()) as server:
        client = Client(server)
        task = (await client.result("SendMessage", send_params()))["task"]
        canceled = await client.result("CancelTask", {"id": task["id"]})
    assert canceled["status"]["state"] == "TASK_STATE_CANCELED"


async def test_late_agent_events_never_overwrite_cancel() -> None:
    proceed = anyio.Event()
    finished = anyio.Event()

    async def stubborn(ctx: TaskContext) -> None:
        await ctx.working()
        with anyio.CancelScope(shield=True):  # ignores cancellation
            await proceed.wait()
            await ctx.artifact("too late")
            await ctx.complete("done anyway")
            finished.set()

    async with A2AServer(stubborn, card=make_card()) as server:
        client = Client(server)
        task = (
            await client.result(
                "SendMessage", send_params(configuration={"returnImmediately": True})
            )
        )["task"]
        async with anyio.create_task_group() as tg:

            async def cancel() -> None:
                result = await client.result("CancelTask", {"id": task["id"]})
                assert result["status"]["state"] == "TASK_STATE_CANCELED"

            tg.start_soon(cancel)
            await anyio.sleep(0.05)
            proceed.set()
        await finished.wait()
        stored = await client.result("GetTask", {"id": task["id"]})
    assert stored["status"]["state"] == "TASK_STATE_CANCELED"
    assert "artifacts" not in stored  # the late artifact and completion were dropped


async def test_agent_exception_fails_the_task_without_leaking_details() -> None:
    async def broken(ctx: TaskContext) -> str:
        raise RuntimeError("secret database password in here")

    async with A2AServer(broken, card=make_card()) as server:
        client = Client(server)
        result = await client.rpc("SendMessage", send_params())
        again = await client.result("SendMessage", send_params(mid="m2"))
    body = json.dumps(result)
    assert result["result"]["task"]["status"]["state"] == "TASK_STATE_FAILED"
    assert "secret" not in body and "RuntimeError" not in body and "Traceback" not in body
    assert again["task"]["status"]["state"] == "TASK_STATE_FAILED"  # the server keeps serving


async def test_a2a_error_before_the_task_exists_is_the_reply() -> None:
    async def picky(ctx: TaskContext) -> str:
        raise ContentTypeNotSupportedError("Only text/plain is accepted")

    async with A2AServer(picky, card=make_card()) as server:
        error = await Client(server).error("SendMessage", send_params())
    assert error["code"] == -32005
    assert error["message"] == "Only text/plain is accepted"


async def test_sync_agents_run_in_a_thread() -> None:
    def blocking(ctx: TaskContext) -> str:
        import time

        time.sleep(0.01)  # would block the loop if run on it
        return ctx.text.upper()

    async with A2AServer(blocking, card=make_card()) as server:
        task = (await Client(server).result("SendMessage", send_params("quiet")))["task"]
    assert task["artifacts"][0]["parts"] == [{"text": "QUIET"}]


async def test_task_context_methods_drive_the_task() -> None:
    async def manual(ctx: TaskContext) -> None:
        await ctx.working("thinking")
        aid = await ctx.artifact("part one", name="report")
        await ctx.artifact("part two", artifact_id=aid, append=True, last_chunk=True)
        await ctx.complete("all done")

    async with A2AServer(manual, card=make_card()) as server:
        task = (await Client(server).result("SendMessage", send_params()))["task"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    assert task["status"]["message"]["parts"] == [{"text": "all done"}]
    assert task["artifacts"][0]["name"] == "report"
    assert [p["text"] for p in task["artifacts"][0]["parts"]] == ["part one", "part two"]
    assert [m["parts"][0]["text"] for m in task["history"]] == ["hi", "thinking"]


async def test_reject_and_auth_required() -> None:
    async def agent(ctx: TaskContext) -> Any:
        if ctx.text == "reject":
            await ctx.reject("no")
            return None
        return AuthRequired("log in first")

    async with A2AServer(agent, card=make_card()) as server:
        client = Client(server)
        rejected = (await client.result("SendMessage", send_params("reject")))["task"]
        auth = (await client.result("SendMessage", send_params("x", mid="m2")))["task"]
    assert rejected["status"]["state"] == "TASK_STATE_REJECTED"
    assert auth["status"]["state"] == "TASK_STATE_AUTH_REQUIRED"


async def test_subscribe_starts_with_the_snapshot_and_follows() -> None:
    step = anyio.Event()

    async def agent(ctx: TaskContext) -> str:
        await ctx.working()
        await step.wait()
        return "result"

    async with A2AServer(agent, card=make_card()) as server:
        client = Client(server)
        task = (
            await client.result(
                "SendMessage", send_params(configuration={"returnImmediately": True})
            )
        )["task"]
        await anyio.sleep(0.02)
        response = await server.handle(
            client.request(
                "POST",
                "/",
                json.dumps(
                    {
                        "jsonrpc": "2.0",
                        "id": 7,
                        "method": "SubscribeToTask",
                        "params": {"id": task["id"]},
                    }
                ).encode(),
            )
        )
        step.set()
        frames = await collect(response)
    results = [d["result"] for _, d in frames]
    assert list(results[0]) == ["task"] and results[0]["task"]["id"] == task["id"]
    assert results[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"
    assert any("artifactUpdate" in r for r in results)
    assert all(d["id"] == 7 for _, d in frames)


async def test_subscribe_to_terminal_task() -> None:
    async with A2AServer(echo, card=make_card()) as server:
        task = (await Client(server).result("SendMessage", send_params()))["task"]
        v1 = await Client(server).error("SubscribeToTask", {"id": task["id"]})
        v03 = await Client(server, version="0.3").stream("tasks/resubscribe", {"id": task["id"]})
        unknown = await Client(server).error("SubscribeToTask", {"id": "nope"})
    assert v1["code"] == -32004
    assert len(v03) == 1 and v03[0][1]["result"]["kind"] == "task"
    assert v03[0][1]["result"]["status"]["state"] == "completed"
    assert unknown["code"] == -32001


async def test_last_event_id_replays_what_was_missed() -> None:
    step = anyio.Event()

    async def agent(ctx: TaskContext) -> AsyncIterator[str]:
        yield "one"
        yield "two"
        await step.wait()
        yield "three"

    async with A2AServer(agent, card=make_card()) as server:
        client = Client(server)
        task = (
            await client.result(
                "SendMessage", send_params(configuration={"returnImmediately": True})
            )
        )["task"]
        await anyio.sleep(0.05)
        body = json.dumps(
            {"jsonrpc": "2.0", "id": 1, "method": "SubscribeToTask", "params": {"id": task["id"]}}
        ).encode()
        response = await server.handle(
            client.request("POST", "/", body, headers={"last-event-id": "2"})
        )
        step.set()
        frames = await collect(response)
    seqs = [int(i) for i, _ in frames if i is not None]
    assert seqs[0] == 3  # replay starts right after the last event the client saw
    texts = [
        d["result"]["artifactUpdate"]["artifact"]["parts"][0]["text"]
        for _, d in frames
        if "artifactUpdate" in d["result"]
    ]
    assert texts == ["two", "three"]


async def test_idle_subscription_sends_keep_alives_then_closes() -> None:
    async def idle(ctx: TaskContext) -> None:
        await ctx.working()  # then returns: the task stays open, nothing more happens

    async with A2AServer(
        idle, card=make_card(), streams=StreamOptions(idle_timeout=0.2, keep_alive_interval=0.05)
    ) as server:
        client = Client(server)
        task = (await client.result("SendMessage", send_params()))["task"]
        assert task["status"]["state"] == "TASK_STATE_WORKING"
        body = json.dumps(
            {"jsonrpc": "2.0", "id": 1, "method": "SubscribeToTask", "params": {"id": task["id"]}}
        ).encode()
        response = await server.handle(client.request("POST", "/", body))
        raw = b""
        with anyio.fail_after(5):
            async for chunk in response.frames:  # type: ignore[union-attr]
                raw += chunk
    assert raw.count(b": keep-alive") >= 1
    assert raw.count(b"data:") == 1  # only the snapshot


async def test_many_subscribers_and_one_leaving_early() -> None:
    step = anyio.Event()

    async def agent(ctx: TaskContext) -> AsyncIterator[str]:
        await step.wait()
        yield "x"
        yield "y"

    async with A2AServer(agent, card=make_card()) as server:
        client = Client(server)
        task = (
            await client.result(
                "SendMessage", send_params(configuration={"returnImmediately": True})
            )
        )["task"]
        body = json.dumps(
            {"jsonrpc": "2.0", "id": 1, "method": "SubscribeToTask", "params": {"id": task["id"]}}
        ).encode()
        responses = [await server.handle(client.request("POST", "/", body)) for _ in range(5)]
        leaver = responses.pop()
        first = await leaver.frames.__anext__()  # type: ignore[union-attr]
        await leaver.frames.aclose()  # type: ignore[union-attr]
        step.set()
        results = [await collect(r) for r in responses]
    assert b"data:" in first
    for frames in results:
        assert frames[-1][1]["result"]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"
        assert len(frames) == len(results[0])


async def test_client_disconnect_mid_stream_leaves_the_task_intact() -> None:
    step = anyio.Event()

    async def agent(ctx: TaskContext) -> AsyncIterator[str]:
        yield "first"
        await step.wait()
        yield "second"

    async with A2AServer(agent, card=make_card()) as server:
        client = Client(server)
        response = await server.handle(
            client.request(
                "POST",
                "/",
                json.dumps(
                    {
                        "jsonrpc": "2.0",
                        "id": 1,
                        "method": "SendStreamingMessage",
                        "params": send_params(),
                    }
                ).encode(),
            )
        )
        first = await response.frames.__anext__()  # type: ignore[union-attr]
        await response.frames.aclose()  # type: ignore[union-attr]  # the client went away
        # A chunk holds every frame ready when it was written: the task, maybe more.
        snapshot = next(f for f in parse_frames(first) if f.data is not None)
        assert snapshot.data is not None
        task_id = json.loads(snapshot.data)["result"]["task"]["id"]
        step.set()
        with anyio.fail_after(5):
            while (await client.result("GetTask", {"id": task_id}))["status"][
                "state"
            ] != "TASK_STATE_COMPLETED":
                await anyio.sleep(0.01)
        stored = await client.result("GetTask", {"id": task_id})
    assert [p["text"] for p in stored["artifacts"][0]["parts"]] == ["first", "second"]


async def test_list_tasks_pages_newest_first() -> None:
    async with A2AServer(echo, card=make_card()) as server:
        client = Client(server)
        ids = []
        for i in range(5):
            ids.append(
                (
                    await client.result(
                        "SendMessage", send_params(f"t{i}", mid=f"m{i}", context_id="c")
                    )
                )["task"]["id"]
            )
            await anyio.sleep(0.002)
        page1 = await client.result("ListTasks", {"pageSize": 2})
        page2 = await client.result(
            "ListTasks", {"pageSize": 2, "pageToken": page1["nextPageToken"]}
        )
        with_artifacts = await client.result(
            "ListTasks", {"pageSize": 1, "includeArtifacts": True, "historyLength": 0}
        )
        bad_token = await client.error("ListTasks", {"pageToken": "garbage"})
        bad_size = await client.error("ListTasks", {"pageSize": 101})
    assert page1["totalSize"] == 5 and page1["pageSize"] == 2
    assert [t["id"] for t in page1["tasks"] + page2["tasks"]] == list(reversed(ids))[:4]
    assert all("artifacts" not in t for t in page1["tasks"])
    assert "artifacts" in with_artifacts["tasks"][0] and "history" not in with_artifacts["tasks"][0]
    assert bad_token["code"] == -32602 and bad_size["code"] == -32602


async def test_authorization_denials_look_like_missing_tasks() -> None:
    def only_owner(operation: str, task: Any, call: Any) -> bool:
        return bool(task.history and task.history[0].metadata.get("owner") == call.identity)

    async def agent(ctx: TaskContext) -> Any:
        return InputRequired("more?")

    async with A2AServer(agent, card=make_card(), authorize_task=only_owner) as server:
        alice, bob = Client(server, identity="alice"), Client(server, identity="bob")
        params = send_params()
        params["message"]["metadata"] = {"owner": "alice"}
        task = (await alice.result("SendMessage", params))["task"]
        assert (await alice.result("GetTask", {"id": task["id"]}))["id"] == task["id"]
        config = await alice.result(
            "CreateTaskPushNotificationConfig",
            {"taskId": task["id"], "url": "https://example.com/alice"},
        )
        errors = [
            await bob.error("GetTask", {"id": task["id"]}),
            await bob.error("CancelTask", {"id": task["id"]}),
            await bob.error("SubscribeToTask", {"id": task["id"]}),
            await bob.error("SendMessage", send_params(task_id=task["id"], mid="m2")),
            await bob.error(
                "CreateTaskPushNotificationConfig",
                {"taskId": task["id"], "url": "https://example.com/hook"},
            ),
            await bob.error("ListTaskPushNotificationConfigs", {"taskId": task["id"]}),
            await bob.error(
                "GetTaskPushNotificationConfig", {"taskId": task["id"], "id": config["id"]}
            ),
            await bob.error(
                "DeleteTaskPushNotificationConfig", {"taskId": task["id"], "id": config["id"]}
            ),
        ]
        still_there = await alice.result(
            "GetTaskPushNotificationConfig", {"taskId": task["id"], "id": config["id"]}
        )
        bob_list = await bob.result("ListTasks", {})
        alice_list = await alice.result("ListTasks", {})
    assert {e["code"] for e in errors} == {-32001}
    assert len({e["message"] for e in errors}) == 1  # the same answer as for a missing task
    assert still_there["id"] == config["id"]  # bob's delete did nothing
    assert bob_list["tasks"] == [] and bob_list["totalSize"] == 0
    assert alice_list["totalSize"] == 1


async def test_push_config_crud_and_ssrf_refusal() -> None:
    async with A2AServer(lambda ctx: InputRequired("?"), card=make_card()) as server:
        client = Client(server)
        task = (await client.result("SendMessage", send_params()))["task"]
        created = await client.result(
            "CreateTaskPushNotificationConfig",
            {"taskId": task["id"], "url": "https://example.com/hook", "token": "tok"},
        )
        second = await client.result(
            "CreateTaskPushNotificationConfig",
            {"taskId": task["id"], "url": "https://example.com/other"},
        )
        got = await client.result(
            "GetTaskPushNotificationConfig", {"taskId": task["id"], "id": created["id"]}
        )
        listed = await client.result("ListTaskPushNotificationConfigs", {"taskId": task["id"]})
        deleted = await client.result(
            "DeleteTaskPushNotificationConfig", {"taskId": task["id"], "id": created["id"]}
        )
        missing = await client.error(
            "GetTaskPushNotificationConfig", {"taskId": task["id"], "id": created["id"]}
        )
        refused = await client.error(
            "CreateTaskPushNotificationConfig",
            {"taskId": task["id"], "url": "http://10.0.0.1/hook"},
        )
        unknown_task = await client.error(
            "CreateTaskPushNotificationConfig",
            {"taskId": "nope", "url": "https://example.com/hook"},
        )
    assert created["id"] == task["id"]  # the first config takes the task id
    assert second["id"] and second["id"] != created["id"]
    assert got == created and "token" not in got  # the token is a secret: never shown
    assert [c["id"] for c in listed["configs"]] == [created["id"], second["id"]]
    assert deleted == {}
    assert missing["code"] == -32001
    assert refused["code"] == -32602
    assert unknown_task["code"] == -32001


async def test_push_operations_need_the_capability() -> None:
    async with A2AServer(echo, card=make_card(push=False)) as server:
        error = await Client(server).error("ListTaskPushNotificationConfigs", {"taskId": "x"})
    assert error["code"] == -32003


async def test_extended_card_only_for_authenticated_callers() -> None:
    from a2a_core.types import AgentSkill

    def per_caller(identity: Any) -> Any:
        card = make_card(extended=True)
        import msgspec

        return msgspec.structs.replace(
            card,
            skills=[
                *card.skills,
                AgentSkill(id="vip", name=f"For {identity}", description="d", tags=[]),
            ],
        )

    async with A2AServer(echo, card=make_card(extended=True), extended_card=per_caller) as server:
        anonymous = await Client(server).error("GetExtendedAgentCard")
        card = await Client(server, identity="carol").result("GetExtendedAgentCard")
    assert anonymous["code"] == -32004
    assert card["skills"][-1]["name"] == "For carol"
    assert [(i["protocolBinding"], i["url"]) for i in card["supportedInterfaces"][:2]] == [
        ("JSONRPC", "http://127.0.0.1:9999/a2a/"),
        ("HTTP+JSON", "http://127.0.0.1:9999/a2a"),
    ]


async def test_timestamp_extension_decorates_only_when_requested() -> None:
    ext = TimestampExtension()
    async with A2AServer(echo, card=make_card(), extensions=[ext]) as server:
        client = Client(server)
        plain = (await client.result("SendMessage", send_params()))["task"]
        stamped_response = await server.handle(
            client.request(
                "POST",
                "/",
                json.dumps(
                    {
                        "jsonrpc": "2.0",
                        "id": 1,
                        "method": "SendMessage",
                        "params": send_params(mid="m2"),
                    }
                ).encode(),
                headers={"a2a-extensions": ext.uri},
            )
        )
    assert isinstance(stamped_response, HttpResponse)
    stamped = json.loads(stamped_response.body)["result"]["task"]
    assert ext.uri not in plain.get("metadata", {})
    assert stamped["metadata"][ext.uri]["timestamp"].endswith("Z")
    assert stamped_response.header("a2a-extensions") == ext.uri


async def test_rest_binding_through_the_runtime() -> None:
    async with A2AServer(echo, card=make_card()) as server:
        client = Client(server)
        sent = await server.handle(
            client.request("POST", "/message:send", json.dumps(send_params("rest")).encode())
        )
        assert isinstance(sent, HttpResponse) and sent.status == 200
        task = json.loads(sent.body)["task"]
        got = await server.handle(
            client.request("GET", f"/tasks/{task['id']}", query="historyLength=0")
        )
        missing = await server.handle(client.request("GET", "/tasks/nope"))
    assert isinstance(got, HttpResponse) and json.loads(got.body)["id"] == task["id"]
    assert "history" not in json.loads(got.body)
    assert isinstance(missing, HttpResponse) and missing.status == 404
    assert json.loads(missing.body)["error"]["details"][0]["reason"] == "TASK_NOT_FOUND"


# --- operations for backends (a2a_core.server.backends) ----------------------------------


async def test_fail_task_fails_an_open_task_once() -> None:
    gate = anyio.Event()
    stopped: list[str] = []

    async def held(ctx: TaskContext) -> None:
        await ctx.working("on it")
        try:
            await gate.wait()
        except anyio.get_cancelled_exc_class():
            stopped.append(ctx.task_id)
            raise

    async with A2AServer(held, card=make_card()) as server:
        client = Client(server)
        sent = await client.result(
            "SendMessage", send_params(configuration={"returnImmediately": True})
        )
        task_id = sent["task"]["id"]
        with anyio.fail_after(5):
            while (await client.result("GetTask", {"id": task_id}))["status"]["state"] != (
                "TASK_STATE_WORKING"
            ):
                await anyio.sleep(0.01)
        assert await server.fail_task(task_id, "The host was lost") is True
        assert await server.fail_task(task_id, "again") is False  # already terminal
        assert await server.fail_task("no-such-task", "x") is False
        # The agent still runs here, with a stale view of its task: stop it.
        assert server.cancel_local_execution(task_id) is True
        with anyio.fail_after(5):
            while not stopped:
                await anyio.sleep(0.01)
        assert server.cancel_local_execution("no-such-task") is False
        task = await client.result("GetTask", {"id": task_id})
    assert stopped == [task_id]
    assert task["status"]["state"] == "TASK_STATE_FAILED"
    assert task["status"]["message"]["parts"] == [{"text": "The host was lost"}]
    assert task["status"]["message"]["role"] == "ROLE_AGENT"


async def test_every_protocol_option_reaches_the_protocol() -> None:
    # Two options A2AServer could not set before ProtocolOptions: max_json_depth and
    # notifications; and one of the others, for good measure.
    options = ProtocolOptions(max_json_depth=3, notifications="ignore", jsonrpc_path="/rpc")
    async with A2AServer(echo, card=make_card(), protocol=options) as server:
        client = Client(server)
        deep = await server.handle(
            client.request(
                "POST", "/rpc", rpc_body("GetTask", {"id": "t", "metadata": {"a": {"b": {}}}})
            )
        )
        silent = await server.handle(
            client.request(
                "POST", "/rpc", b'{"jsonrpc":"2.0","method":"GetTask","params":{"id":"t"}}'
            )
        )
        at_root = await server.handle(client.request("POST", "/", rpc_body("GetTask", {"id": "t"})))
    assert isinstance(deep, HttpResponse)
    assert json.loads(deep.body)["error"]["code"] == -32600
    assert "nesting" in json.loads(deep.body)["error"]["message"]
    assert isinstance(silent, HttpResponse) and silent.status == 204 and silent.body == b""
    assert isinstance(at_root, HttpResponse) and at_root.status == 404


async def test_an_agent_can_create_its_task_first_and_end_it_canceled() -> None:
    seen: list[str] = []

    async def agent(ctx: TaskContext) -> None:
        await ctx.submitted()
        assert ctx.task is not None
        seen.append(ctx.task.status.state.value)
        await ctx.submitted()  # once it exists, nothing more happens
        await ctx.cancel("Gave up on my own")

    async with A2AServer(agent, card=make_card()) as server:
        task = (await Client(server).result("SendMessage", send_params()))["task"]
    assert seen == ["TASK_STATE_SUBMITTED"]
    assert task["status"]["state"] == "TASK_STATE_CANCELED"
    assert task["status"]["message"]["parts"] == [{"text": "Gave up on my own"}]


async def test_status_reports_carry_metadata_that_the_task_takes() -> None:
    async def agent(ctx: TaskContext) -> None:
        await ctx.working("on it", metadata={"step": 1, "tool": "search"})
        await ctx.complete(metadata={"step": 2})

    async with A2AServer(agent, card=make_card()) as server:
        client = Client(server)
        frames = await client.stream("SendStreamingMessage", send_params())
        task_id = frames[0][1]["result"]["task"]["id"]
        stored = await client.result("GetTask", {"id": task_id})
    updates = [f[1]["result"]["statusUpdate"] for f in frames if "statusUpdate" in f[1]["result"]]
    assert [u.get("metadata") for u in updates] == [{"step": 1, "tool": "search"}, {"step": 2}]
    assert stored["metadata"] == {"step": 2, "tool": "search"}  # merged, later wins


async def test_a_server_never_started_refuses_calls_with_a_503_that_says_why() -> None:
    server = A2AServer(echo, card=make_card())
    client = Client(server)
    rpc = await server.handle(client.request("POST", "/", rpc_body("SendMessage", send_params())))
    rest = await server.handle(
        client.request("POST", "/message:send", json.dumps(send_params()).encode())
    )
    card = await server.handle(client.request("GET", "/.well-known/agent-card.json"))
    assert isinstance(rpc, HttpResponse) and isinstance(rest, HttpResponse)
    assert rpc.status == rest.status == 503
    answer = json.loads(rpc.body)
    assert answer["id"] == 1  # the call's: the client can match the answer
    error = answer["error"]
    assert error["code"] == -32050 and "was not started" in error["message"]
    assert "was not started" in json.loads(rest.body)["error"]["message"]
    assert isinstance(card, HttpResponse) and card.status == 200  # the card needs no runtime
    # Started, the same server serves; stopped, it says it is shutting down instead.
    async with server:
        served = await client.result("SendMessage", send_params())
    stopped = await server.handle(
        client.request("POST", "/", rpc_body("SendMessage", send_params()))
    )
    assert served["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
    assert isinstance(stopped, HttpResponse)
    assert "shutting down" in json.loads(stopped.body)["error"]["message"]


async def test_an_extended_card_without_a_base_url_says_what_to_add() -> None:
    server = A2AServer(
        echo,
        card=make_card(extended=True),
        extended_card=make_card(),
        protocol=ProtocolOptions(extended_card_for_anonymous=True),
    )
    client = Client(server)
    async with server:
        request = client.request("POST", "/", rpc_body("GetExtendedAgentCard"))
        response = await server.handle(msgspec.structs.replace(request, base_url=None))
    assert isinstance(response, HttpResponse)
    error = json.loads(response.body)["error"]
    assert error["code"] == -32050
    assert "base_url" in error["message"]


async def test_check_base_url_says_whether_the_card_can_get_its_urls(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, "a2a_core.server")
    assert A2AServer(echo, card=make_card(), base_url="https://a.test").check_base_url(
        from_requests=False
    )
    assert A2AServer(echo, card=make_card()).check_base_url(from_requests=True)
    assert not caplog.records
    assert not A2AServer(echo, card=make_card()).check_base_url(from_requests=False)
    (record,) = caplog.records
    assert record.levelno == logging.WARNING and "put_base_url" in record.getMessage()
