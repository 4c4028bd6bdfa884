"""The ``a2aserve`` command line against our server: every verb, the v1.0 output whatever the
dialect spoken, the exit codes, and secrets kept out of what it prints.

``main`` runs its own event loop, so each command runs in a worker thread while the server
runs in the test's; two commands also run as users run them, in a subprocess, and so does
every command that speaks gRPC (grpc.aio serves one event loop per process).
"""

from __future__ import annotations

import io
import json
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from a2a_core.cli import main
from interop.servers import TOKEN, Served, serve

pytestmark = pytest.mark.anyio

INTERFACES = [
    *(
        pytest.param(["--binding", binding, "--a2a-version", version], id=f"{binding}-{version}")
        for binding in ("jsonrpc", "http-json")
        for version in ("1.0", "0.3")
    ),
    pytest.param(["--binding", "grpc"], id="grpc-1.0"),
]


class Ran:
    def __init__(self, code: int, out: str, err: str) -> None:
        self.code, self.out, self.err = code, out, err

    def json(self) -> Any:
        return json.loads(self.out)

    def lines(self) -> list[Any]:
        return [json.loads(line) for line in self.out.splitlines()]


async def a2aserve(*args: str) -> Ran:
    if "grpc" in args:
        # grpc.aio serves one event loop per process: a command that speaks gRPC runs as
        # users run it, in its own process, not beside the server's loop.
        done = await anyio.run_process([sys.executable, "-m", "a2a_core", *args], check=False)
        return Ran(done.returncode, done.stdout.decode(), done.stderr.decode())
    out, err = io.StringIO(), io.StringIO()
    code = await anyio.to_thread.run_sync(lambda: main(list(args), stdout=out, stderr=err))
    return Ran(code, out.getvalue(), err.getvalue())


@pytest.fixture(params=["starlette", "aiohttp"])
async def served(request: pytest.FixtureRequest) -> AsyncIterator[Served]:
    async with serve(request.param, legacy_card_fields=True, grpc=True) as running:
        yield running


def _no_v0_3_spelling(value: Any) -> None:
    """v1.0 everywhere: no ``kind``, no ``content``, no snake_case, enum names."""
    text = json.dumps(value)
    assert '"kind"' not in text and '"content"' not in text
    assert '"final"' not in text and "_id" not in text
    assert '"completed"' not in text and '"user"' not in text


async def test_card(served: Served) -> None:
    ran = await a2aserve("card", served.url, "-o", "json")
    assert ran.code == 0, ran.err
    card = ran.json()
    assert card["name"] == "Interop agent"
    assert "url" not in card and "preferredTransport" not in card  # the v1.0 card only
    assert {i["protocolVersion"] for i in card["supportedInterfaces"]} == {"1.0", "0.3"}
    text = await a2aserve("card", served.url)
    assert text.code == 0
    assert text.out.startswith("Interop agent 1.0.0\n")
    assert "skill echo: Echo" in text.out


