"""The official JavaScript client, ``@a2a-js/sdk`` 1.x, against our servers.

The session installs the SDK (``js_env.py``, the ``js_sdk`` fixture of ``conftest.py``) with
``npm ci`` from the committed ``js/package.json`` and ``js/package-lock.json`` into a folder
of the pytest cache named after a hash of both (so later sessions reuse it; a new lock file
gets a new folder), and runs ``js/client.mjs`` with
``node``, one process per adapter, binding (JSON-RPC, HTTP+JSON) and protocol version, against
a real server on 127.0.0.1. The script runs every scenario and prints one JSON object: per
step, what the SDK parsed (its own ProtoJSON ``toJSON``) or the error it raised; the tests
below assert on it, and on what our webhook sink received.

Version "1.0" is the SDK's default client. Version "0.3" is its v0.3 compatibility layer,
selected by ``legacyCompat: { enabled: true }`` on the card resolver and on the transport
factories, together with a card whose interfaces are v0.3: the server publishes the v0.3
card fields (``legacy_card_fields``) and the script hands the factory that card without
``supportedInterfaces``, as a v0.3 server would serve it. The factory then creates its
``LegacyJsonRpcTransport`` or ``LegacyRestTransport``.

Without ``node``/``npm`` the module is skipped; a failing ``npm ci`` is an error.
"""

from __future__ import annotations

import contextlib
import json
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import anyio
import httpx
import pytest

from interop.js_env import Node, locked_version
from interop.servers import ADAPTERS, IDENTITY, QUESTION, TOKEN, Delivery, serve, webhook

pytestmark = pytest.mark.interop

BINDINGS = ("JSONRPC", "HTTP+JSON")
VERSIONS = ("1.0", "0.3")
OPEN_STATES = ("TASK_STATE_SUBMITTED", "TASK_STATE_WORKING")
#: The transport class the SDK's factory creates for each binding and version.
TRANSPORT_CLASSES = {
    ("JSONRPC", "1.0"): "JsonRpcTransport",
    ("HTTP+JSON", "1.0"): "RestTransport",
    ("JSONRPC", "0.3"): "LegacyJsonRpcTransport",
    ("HTTP+JSON", "0.3"): "LegacyRestTransport",
}


def locked_sdk_version() -> str:
    return locked_version("@a2a-js/sdk")


@pytest.fixture(scope="session")
def js_client(js_sdk: Node) -> Node:
    """``node`` and a folder holding ``@a2a-js/sdk`` and the scripts (``js_env.py``)."""
    return js_sdk


# --- one run of the client script per adapter, binding and version ------------------------


@dataclass
class Run:
    """What the JS client saw, and what the webhook sink received."""

    adapter: str
    binding: str
    version: str
    url: str
    out: dict[str, Any]
    deliveries: list[Delivery]
    parsed_deliveries: list[dict[str, Any]]
    """Each delivery's body as the SDK's receiver-side parser read it (``push_bodies.mjs``)."""
    raw_stream: list[dict[str, Any]] | None
    """The data of each SSE event of a ``stream 3`` sent with httpx (v0.3 REST only)."""

    def ok(self, key: str) -> Any:
        """The value of a step that should have succeeded."""
        step = self.out.get(key)
        assert step is not None, f"the script recorded no step {key!r}"
        assert "error" not in step, f"{key}: the SDK raised {step['error']}"
        return step["ok"]

    def error(self, key: str) -> dict[str, Any]:
        """What the SDK raised for a step that should have failed."""
        step = self.out.get(key)
        assert step is not None, f"the script recorded no step {key!r}"
        assert "error" in step, f"{key}: expected an error, the SDK returned {step['ok']}"
        return dict(step["error"])

    @property
    def jsonrpc_url(self) -> str:
        return self.url + "/"


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    """Module scope, so that each run is shared by the tests below."""
    return "asyncio"


