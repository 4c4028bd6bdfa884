"""The official ``a2a-sdk`` 0.3.x client against our servers, in the v0.3 dialect.

The 0.3 SDK cannot live next to the 1.x one (both are ``a2a``), so the session creates a
separate virtual environment under ``.pytest_cache`` (``sdk_v0_3_env.py``: reused by later
sessions, upgraded to the newest 0.3.x release when PyPI answers; the ``sdk_v0_3_python``
fixture of ``conftest.py``) and runs ``sdk_v0_3_client.py`` in it, as a subprocess, against a real server on 127.0.0.1 for each adapter and transport (JSON-RPC and
the v0.3 REST binding). The servers publish the v0.3 card fields (``legacy_card_fields``, as
``examples/echo.py --v03-card`` does), which the 0.3 client requires. The script prints what
the SDK parsed as JSON; the tests below assert on it, and on what our webhook sink received.

Without network access on a machine that has no cached environment yet, the module is
skipped with the reason.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest

from interop.servers import ADAPTERS, IDENTITY, QUESTION, TOKEN, Delivery, serve, webhook

pytestmark = pytest.mark.interop

SCRIPT = Path(__file__).with_name("sdk_v0_3_client.py")
TRANSPORTS = ("jsonrpc", "rest")
OPEN_STATES = ("submitted", "working")


# --- one run of the client script per adapter and transport -------------------------------


@dataclass
class Run:
    """What the 0.3 client saw, and what the webhook sink received."""

    adapter: str
    transport: str
    url: str
    out: dict[str, Any]
    deliveries: list[Delivery]

    def error(self, key: str) -> dict[str, Any]:
        """The SDK's error for a call that should fail: a JSON-RPC code or an HTTP status."""
        value = self.out[key]
        assert "error" in value, value
        return dict(value)


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    """Module scope, so that each adapter/transport run is shared by the tests below."""
    return "asyncio"


@pytest.fixture(
    scope="module",
    params=[(adapter, transport) for adapter in ADAPTERS for transport in TRANSPORTS],
    ids=lambda param: "-".join(param),
)
async def run(
    request: pytest.FixtureRequest, sdk_v0_3_python: str, anyio_backend: str
) -> AsyncIterator[Run]:
    adapter, transport = request.param
    async with webhook() as hook, serve(adapter, legacy_card_fields=True) as served:
        with anyio.fail_after(90):
            result = await anyio.run_process(
                [sdk_v0_3_python, str(SCRIPT), served.url, transport, hook.url, TOKEN],
                check=False,
            )
        stderr = result.stderr.decode(errors="replace")
        assert result.returncode == 0, f"the 0.3 client failed:\n{stderr[-4000:]}"
        out = json.loads(result.stdout)
        # The push scenario's task completed; wait for its webhook to hear it.
        push_task = out["push_task_id"]
        await hook.wait_for(
            lambda d: d.body.get("id") == push_task and state_of(d.body) == "completed"
        )
        yield Run(adapter, transport, served.url, out, list(hook.received))


def state_of(task: dict[str, Any]) -> str:
    return str(task["status"]["state"])


def texts(parts: list[dict[str, Any]]) -> list[str]:
    return [part["text"] for part in parts if part.get("kind") == "text"]


def updates(events: list[Any]) -> list[dict[str, Any]]:
    """The update events of a parsed stream (``[task, update]`` pairs)."""
    return [event[1] for event in events if isinstance(event, list) and event[1] is not None]


def expect_error(run: Run, key: str, *, code: int, status: int) -> None:
    """The SDK raised: over JSON-RPC the error ``code``, over REST the HTTP ``status``."""
    failure = run.error(key)
    if run.transport == "jsonrpc":
        assert failure == {"error": "A2AClientJSONRPCError", "code": code}
    else:
        assert failure == {"error": "A2AClientHTTPError", "status": status}


# --- the tests -----------------------------------------------------------------------------


