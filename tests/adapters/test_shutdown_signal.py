"""SIGTERM under uvicorn (``a2a_starlette.serve``) and aiohttp (``web.run_app``): the process
exits in bounded time whatever its agents do, and every client hears how its call ended.

Each test starts ``shutdown_server.py`` in a subprocess on 127.0.0.1, opens a blocking send,
a streaming send and a subscription whose agents never finish, sends SIGTERM, and reads
what each client received. The time limits are only guards against a hang.
"""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from a2a_core.server import SHUTDOWN_TEXT

pytestmark = pytest.mark.anyio

SCRIPT = Path(__file__).with_name("shutdown_server.py")
HANG_GUARD = 30.0
HEADERS = {"A2A-Version": "1.0", "Content-Type": "application/json"}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(params=["starlette", "aiohttp"])
def served(request: pytest.FixtureRequest) -> Iterator[tuple[subprocess.Popen[bytes], str]]:
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, str(SCRIPT), str(request.param), str(port), "0.5"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        yield process, f"http://127.0.0.1:{port}"
    finally:
        if process.poll() is None:
            process.kill()
        process.wait(10)
        if process.stderr is not None:
            process.stderr.close()


async def wait_until_up(client: httpx.AsyncClient, base: str) -> None:
    with anyio.fail_after(HANG_GUARD):
        while True:
            try:
                if (await client.get(f"{base}/.well-known/agent-card.json")).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            await anyio.sleep(0.05)


def rpc(method: str, params: dict[str, Any], id: int = 1) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": id, "method": method, "params": params}


def send(text: str, mid: str, **configuration: Any) -> dict[str, Any]:
    params: dict[str, Any] = {
        "message": {"messageId": mid, "role": "ROLE_USER", "parts": [{"text": text}]}
    }
    if configuration:
        params["configuration"] = configuration
    return params


async def read_events(response: httpx.Response, seen: list[Any]) -> None:
    async for line in response.aiter_lines():
        if line.startswith("data:"):
            seen.append(json.loads(line[5:]))


async def test_sigterm_ends_every_call_and_exits(
    served: tuple[subprocess.Popen[bytes], str],
) -> None:
    process, base = served
    blocking: dict[str, Any] = {}
    in_thread: dict[str, Any] = {}
    streamed: list[Any] = []
    subscribed: list[Any] = []
    async with httpx.AsyncClient(timeout=HANG_GUARD, headers=HEADERS) as client:
        await wait_until_up(client, base)
        waiting = (
            await client.post(f"{base}/", json=rpc("SendMessage", send("ask", "m-ask")))
        ).json()["result"]["task"]
        assert waiting["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"

        async def blocking_send() -> None:
            reply = await client.post(f"{base}/", json=rpc("SendMessage", send("forever", "m-b")))
            blocking.update(reply.json())

        async def blocked_thread() -> None:
            reply = await client.post(f"{base}/", json=rpc("SendMessage", send("blocked", "m-t")))
            in_thread.update(reply.json())

        async def stream(body: dict[str, Any], seen: list[Any]) -> None:
            async with client.stream("POST", f"{base}/", json=body) as response:
                await read_events(response, seen)

        with anyio.fail_after(HANG_GUARD):
            async with anyio.create_task_group() as tg:
                tg.start_soon(blocking_send)
                tg.start_soon(blocked_thread)
                tg.start_soon(stream, rpc("SendStreamingMessage", send("forever", "m-s")), streamed)
                tg.start_soon(stream, rpc("SubscribeToTask", {"id": waiting["id"]}), subscribed)
                while len(streamed) < 2 or not subscribed:  # the task, working; the snapshot
                    await anyio.sleep(0.02)
                process.send_signal(signal.SIGTERM)
            exit_code = await anyio.to_thread.run_sync(process.wait, HANG_GUARD)
    # uvicorn re-raises the signal once it has shut down, so its process ends "by" SIGTERM.
    assert exit_code in (0, -signal.SIGTERM)
    failed = blocking["result"]["task"]["status"]
    assert failed["state"] == "TASK_STATE_FAILED"
    assert failed["message"]["parts"][0]["text"] == SHUTDOWN_TEXT
    # The agent stuck in its thread made no task: its caller hears the server is going.
    assert in_thread["error"]["code"] == -32050
    last = streamed[-1]["result"]["statusUpdate"]["status"]
    assert last["state"] == "TASK_STATE_FAILED"
    # The subscription to a task waiting for input ends with a final error frame, the task
    # itself untouched (another replica, or a restart with a durable backend, can go on).
    assert subscribed[-1]["error"]["code"] == -32050