@pytest.fixture(
    scope="module",
    params=[(a, b, v) for a in ADAPTERS for b in BINDINGS for v in VERSIONS],
    ids=lambda param: "-".join(param).replace("HTTP+JSON", "rest").replace("JSONRPC", "jsonrpc"),
)
async def run(
    request: pytest.FixtureRequest, js_client: Node, anyio_backend: str
) -> AsyncIterator[Run]:
    adapter, binding, version = request.param
    legacy = version == "0.3"
    async with webhook() as hook, serve(adapter, legacy_card_fields=legacy) as served:
        with anyio.fail_after(60):
            result = await anyio.run_process(
                js_client.command("client.mjs", served.url, binding, version, hook.url, TOKEN),
                check=False,
            )
        stderr = result.stderr.decode(errors="replace")
        assert result.returncode == 0, f"the JS client failed:\n{stderr[-4000:]}"
        out = json.loads(result.stdout)
        # The push scenarios' tasks completed; wait for the webhook to hear them.
        for key in ("push_task_id", "push_in_send_task_id"):
            task_id = out.get(key, {}).get("ok")
            if task_id:
                with contextlib.suppress(TimeoutError):
                    await hook.wait_for(
                        lambda d, t=task_id: delivered(d.body) == (t, "completed"), timeout=10
                    )
        deliveries = list(hook.received)
        with anyio.fail_after(30):
            parsed = await anyio.run_process(
                js_client.command("push_bodies.mjs", version),
                input=json.dumps([d.body for d in deliveries]).encode(),
                check=False,
            )
        assert parsed.returncode == 0, parsed.stderr.decode(errors="replace")[-4000:]
        raw = await raw_v0_3_rest_stream(served.url) if legacy and binding == "HTTP+JSON" else None
        yield Run(
            adapter, binding, version, served.url, out, deliveries, json.loads(parsed.stdout), raw
        )


async def raw_v0_3_rest_stream(url: str) -> list[dict[str, Any]]:
    """``stream 3`` over the v0.3 REST binding, read with httpx: the data of each event."""
    body = {
        "message": {
            "messageId": str(uuid.uuid4()),
            "role": "ROLE_USER",
            "content": [{"text": "stream 3"}],
        }
    }
    events = []
    async with (
        httpx.AsyncClient(timeout=10) as http,
        http.stream(
            "POST", f"{url}/v1/message:stream", json=body, headers={"Accept": "text/event-stream"}
        ) as response,
    ):
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        async for line in response.aiter_lines():
            if line.startswith("data:"):
                events.append(json.loads(line.removeprefix("data:")))
    return events


# --- helpers -------------------------------------------------------------------------------


def delivered(body: dict[str, Any]) -> tuple[str, str] | None:
    """(task id, state) of a push body: a v1.0 StreamResponse or a v0.3 Task."""
    if body.get("kind") == "task":  # v0.3
        return body["id"], body["status"]["state"]
    if "statusUpdate" in body:
        update = body["statusUpdate"]
        return update["taskId"], update["status"]["state"].removeprefix("TASK_STATE_").lower()
    if "task" in body:
        task = body["task"]
        return task["id"], task["status"]["state"].removeprefix("TASK_STATE_").lower()
    return None


def state_of(task: dict[str, Any]) -> str:
    return str(task["status"]["state"])


def texts(parts: list[dict[str, Any]]) -> list[str]:
    return [part["text"] for part in parts if "text" in part]


def kinds(events: list[dict[str, Any]]) -> list[str]:
    """The payload case of each StreamResponse."""
    return [next(iter(event)) for event in events]


def expect_error(run: Run, key: str, error: str, *, code: int, status: int) -> None:
    """The SDK raised its typed ``error``: from the JSON-RPC ``code`` or the HTTP ``status``."""
    failure = run.error(key)
    assert failure["type"] == error, failure
    if run.binding == "JSONRPC":
        assert (failure["transport"], failure["envelopeCode"]) == ("jsonrpc", code), failure
    elif run.version == "1.0":
        assert (failure["transport"], failure["statusCode"]) == ("rest", status), failure
    # The v0.3 REST client builds the typed error from the body's top-level "code" (the
    # JSON-RPC code) and keeps no transport details.


def skip_unless_v1(run: Run, why: str) -> None:
    if run.version != "1.0":
        pytest.skip(why)


# --- discovery -----------------------------------------------------------------------------


def test_sdk_version(run: Run) -> None:
    assert run.out["sdk_version"] == locked_sdk_version()
    assert run.out["sdk_version"].startswith("1.")