def test_sdk_is_0_3(run: Run) -> None:
    assert run.out["sdk_version"].startswith("0.3.")
    expected = "JsonRpcTransport" if run.transport == "jsonrpc" else "RestTransport"
    assert run.out["transport_class"] == expected


def test_card_discovery(run: Run) -> None:
    card = run.out["card"]
    assert card["name"] == "Interop agent"
    # ``url`` is the preferred (JSON-RPC) interface: the mount root with its trailing slash.
    assert card["url"] == run.url + "/"
    assert card["preferredTransport"] == "JSONRPC"
    assert card["protocolVersion"] == "0.3.0"
    assert {(i["transport"], i["url"]) for i in card["additionalInterfaces"]} == {
        ("JSONRPC", run.url + "/"),
        ("HTTP+JSON", run.url),
    }
    assert card["capabilities"]["streaming"] is True
    assert card["capabilities"]["pushNotifications"] is True
    assert card["supportsAuthenticatedExtendedCard"] is True
    assert [skill["id"] for skill in card["skills"]] == ["echo"]


def test_send_blocking(run: Run) -> None:
    task = run.out["send_blocking"]
    assert task["kind"] == "task"
    assert state_of(task) == "completed"
    assert texts(task["artifacts"][0]["parts"]) == ["hello"]
    assert task["history"][0]["role"] == "user"
    assert texts(task["history"][0]["parts"]) == ["echo hello"]
    assert task["history"][0]["taskId"] == task["id"]


def test_send_message_only_reply(run: Run) -> None:
    reply = run.out["send_message_reply"]
    assert reply["kind"] == "message"
    assert reply["role"] == "agent"
    assert texts(reply["parts"]) == ["released nothing"]
    assert "taskId" not in reply


def test_send_non_blocking(run: Run) -> None:
    held = run.out["send_non_blocking"]
    assert state_of(held) in OPEN_STATES
    working = run.out["non_blocking_working"]
    assert working["id"] == held["id"]
    assert texts(working["status"]["message"]["parts"]) == ["holding"]
    done = run.out["non_blocking_completed"]
    assert done["id"] == held["id"]
    assert texts(done["artifacts"][0]["parts"]) == ["released"]


def test_stream_with_artifact_chunks(run: Run) -> None:
    events = run.out["stream"]
    first_task, first_update = events[0]
    assert first_update is None
    assert state_of(first_task) == "submitted"
    kinds = [update["kind"] for update in updates(events)]
    assert kinds == ["artifact-update"] * 3 + ["status-update"]
    chunks = updates(events)[:3]
    assert [texts(c["artifact"]["parts"]) for c in chunks] == [
        ["chunk 0"],
        ["chunk 1"],
        ["chunk 2"],
    ]
    assert [c.get("append", False) for c in chunks] == [False, True, True]
    assert [c.get("lastChunk", False) for c in chunks] == [False, False, True]
    assert len({c["artifact"]["artifactId"] for c in chunks}) == 1
    final = updates(events)[-1]
    assert state_of(final) == "completed"
    assert final["final"] is True
    # The client's own task tracker folded the chunks into one artifact.
    folded = events[-1][0]
    assert texts(folded["artifacts"][0]["parts"]) == ["chunk 0", "chunk 1", "chunk 2"]


def test_get(run: Run) -> None:
    task = run.out["get"]
    assert task["id"] == run.out["stream"][0][0]["id"]
    assert state_of(task) == "completed"
    assert texts(task["artifacts"][0]["parts"]) == ["chunk 0", "chunk 1", "chunk 2"]
    assert len(task["history"]) == 1  # historyLength=1
    expect_error(run, "get_missing", code=-32001, status=404)


def test_cancel(run: Run) -> None:
    assert state_of(run.out["cancel"]) == "canceled"
    expect_error(run, "cancel_again", code=-32002, status=409)


