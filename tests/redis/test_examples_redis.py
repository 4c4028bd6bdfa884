"""The examples with ``--redis URL``: two replicas of one example, one conversation.

The multi-turn example runs twice (one process per adapter) on one Redis prefix: the first
turn goes to one replica, the answer to the other, which continues the same task.
"""

from __future__ import annotations

import subprocess
import sys
import time
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from redis_harness import delete_prefix, result, send_params

from helpers.processes import free_port

pytestmark = pytest.mark.anyio

EXAMPLES = Path(__file__).parents[2] / "examples"


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(timeout=20) as http:
        yield http


async def test_multi_turn_example_across_two_replicas(
    redis_url: str, tmp_path: Path, client: httpx.AsyncClient
) -> None:
    prefix = f"a2a-test:{uuid.uuid4().hex[:12]}:"
    processes: list[subprocess.Popen[bytes]] = []
    urls = []
    try:
        for adapter in ("starlette", "aiohttp"):
            port = free_port()
            urls.append(f"http://127.0.0.1:{port}")
            command = [
                sys.executable, str(EXAMPLES / "multi_turn.py"), "--adapter", adapter,
                "--port", str(port), "--redis", redis_url, "--redis-prefix", prefix,
            ]  # fmt: skip
            with (tmp_path / f"{adapter}.log").open("wb") as log:
                processes.append(
                    subprocess.Popen(
                        command, cwd=EXAMPLES.parent, stdout=log, stderr=subprocess.STDOUT
                    )
                )
        deadline = time.monotonic() + 20
        for url, process in zip(urls, processes, strict=True):
            while True:
                assert process.poll() is None, (tmp_path / "starlette.log").read_text()
                assert time.monotonic() < deadline, "the example did not start"
                try:
                    card = await client.get(url + "/.well-known/agent-card.json")
                    if card.status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                time.sleep(0.05)
        first = (await result(client, urls[0], "SendMessage", send_params("hi")))["task"]
        assert first["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
        answer = send_params("Ada")
        answer["message"]["taskId"] = first["id"]
        done = (await result(client, urls[1], "SendMessage", answer))["task"]
        assert done["id"] == first["id"]
        assert done["status"]["state"] == "TASK_STATE_COMPLETED"
        assert done["artifacts"][0]["parts"][0]["text"] == "Nice to meet you, Ada!"
    finally:
        for process in processes:
            process.terminate()
            process.wait(10)
        delete_prefix(redis_url, prefix)