def test_card_discovery(run: Run) -> None:
    card = run.ok("card")
    assert card["name"] == "Interop agent"
    assert card["capabilities"] == {
        "streaming": True,
        "pushNotifications": True,
        "extendedAgentCard": True,
    }
    assert [skill["id"] for skill in card["skills"]] == ["echo"]
    interfaces = [
        (i["protocolBinding"], i["protocolVersion"], i["url"]) for i in card["supportedInterfaces"]
    ]
    if run.version == "1.0":
        # What the SDK's resolver read: JSON-RPC at the mount root with its trailing slash,
        # HTTP+JSON at the base URL itself, each in both versions.
        assert interfaces == [
            ("JSONRPC", "1.0", run.jsonrpc_url),
            ("HTTP+JSON", "1.0", run.url),
            ("JSONRPC", "0.3", run.jsonrpc_url),
            ("HTTP+JSON", "0.3", run.url),
        ]
        # Without a preference, the factory takes the card's first interface.
        assert run.ok("default_selection") == {
            "class": "JsonRpcTransport",
            "protocolName": "JSONRPC",
            "protocolVersion": "1.0",
            "endpoint": run.jsonrpc_url,
        }
    else:
        # The SDK's v0.3 card parser made interfaces of url/preferredTransport and
        # additionalInterfaces, all of them v0.3.
        assert {(binding, url) for binding, _, url in interfaces} == {
            ("JSONRPC", run.jsonrpc_url),
            ("HTTP+JSON", run.url),
        }
        assert {version.startswith("0.3") for _, version, _ in interfaces} == {True}
        # With the compatibility layer on, our full card (both versions) still gets the v1.0
        # transport; the card's v0.3 interfaces alone get the legacy one.
        assert run.ok("dual_card_selection")["class"] == TRANSPORT_CLASSES[run.binding, "1.0"]
        assert run.ok("dual_card_selection")["protocolVersion"] == "1.0"
        legacy = run.ok("v03_interfaces_selection")
        assert legacy["class"] == TRANSPORT_CLASSES[run.binding, "0.3"]
        assert legacy["protocolVersion"] == "0.3"


def test_client_selection(run: Run) -> None:
    """The factory picked the transport of the binding under test, in the version under test."""
    assert run.ok("selection") == {
        "class": TRANSPORT_CLASSES[run.binding, run.version],
        "protocolName": run.binding,
        "protocolVersion": run.version,
        "endpoint": run.jsonrpc_url if run.binding == "JSONRPC" else run.url,
    }


# --- send ----------------------------------------------------------------------------------


def test_send_blocking(run: Run) -> None:
    task = run.ok("send_blocking")["task"]
    assert state_of(task) == "TASK_STATE_COMPLETED"
    assert task["id"] and task["contextId"]
    assert [texts(a["parts"]) for a in task["artifacts"]] == [["hello"]]
    first = task["history"][0]
    assert (first["role"], texts(first["parts"]), first["taskId"]) == (
        "ROLE_USER",
        ["echo hello"],
        task["id"],
    )


def test_send_message_only_reply(run: Run) -> None:
    reply = run.ok("send_message_reply")["message"]
    assert reply["role"] == "ROLE_AGENT"
    assert texts(reply["parts"]) == ["released nothing"]
    assert "taskId" not in reply
    streamed = run.ok("stream_message_reply")
    assert kinds(streamed) == ["message"]
    assert texts(streamed[0]["message"]["parts"]) == ["released streamed"]


def test_send_non_blocking(run: Run) -> None:
    """The client's ``polling`` (returnImmediately / blocking=false) gets an open task."""
    held = run.ok("send_non_blocking")["task"]
    assert state_of(held) in OPEN_STATES
    working = run.ok("non_blocking_working")
    assert working["id"] == held["id"]
    assert texts(working["status"]["message"]["parts"]) == ["holding"]
    done = run.ok("non_blocking_completed")
    assert done["id"] == held["id"]
    assert texts(done["artifacts"][0]["parts"]) == ["released"]


def test_send_to_terminal_task_is_refused(run: Run) -> None:
    expect_error(run, "send_to_terminal", "UnsupportedOperationError", code=-32004, status=400)


# --- stream --------------------------------------------------------------------------------