async def test_the_extended_card_with_a_token_from_the_environment(
    served: Served, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("A2A_TOKEN", TOKEN)
    ran = await a2aserve("card", served.url, "--extended", "-o", "json")
    assert ran.code == 0, ran.err
    assert ran.json()["name"] == "Interop agent for alice"
    assert TOKEN not in ran.out + ran.err


@pytest.mark.parametrize("interface", INTERFACES)
async def test_send_prints_the_task_as_v1_json(served: Served, interface: list[str]) -> None:
    ran = await a2aserve("send", served.url, "echo hello", *interface, "-o", "json")
    assert ran.code == 0, ran.err
    task = ran.json()
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    assert task["artifacts"][0]["parts"] == [{"text": "hello"}]
    assert task["history"][0]["role"] == "ROLE_USER"
    _no_v0_3_spelling(task)


async def test_send_as_text(served: Served) -> None:
    ran = await a2aserve("send", served.url, "echo hello")
    assert ran.code == 0
    reply, status = ran.out.splitlines()
    assert reply == "hello"
    assert status.startswith("task ") and " completed (context " in status


@pytest.mark.parametrize("interface", INTERFACES)
async def test_send_stream_prints_one_event_per_line(served: Served, interface: list[str]) -> None:
    ran = await a2aserve("send", served.url, "stream 3", "--stream", *interface, "-o", "json")
    assert ran.code == 0, ran.err
    lines = ran.lines()
    ids = [line.pop("eventId", None) for line in lines]
    if "grpc" in interface:
        assert ids == [None] * len(lines)  # gRPC has no event ids
    else:
        assert ids == [str(i) for i in range(1, len(lines) + 1)]  # the SSE ids, none twice
    assert [next(iter(line)) for line in lines] == [
        "task",
        "artifactUpdate",
        "artifactUpdate",
        "artifactUpdate",
        "statusUpdate",
    ]
    assert lines[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"
    for line in lines:
        _no_v0_3_spelling(line)


async def test_no_wait_then_a_follow_up(served: Served) -> None:
    asked = await a2aserve("send", served.url, "ask", "--no-wait", "-o", "json")
    assert asked.code == 0
    task = asked.json()
    follow = await a2aserve(
        "send", served.url, "Ada", "--task-id", task["id"], "--context-id", task["contextId"]
    )
    assert follow.code == 0, follow.err
    assert follow.out.splitlines()[0] == "Hello, Ada!"
    listed = await a2aserve("list", served.url, "--state", "TASK_STATE_COMPLETED", "-o", "json")
    assert task["id"] in {t["id"] for t in listed.json()["tasks"]}
    held = await a2aserve("send", served.url, "hold", "--no-wait", "-o", "json")
    assert held.json()["status"]["state"] in {"TASK_STATE_SUBMITTED", "TASK_STATE_WORKING"}
    canceled = await a2aserve("cancel", served.url, held.json()["id"], "-o", "json")
    assert canceled.code == 0
    assert canceled.json()["status"]["state"] == "TASK_STATE_CANCELED"


async def test_get_and_list(served: Served) -> None:
    sent = (await a2aserve("send", served.url, "echo one", "-o", "json")).json()
    got = await a2aserve("get", served.url, sent["id"], "--history", "1", "-o", "json")
    assert got.code == 0
    assert got.json()["id"] == sent["id"] and len(got.json()["history"]) == 1
    await a2aserve("send", served.url, "ask")
    waiting = await a2aserve(
        "list",
        served.url,
        "--state",
        "TASK_STATE_INPUT_REQUIRED",
        "--page-size",
        "10",
        "-o",
        "json",
    )
    assert waiting.code == 0
    page = waiting.json()
    assert page["tasks"] and {t["status"]["state"] for t in page["tasks"]} == {
        "TASK_STATE_INPUT_REQUIRED"
    }
    text = await a2aserve("list", served.url)
    assert text.out.splitlines()[-1].endswith("tasks")


@pytest.mark.parametrize("interface", INTERFACES[:-1])  # SSE's ids
async def test_subscribe_after_an_event_id_prints_exactly_what_followed(
    served: Served, interface: list[str]
) -> None:
    streamed = await a2aserve("send", served.url, "stream 3", "--stream", "-o", "json")
    lines = streamed.lines()
    task_id = lines[0]["task"]["id"]
    ran = await a2aserve(
        "subscribe", served.url, task_id, "--last-event-id", "2", *interface, "-o", "json"
    )
    assert ran.code == 0, ran.err
    assert ran.lines() == lines[2:]


async def test_an_event_id_means_nothing_on_grpc(served: Served) -> None:
    ran = await a2aserve("subscribe", served.url, "t", "--last-event-id", "2", "--binding", "grpc")
    assert ran.code != 0
    assert "gRPC streams carry no event ids" in ran.err


async def test_subscribe_to_a_running_task(served: Served) -> None:
    held = (await a2aserve("send", served.url, "hold", "--no-wait", "-o", "json")).json()
    async with anyio.create_task_group() as tg:
        results: list[Ran] = []

        async def follow() -> None:
            results.append(await a2aserve("subscribe", served.url, held["id"], "-o", "json"))

        tg.start_soon(follow)
        await anyio.sleep(0.5)
        await a2aserve("send", served.url, f"release {held['id']}")
    lines = results[0].lines()
    assert lines[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"
    assert any("artifactUpdate" in line for line in lines)


@pytest.mark.parametrize("interface", INTERFACES)
async def test_an_agent_error_is_exit_1_with_its_reason(
    served: Served, interface: list[str]
) -> None:
    ran = await a2aserve("get", served.url, "no-such-task", *interface)
    assert ran.code == 1
    assert ran.out == ""
    assert ran.err == "error: TASK_NOT_FOUND -32001: Task not found\n"


async def test_usage_errors_are_exit_2(served: Served) -> None:
    assert (await a2aserve("get", served.url)).code == 2  # no TASK_ID
    assert (await a2aserve("send", served.url, "x", "--binding", "soap")).code == 2
    bad_header = await a2aserve("card", served.url, "-H", "no colon")
    assert (bad_header.code, bad_header.err) == (
        2,
        "a2aserve: -H takes 'Name: value', not 'no colon'\n",
    )
    bad_state = await a2aserve("list", served.url, "--state", "DONE")
    assert bad_state.code == 2 and "TASK_STATE_INPUT_REQUIRED" in bad_state.err
    legacy = await a2aserve("list", served.url, "--a2a-version", "0.3")
    assert legacy.code == 2 and "ListTasks is not part of A2A 0.3" in legacy.err


async def test_no_agent_is_exit_3_and_secrets_are_never_printed(served: Served) -> None:
    secret = ["--token", "tok-SECRET", "--api-key", "key-SECRET", "-H", "X-Pass: hdr-SECRET"]
    closed = await a2aserve("send", "http://127.0.0.1:9", "hi", *secret)
    assert closed.code == 3
    assert "could not fetch the agent card" in closed.err
    no_card = await a2aserve("card", served.url + "/nothing-here", *secret)
    assert no_card.code == 3 and "HTTP 404" in no_card.err
    failed = await a2aserve("get", served.url, "nope", *secret)
    assert failed.code == 1
    for ran in (closed, no_card, failed):
        assert "SECRET" not in ran.out + ran.err


async def test_the_console_script_and_python_m(served: Served) -> None:
    script = Path(sys.executable).with_name("a2aserve")
    for command in ([str(script)], [sys.executable, "-m", "a2a_core"]):
        done = await anyio.run_process(
            [*command, "send", served.url, "echo via subprocess"], check=False
        )
        assert done.returncode == 0, done.stderr
        assert done.stdout.decode().splitlines()[0] == "via subprocess"
    usage = await anyio.run_process([sys.executable, "-m", "a2a_core"], check=False)
    assert usage.returncode == 2 and b"usage: a2aserve" in usage.stderr
