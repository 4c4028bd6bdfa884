"""Server-Sent Events over the wire: headers, frames, keep-alive, replay, disconnects."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from typing import Any

import anyio
import pytest

from a2a_core.server import A2AServer, StreamOptions, TaskContext
from a2a_core.types import Message, Part, Role
from adapters.contract import Frame, Harness, Live, make_card, send_params

pytestmark = pytest.mark.anyio

FRAME = re.compile(rb"id: (\d+)\ndata: ([^\n]+)\n\n")


class Steps:
    """A streaming agent: yields ``first`` and ``second``, then waits for the gate, then
    yields ``third``. ``reached`` is set once both chunks before the gate are in the log."""

    def __init__(self) -> None:
        self.reached = anyio.Event()
        self.gate = anyio.Event()

    async def __call__(self, ctx: TaskContext) -> AsyncIterator[str]:
        yield "first"
        yield "second"
        self.reached.set()
        await self.gate.wait()
        yield "third"


def texts(frames: list[Frame], *, rest: bool = False) -> list[str]:
    """The artifact chunk texts of JSON-RPC (or REST) v1.0 stream frames."""
    out = []
    for frame in frames:
        event = frame.data if rest else frame.data["result"]
        if "artifactUpdate" in event:
            out.append(event["artifactUpdate"]["artifact"]["parts"][0]["text"])
    return out


def last_state(frames: list[Frame], *, rest: bool = False) -> str:
    event = frames[-1].data if rest else frames[-1].data["result"]
    return str(event["statusUpdate"]["status"]["state"])


async def start(live: Live) -> str:
    """Send without waiting; the id of the new task."""
    params = send_params(configuration={"returnImmediately": True})
    return str((await live.result("SendMessage", params))["task"]["id"])


@pytest.mark.parametrize("binding", ["jsonrpc", "rest"])
async def test_stream_headers_and_frames(harness: Harness, binding: str) -> None:
    steps = Steps()
    steps.gate.set()
    async with harness.serve(A2AServer(steps, card=make_card())) as live:
        if binding == "jsonrpc":
            stream = await live.stream_rpc("SendStreamingMessage", send_params())
        else:
            stream = await live.stream(
                "POST", "/message:stream", json.dumps(send_params()).encode()
            )
    assert stream.status == 200
    assert stream.headers["content-type"] == "text/event-stream"
    assert stream.headers["cache-control"] == "no-cache"
    assert stream.headers["a2a-version"] == "1.0"
    assert "content-length" not in stream.headers
    names = [name for name, _ in stream.headers.multi_items()]
    assert names.count("content-type") == 1 and names.count("cache-control") == 1
    # The body is nothing but frames, each `id: <seq>` and one line of `data:` JSON.
    matches = list(FRAME.finditer(stream.raw))
    assert b"".join(m.group(0) for m in matches) == stream.raw
    ids = [int(m.group(1)) for m in matches]
    assert ids == sorted(set(ids)) and len(ids) >= 5
    assert [json.loads(m.group(2)) for m in matches] == stream.data
    assert texts(stream.frames, rest=binding == "rest") == ["first", "second", "third"]
    assert last_state(stream.frames, rest=binding == "rest") == "TASK_STATE_COMPLETED"


async def test_keep_alive_comments_on_an_idle_stream(harness: Harness) -> None:
    steps = Steps()
    server = A2AServer(steps, card=make_card(), streams=StreamOptions(keep_alive_interval=0.05))
    async with harness.serve(server) as live:
        task_id = await start(live)
        await steps.reached.wait()
        async with live.open_rpc_stream("SubscribeToTask", {"id": task_id}) as stream:
            snapshot = await stream.next_data()
            comments = []
            while not comments:  # idle until the gate opens: keep-alives come
                frame = await stream.next()
                assert frame is not None and frame.comment is not None, frame
                comments.append(frame)
            steps.gate.set()
            rest = await stream.rest()
    assert snapshot.data["result"]["task"]["id"] == task_id
    assert comments[0].raw == b": keep-alive\n\n"
    assert texts(rest) == ["third"]
    assert last_state(rest) == "TASK_STATE_COMPLETED"


@pytest.mark.parametrize("binding", ["jsonrpc", "rest"])
async def test_last_event_id_replays_what_was_missed(harness: Harness, binding: str) -> None:
    steps = Steps()
    async with harness.serve(A2AServer(steps, card=make_card())) as live:
        task_id = await start(live)
        await steps.reached.wait()

        def subscribe(headers: dict[str, str]) -> Any:
            if binding == "jsonrpc":
                return live.open_rpc_stream("SubscribeToTask", {"id": task_id}, headers=headers)
            return live.open_stream("POST", f"/tasks/{task_id}:subscribe", b"{}", headers=headers)

        async with subscribe({}) as stream:
            snapshot = await stream.next_data()  # its id is the last event so far
        seen = int(snapshot.id or 0)
        assert seen >= 3
        # A client that saw everything up to (not including) the last chunk reconnects.
        async with subscribe({"last-event-id": str(seen - 1)}) as stream:
            replayed = await stream.next_data()
            steps.gate.set()
            rest = [replayed, *await stream.rest()]
    rest_binding = binding == "rest"
    assert replayed.id == str(seen)  # the replay starts right after what the client saw
    assert texts(rest, rest=rest_binding) == ["second", "third"]
    assert last_state(rest, rest=rest_binding) == "TASK_STATE_COMPLETED"
    ids = [int(f.id or 0) for f in rest]
    assert ids == list(range(seen, seen + len(ids)))


async def test_client_disconnect_leaves_the_task_intact(harness: Harness) -> None:
    steps = Steps()
    async with harness.serve(A2AServer(steps, card=make_card())) as live:
        async with live.open_rpc_stream("SendStreamingMessage", send_params()) as stream:
            first = await stream.next_data()
        # The client is gone (the connection was closed after the first frame).
        task_id = first.data["result"]["task"]["id"]
        await steps.reached.wait()
        steps.gate.set()
        task = await live.wait_for_state(task_id, "TASK_STATE_COMPLETED")
        # The server keeps serving: streams and plain calls.
        again = await live.stream_rpc("SendStreamingMessage", send_params(mid="m2"))
        listed = await live.result("ListTasks", {})
    assert [p["text"] for p in task["artifacts"][0]["parts"]] == ["first", "second", "third"]
    assert texts(again.frames) == ["first", "second", "third"]
    assert listed["totalSize"] == 2


@pytest.mark.parametrize("binding", ["jsonrpc", "rest"])
async def test_one_subscriber_leaving_affects_no_other(harness: Harness, binding: str) -> None:
    steps = Steps()
    async with harness.serve(A2AServer(steps, card=make_card())) as live:
        task_id = await start(live)
        await steps.reached.wait()

        def subscribe() -> Any:
            if binding == "jsonrpc":
                return live.open_rpc_stream("SubscribeToTask", {"id": task_id})
            return live.open_stream("GET", f"/tasks/{task_id}:subscribe", None)

        async with subscribe() as staying:
            await staying.next_data()
            async with subscribe() as leaving:
                await leaving.next_data()
            steps.gate.set()
            rest = await staying.rest()
        task = await live.wait_for_state(task_id, "TASK_STATE_COMPLETED")
    assert texts(rest, rest=binding == "rest") == ["third"]
    assert last_state(rest, rest=binding == "rest") == "TASK_STATE_COMPLETED"
    assert len(task["artifacts"][0]["parts"]) == 3


async def test_errors_before_the_first_frame_are_plain_responses(harness: Harness) -> None:
    async with harness.serve(A2AServer(lambda ctx: "done", card=make_card())) as live:
        rpc = await live.post_rpc("SubscribeToTask", {"id": "no-such-task"})
        rest = await live.rest("GET", "/tasks/no-such-task:subscribe")
        finished = (await live.result("SendMessage", send_params()))["task"]
        terminal = await live.post_rpc("SubscribeToTask", {"id": finished["id"]})
    assert rpc.headers["content-type"].startswith("application/json")
    assert rpc.json()["error"]["code"] == -32001
    assert rest.status_code == 404 and rest.headers["content-type"].startswith("application/json")
    assert rest.json()["error"]["details"][0]["reason"] == "TASK_NOT_FOUND"
    assert terminal.json()["error"]["code"] == -32004  # v1.0: nothing to subscribe to


async def test_a_message_reply_is_a_one_frame_stream(harness: Harness) -> None:
    async def reply(ctx: TaskContext) -> Message:
        return Message(message_id="r1", role=Role.AGENT, parts=[Part(text="just this")])

    async with harness.serve(A2AServer(reply, card=make_card())) as live:
        stream = await live.stream_rpc("SendStreamingMessage", send_params())
    assert len(stream.frames) == 1
    assert stream.data[0]["result"]["message"]["parts"] == [{"text": "just this"}]


async def test_streaming_is_refused_without_the_capability(harness: Harness) -> None:
    async with harness.serve(A2AServer(lambda ctx: "x", card=make_card(streaming=False))) as live:
        refused = await live.post_rpc("SendStreamingMessage", send_params())
    assert refused.headers["content-type"].startswith("application/json")
    assert refused.json()["error"]["code"] == -32004


# --- a subscription follows a multi-turn task until it is terminal -----------------------------


async def multi_turn(ctx: TaskContext) -> Any:
    """input-required; the first follow-up asks for auth; the second completes with an
    artifact holding its text."""
    if not ctx.is_follow_up:
        await ctx.input_required("Your name?")
        return None
    if ctx.text == "auth":
        await ctx.auth_required("Sign in, then say done")
        return None
    await ctx.working("finishing")
    await ctx.artifact(f"bye {ctx.text}", name="result")
    await ctx.complete()
    return None


def _event_summary(frame: Frame, route: str) -> tuple[str, str, bool]:
    """(kind, state or artifact text, final) of one subscription frame in any dialect."""
    event = frame.data["result"] if route.startswith("jsonrpc") else frame.data
    if route == "jsonrpc-0.3":
        kind = event["kind"]
        if kind == "artifact-update":
            return kind, event["artifact"]["parts"][0]["text"], False
        state = "TASK_STATE_" + event["status"]["state"].upper().replace("-", "_")
        return kind, state.replace("CANCELED", "CANCELLED"), bool(event.get("final"))
    if "task" in event:
        return "task", event["task"]["status"]["state"], False
    if "artifactUpdate" in event:
        return "artifact-update", event["artifactUpdate"]["artifact"]["parts"][0]["text"], False
    update = event["statusUpdate"]
    return "status-update", update["status"]["state"], bool(update.get("final"))


def _subscription(live: Live, route: str, task_id: str) -> Any:
    if route == "jsonrpc-1.0":
        return live.open_rpc_stream("SubscribeToTask", {"id": task_id})
    if route == "jsonrpc-0.3":
        return live.open_rpc_stream("tasks/resubscribe", {"id": task_id}, version="0.3")
    if route == "rest-1.0":
        return live.open_stream("POST", f"/tasks/{task_id}:subscribe", b"{}")
    return live.open_stream("GET", f"/v1/tasks/{task_id}:subscribe", None, version=None)


@pytest.mark.parametrize("route", ["jsonrpc-1.0", "jsonrpc-0.3", "rest-1.0", "rest-0.3"])
async def test_a_subscription_follows_the_task_until_it_is_terminal(
    harness: Harness, route: str
) -> None:
    # Spec §3.1.6: SubscribeToTask (v0.3 tasks/resubscribe) on a task that is not terminal
    # streams until the task is terminal, across input-required and auth-required; the
    # follow-ups come from other requests while the subscriber listens.
    async with harness.serve(A2AServer(multi_turn, card=make_card())) as live:
        first = await live.result("SendMessage", send_params("start"))
        task_id = first["task"]["id"]
        assert first["task"]["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
        async with _subscription(live, route, task_id) as subscription:
            snapshot = _event_summary(await subscription.next_data(), route)
            auth = await live.result("SendMessage", send_params("auth", task_id=task_id))
            while _event_summary(await subscription.next_data(), route)[1] != (
                "TASK_STATE_AUTH_REQUIRED"
            ):
                pass  # the follow-up's own events (working), up to auth-required
            done = await live.result("SendMessage", send_params("Ada", task_id=task_id, mid="m3"))
            with anyio.fail_after(10):
                rest = [_event_summary(frame, route) for frame in await subscription.rest()]
    assert snapshot == ("task", "TASK_STATE_INPUT_REQUIRED", False)
    assert auth["task"]["status"]["state"] == "TASK_STATE_AUTH_REQUIRED"
    assert done["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
    assert ("artifact-update", "bye Ada", False) in rest
    assert rest[-1] == ("status-update", "TASK_STATE_COMPLETED", route.endswith("0.3"))
    # v0.3's `final` is on the closing event only, never on an interruption.
    assert not any(final for _, _, final in rest[:-1])


async def test_a_send_stream_still_closes_on_input_required(harness: Harness) -> None:
    # spec-decisions A6: SendStreamingMessage keeps the SDK's rule (terminal or input-required).
    async with harness.serve(A2AServer(multi_turn, card=make_card())) as live:
        with anyio.fail_after(10):
            stream = await live.stream_rpc("SendStreamingMessage", send_params("start"))
    assert last_state(stream.frames) == "TASK_STATE_INPUT_REQUIRED"