def test_stream_with_artifact_chunks(run: Run) -> None:
    events = run.ok("stream")
    assert kinds(events) == ["task"] + ["artifactUpdate"] * 3 + ["statusUpdate"]
    task = events[0]["task"]
    assert state_of(task) == "TASK_STATE_SUBMITTED"
    chunks = [event["artifactUpdate"] for event in events[1:4]]
    assert {chunk["taskId"] for chunk in chunks} == {task["id"]}
    assert len({chunk["artifact"]["artifactId"] for chunk in chunks}) == 1
    assert [texts(c["artifact"]["parts"]) for c in chunks] == [
        ["chunk 0"],
        ["chunk 1"],
        ["chunk 2"],
    ]
    assert chunks[0]["artifact"]["name"] == "story"
    assert [c.get("lastChunk", False) for c in chunks] == [False, False, True]
    if run.raw_stream is None:
        assert [c.get("append", False) for c in chunks] == [False, True, True]
    else:
        # The SDK's v0.3 REST stream conversion (FromProto.taskArtifactUpdateEvent) drops
        # ``append``, so the client cannot show it: assert on our bytes instead.
        raw = run.raw_stream
        assert kinds(raw) == ["task"] + ["artifactUpdate"] * 3 + ["statusUpdate"]
        raw_chunks = [event["artifactUpdate"] for event in raw[1:4]]
        assert [texts(c["artifact"]["parts"]) for c in raw_chunks] == [
            ["chunk 0"],
            ["chunk 1"],
            ["chunk 2"],
        ]
        assert [c.get("append", False) for c in raw_chunks] == [False, True, True]
        assert [c.get("lastChunk", False) for c in raw_chunks] == [False, False, True]
        assert raw[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"
        assert raw[-1]["statusUpdate"]["final"] is True
    final = events[-1]["statusUpdate"]
    assert final["taskId"] == task["id"]
    assert state_of(final) == "TASK_STATE_COMPLETED"


# --- get and list --------------------------------------------------------------------------


def test_get(run: Run) -> None:
    task = run.ok("get")
    assert task["id"] == run.ok("stream")[0]["task"]["id"]
    assert state_of(task) == "TASK_STATE_COMPLETED"
    # The chunks were folded into one artifact.
    assert len(task["artifacts"]) == 1
    assert texts(task["artifacts"][0]["parts"]) == ["chunk 0", "chunk 1", "chunk 2"]
    assert len(task["history"]) == 1  # historyLength=1
    expect_error(run, "get_missing", "TaskNotFoundError", code=-32001, status=404)


def test_list(run: Run) -> None:
    skip_unless_v1(run, "v0.3 has no ListTasks")
    first, second = run.ok("list_ids")
    listed = run.ok("list")
    assert [task["id"] for task in listed["tasks"]] == [second, first]  # newest first
    assert (listed["totalSize"], listed["pageSize"]) == (2, 50)
    assert "nextPageToken" not in listed  # empty: the last page
    page1 = run.ok("list_page1")
    assert [task["id"] for task in page1["tasks"]] == [second]
    assert page1["totalSize"] == 2
    assert page1["nextPageToken"]
    page2 = run.ok("list_page2")
    assert [task["id"] for task in page2["tasks"]] == [first]
    assert "nextPageToken" not in page2
    with_artifacts = run.ok("list_completed_with_artifacts")["tasks"]
    assert sorted(texts(t["artifacts"][0]["parts"])[0] for t in with_artifacts) == ["one", "two"]
    assert "artifacts" not in listed["tasks"][0]  # only with includeArtifacts


# --- cancel --------------------------------------------------------------------------------


def test_cancel(run: Run) -> None:
    task_id = run.ok("cancel_task_id")
    canceled = run.ok("cancel")
    assert canceled["id"] == task_id
    assert state_of(canceled) == "TASK_STATE_CANCELED"
    assert state_of(run.ok("cancel_get")) == "TASK_STATE_CANCELED"
    expect_error(run, "cancel_again", "TaskNotCancelableError", code=-32002, status=409)
    expect_error(run, "cancel_missing", "TaskNotFoundError", code=-32001, status=404)


# --- subscribe -----------------------------------------------------------------------------


def test_subscribe(run: Run) -> None:
    task_id = run.ok("subscribe_task_id")
    events = run.ok("subscribe")
    assert kinds(events)[0] == "task"
    assert events[0]["task"]["id"] == task_id
    assert state_of(events[0]["task"]) in OPEN_STATES
    assert texts(run.ok("subscribe_release")["message"]["parts"]) == [f"released {task_id}"]
    rest = events[1:]
    artifacts = [e["artifactUpdate"] for e in rest if "artifactUpdate" in e]
    assert [texts(a["artifact"]["parts"]) for a in artifacts] == [["released"]]
    assert kinds(rest)[-1] == "statusUpdate"
    assert state_of(rest[-1]["statusUpdate"]) == "TASK_STATE_COMPLETED"


def test_subscribe_to_missing_task(run: Run) -> None:
    expect_error(run, "subscribe_missing", "TaskNotFoundError", code=-32001, status=404)


def test_subscribe_to_terminal_task(run: Run) -> None:
    if run.version == "1.0":
        # v1.0: a terminal task has nothing to subscribe to.
        expect_error(
            run, "subscribe_terminal", "UnsupportedOperationError", code=-32004, status=400
        )
    else:
        # v0.3 (unspecified; spec-decisions A7): the final task, then the stream closes.
        events = run.ok("subscribe_terminal")
        assert kinds(events) == ["task"]
        assert events[0]["task"]["id"] == run.ok("subscribe_task_id")
        assert state_of(events[0]["task"]) == "TASK_STATE_COMPLETED"


def test_subscribe_across_input_required(run: Run) -> None:
    """A subscription to an input-required task carries the follow-up turn to completion."""
    task_id = run.ok("subscribe_input_required_task_id")
    answer = run.ok("subscribe_input_required_answer")["task"]
    assert answer["id"] == task_id
    assert state_of(answer) == "TASK_STATE_COMPLETED"
    events = run.ok("subscribe_input_required")
    assert kinds(events)[0] == "task"
    assert state_of(events[0]["task"]) == "TASK_STATE_INPUT_REQUIRED"
    assert texts(events[0]["task"]["status"]["message"]["parts"]) == [QUESTION]
    rest = events[1:]
    artifacts = [e["artifactUpdate"] for e in rest if "artifactUpdate" in e]
    assert [texts(a["artifact"]["parts"]) for a in artifacts] == [["Hello, Ada!"]]
    assert kinds(rest)[-1:] == ["statusUpdate"]
    assert state_of(rest[-1]["statusUpdate"]) == "TASK_STATE_COMPLETED"


# --- push notification configs -------------------------------------------------------------


def test_push_config_crud(run: Run) -> None:
    task_id = run.ok("push_task_id")
    created = run.ok("push_create")
    hook = created["url"]
    # The secrets are omitted from every reply (the webhook gets them: test_push_delivery).
    assert created == {
        "id": "cfg-1",
        "taskId": task_id,
        "url": hook,
        "authentication": {"scheme": "Bearer"},
    }
    other = run.ok("push_create_other")
    assert other["taskId"] == task_id
    assert other["url"] == hook + "?other"
    if run.version == "1.0":
        assert other["id"] and other["id"] != "cfg-1"  # assigned by the server
    else:
        assert other["id"] == "cfg-2"
    assert run.ok("push_get") == created
    assert sorted(c["id"] for c in run.ok("push_list")["configs"]) == sorted(["cfg-1", other["id"]])
    assert run.ok("push_delete") is None
    assert run.ok("push_list_after_delete") == {"configs": [created]}
    expect_error(run, "push_get_deleted", "TaskNotFoundError", code=-32001, status=404)
    expect_error(run, "push_list_missing_task", "TaskNotFoundError", code=-32001, status=404)
    expect_error(run, "push_create_missing_task", "TaskNotFoundError", code=-32001, status=404)
    assert state_of(run.ok("push_completed")) == "TASK_STATE_COMPLETED"


def test_push_delivery(run: Run) -> None:
    """The remaining config's webhook hears the task finish, with its token and credentials."""
    task_id = run.ok("push_task_id")
    done = [d for d in run.deliveries if delivered(d.body) == (task_id, "completed")]
    assert [d.path for d in done] == ["/hook"]  # the deleted config heard nothing more
    delivery = done[0]
    if run.version == "1.0":
        assert delivery.body["statusUpdate"]["taskId"] == task_id  # a StreamResponse
    else:
        assert delivery.body["kind"] == "task"  # v0.3 configs get the v0.3 Task
        assert texts(delivery.body["artifacts"][0]["parts"]) == ["released"]
    assert delivery.headers["x-a2a-notification-token"] == "tok-1"
    assert delivery.headers["authorization"] == "Bearer s3cret"


def test_push_bodies_parse_with_the_sdk(run: Run) -> None:
    """Every body we pushed is an event the SDK's receiver side reads (v0.3: translated)."""
    assert run.deliveries
    assert [p for p in run.parsed_deliveries if "error" in p] == []
    events = [p["ok"] for p in run.parsed_deliveries]
    task_id = run.ok("push_task_id")
    ours = [e for e in events if task_id in (e.get("task", {}).get("id"), task_of(e))]
    assert ours
    last = ours[-1]
    if run.version == "1.0":
        assert state_of(last["statusUpdate"]) == "TASK_STATE_COMPLETED"
    else:
        # A v0.3 body is the whole Task: the SDK reads it as a task event.
        assert state_of(last["task"]) == "TASK_STATE_COMPLETED"
        assert texts(last["task"]["artifacts"][0]["parts"]) == ["released"]


def task_of(event: dict[str, Any]) -> str | None:
    """The task id of a status or artifact update event."""
    for case in ("statusUpdate", "artifactUpdate"):
        if case in event:
            return str(event[case]["taskId"])
    return None


def test_push_config_in_send_configuration(run: Run) -> None:
    """A webhook given with the message is registered for the new task, and hears it."""
    task_id = run.ok("push_in_send_task_id")
    configs = run.ok("push_in_send")["configs"]
    assert [(c["taskId"], c["url"].rpartition("/")[2], c.get("token")) for c in configs] == [
        (task_id, "hook?send", None)  # the token is a secret: omitted
    ]
    done = [d for d in run.deliveries if delivered(d.body) == (task_id, "completed")]
    assert [d.path for d in done] == ["/hook?send"]
    assert done[0].headers["x-a2a-notification-token"] == "t"


# --- multi-turn ----------------------------------------------------------------------------


def test_multi_turn(run: Run) -> None:
    asked = run.ok("ask")["task"]
    assert state_of(asked) == "TASK_STATE_INPUT_REQUIRED"
    assert asked["status"]["message"]["role"] == "ROLE_AGENT"
    assert texts(asked["status"]["message"]["parts"]) == [QUESTION]
    answered = run.ok("answer")["task"]
    assert (answered["id"], answered["contextId"]) == (asked["id"], asked["contextId"])
    assert state_of(answered) == "TASK_STATE_COMPLETED"
    assert texts(answered["artifacts"][-1]["parts"]) == ["Hello, Ada!"]
    users = [texts(m["parts"]) for m in answered["history"] if m["role"] == "ROLE_USER"]
    assert users == [["ask"], ["Ada"]]


def test_multi_turn_streaming(run: Run) -> None:
    asked = run.ok("ask_streaming")
    task = asked[0]["task"]
    assert kinds(asked)[-1] == "statusUpdate"
    assert state_of(asked[-1]["statusUpdate"]) == "TASK_STATE_INPUT_REQUIRED"
    assert texts(asked[-1]["statusUpdate"]["status"]["message"]["parts"]) == [QUESTION]
    answered = run.ok("answer_streaming")
    # The follow-up resumes the task: the first frame is the task, WORKING, with the message.
    assert kinds(answered)[0] == "task"
    assert answered[0]["task"]["id"] == task["id"]
    assert state_of(answered[0]["task"]) == "TASK_STATE_WORKING"
    assert texts(answered[0]["task"]["history"][-1]["parts"]) == ["Grace"]
    artifacts = [e["artifactUpdate"] for e in answered if "artifactUpdate" in e]
    assert [texts(a["artifact"]["parts"]) for a in artifacts] == [["Hello, Grace!"]]
    assert state_of(answered[-1]["statusUpdate"]) == "TASK_STATE_COMPLETED"


# --- extended card -------------------------------------------------------------------------


def test_extended_card(run: Run) -> None:
    card = run.ok("extended_card")
    assert card["name"] == f"Interop agent for {IDENTITY}"
    assert [skill["id"] for skill in card["skills"]] == ["echo", "secret"]
    interfaces = {(i["protocolBinding"], i["url"]) for i in card["supportedInterfaces"]}
    assert interfaces == {("JSONRPC", run.jsonrpc_url), ("HTTP+JSON", run.url)}
    expect_error(
        run, "extended_card_anonymous", "UnsupportedOperationError", code=-32004, status=400
    )
