"""The durable example (examples/durable.py) as server processes, and what the durability
tests read of its tasks: shared by tests/sql/test_durable.py and tests/redis/test_durable.py.
"""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path
from typing import Any

import httpx

from helpers.processes import ServerProcess

__all__ = ["DURABLE", "Durable", "get_task", "send", "step_chunks", "wait_all", "wait_steps"]

DURABLE = Path(__file__).parents[2] / "examples" / "durable.py"
V1 = {"A2A-Version": "1.0", "Content-Type": "application/json"}
TERMINAL = ("TASK_STATE_COMPLETED", "TASK_STATE_FAILED", "TASK_STATE_CANCELED")


class Durable(ServerProcess):
    """One replica of the durable example, started and ready."""

    def __init__(self, log: Path, *args: str) -> None:
        super().__init__(DURABLE, "--log-level", "warning", *args, log=log, name="durable.py")
        self.wait_ready()

    def pause(self) -> None:
        """SIGSTOP: the process stops renewing its lease, as a long GC pause or a partition."""
        os.kill(self.process.pid, signal.SIGSTOP)

    def resume(self) -> None:
        """SIGCONT: the paused process goes on as if nothing happened."""
        os.kill(self.process.pid, signal.SIGCONT)


def _rpc(client: httpx.Client, url: str, method: str, params: Any) -> Any:
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
    doc = client.post(url + "/", content=body, headers=V1).json()
    assert "error" not in doc, doc
    return doc["result"]


def send(client: httpx.Client, url: str, text: str = "go", message_id: str = "") -> str:
    """A non-blocking SendMessage (a new ``messageId`` unless given); the task's id."""
    message_id = message_id or os.urandom(8).hex()
    message = {"messageId": message_id, "role": "ROLE_USER", "parts": [{"text": text}]}
    params = {"message": message, "configuration": {"returnImmediately": True}}
    task_id: str = _rpc(client, url, "SendMessage", params)["task"]["id"]
    return task_id


def get_task(client: httpx.Client, url: str, task_id: str) -> dict[str, Any]:
    """GetTask's task."""
    task: dict[str, Any] = _rpc(client, url, "GetTask", {"id": task_id})
    return task


def step_chunks(task: dict[str, Any]) -> list[tuple[int, int]]:
    """``(step, attempt)`` of each chunk of the task's ``steps`` artifact, in order."""
    chunks = []
    for artifact in task.get("artifacts", []):
        if artifact["artifactId"] == "steps":
            for part in artifact["parts"]:
                _, step, _, attempt = part["text"].split()
                chunks.append((int(step), int(attempt)))
    return chunks


def wait_all(
    client: httpx.Client, url: str, task_ids: list[str], timeout: float = 60.0
) -> dict[str, dict[str, Any]]:
    """Every task once it is terminal (fails the test after ``timeout`` seconds)."""
    deadline = time.monotonic() + timeout
    done: dict[str, dict[str, Any]] = {}
    while len(done) < len(task_ids):
        assert time.monotonic() < deadline, f"not finished: {set(task_ids) - set(done)}"
        for task_id in task_ids:
            if task_id not in done:
                task = get_task(client, url, task_id)
                if task["status"]["state"] in TERMINAL:
                    done[task_id] = task
        time.sleep(0.1)
    return done


def wait_steps(client: httpx.Client, url: str, task_ids: list[str], steps: int) -> None:
    """Until every task has streamed at least ``steps`` chunks."""
    deadline = time.monotonic() + 30
    while not all(
        len(step_chunks(get_task(client, url, task_id))) >= steps for task_id in task_ids
    ):
        assert time.monotonic() < deadline, "the tasks did not make progress"
        time.sleep(0.05)