def test_resubscribe(run: Run) -> None:
    events = run.out["resubscribe"]
    task_id = run.out["resubscribe_task_id"]
    first_task, first_update = events[0]
    assert first_update is None
    assert first_task["id"] == task_id
    assert state_of(first_task) in OPEN_STATES
    assert texts(run.out["resubscribe_release"]["parts"]) == [f"released {task_id}"]
    later = updates(events)
    artifacts = [u for u in later if u["kind"] == "artifact-update"]
    assert [texts(a["artifact"]["parts"]) for a in artifacts] == [["released"]]
    assert later[-1]["kind"] == "status-update"
    assert state_of(later[-1]) == "completed"
    assert later[-1]["final"] is True


def test_push_config_crud(run: Run) -> None:
    task_id = run.out["push_task_id"]
    created = run.out["push_set"]
    assert created["taskId"] == task_id
    config = created["pushNotificationConfig"]
    assert config["id"] == "cfg-1"
    # The secrets are omitted from every reply (the webhook gets them: test_push_delivery).
    # (The SDK's REST client shows an omitted field as "", its JSON-RPC one leaves it out.)
    assert not config.get("token")
    assert config["authentication"]["schemes"] == ["Bearer"]
    assert not config["authentication"].get("credentials")
    assert run.out["push_set_other"]["pushNotificationConfig"]["id"] == "cfg-2"
    assert run.out["push_get"] == created
    listed = run.out["push_list"]
    assert sorted(c["pushNotificationConfig"]["id"] for c in listed) == ["cfg-1", "cfg-2"]
    assert {c["taskId"] for c in listed} == {task_id}
    if run.transport == "jsonrpc":
        assert run.out["push_delete"] == {"result": None}
    else:
        assert run.out["push_delete"] == {"status": 200}
    after = run.out["push_list_after_delete"]
    assert [c["pushNotificationConfig"]["id"] for c in after] == ["cfg-1"]
    expect_error(run, "push_get_deleted", code=-32001, status=404)
    assert state_of(run.out["push_completed"]) == "completed"


def test_push_delivery(run: Run) -> None:
    """v0.3 configs get the v0.3 Task as the body, with the token and the credentials."""
    task_id = run.out["push_task_id"]
    ours = [d for d in run.deliveries if d.body.get("id") == task_id]
    done = [d for d in ours if state_of(d.body) == "completed"]
    assert [d.path for d in done] == ["/hook"]  # cfg-2 was deleted before the task went on
    delivery = done[0]
    assert delivery.body["kind"] == "task"
    assert texts(delivery.body["artifacts"][0]["parts"]) == ["released"]
    assert delivery.headers["x-a2a-notification-token"] == "tok-1"
    assert delivery.headers["authorization"] == "Bearer s3cret"


def test_multi_turn(run: Run) -> None:
    asked = run.out["ask"]
    assert state_of(asked) == "input-required"
    assert texts(asked["status"]["message"]["parts"]) == [QUESTION]
    answered = run.out["answer"]
    assert answered["id"] == asked["id"]
    assert answered["contextId"] == asked["contextId"]
    assert state_of(answered) == "completed"
    assert texts(answered["artifacts"][-1]["parts"]) == ["Hello, Ada!"]
    users = [texts(m["parts"]) for m in answered["history"] if m["role"] == "user"]
    assert users == [["ask"], ["Ada"]]


def test_multi_turn_streaming(run: Run) -> None:
    asked = updates(run.out["ask_streaming"])
    assert asked[-1]["kind"] == "status-update"
    assert state_of(asked[-1]) == "input-required"
    assert asked[-1]["final"] is True
    answered = run.out["answer_streaming"]
    assert answered[0][0]["id"] == run.out["ask_streaming"][0][0]["id"]
    later = updates(answered)
    artifacts = [u for u in later if u["kind"] == "artifact-update"]
    assert [texts(a["artifact"]["parts"]) for a in artifacts] == [["Hello, Grace!"]]
    assert state_of(later[-1]) == "completed"
    assert later[-1]["final"] is True


def test_extended_card(run: Run) -> None:
    card = run.out["extended_card"]
    assert card["name"] == f"Interop agent for {IDENTITY}"
    assert [skill["id"] for skill in card["skills"]] == ["echo", "secret"]
    assert card["url"] == run.url + "/"
