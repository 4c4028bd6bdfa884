"""The durable example (examples/durable.py) as server processes, what the durability
tests read of its tasks, and the scenarios of two replicas they run alike on PostgreSQL and
on Redis: shared by tests/sql/test_durable.py and tests/redis/test_durable.py.
"""

from __future__ import annotations

import json
import os
import signal
import threading
import time
from pathlib import Path
from typing import Any

import httpx

from helpers.processes import ServerProcess

__all__ = [
    "DURABLE",
    "Durable",
    "copies_run_once",
    "get_task",
    "paused_replica_writes_nothing",
    "rolling_restart_fails_nothing",
    "send",
    "step_chunks",
    "wait_all",
    "wait_steps",
]

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


# --- scenarios of two replicas, run the same on PostgreSQL and on Redis ---------------------


def paused_replica_writes_nothing(log: Path, args: list[str], steps: int) -> None:
    """Replica a is paused (SIGSTOP) past its lease while it runs a task, b takes the task
    over, a goes on (SIGCONT) and is fenced: the task is b's second attempt alone."""
    a = Durable(log, *args, "--replica-id", "a")
    b = Durable(log, *args, "--replica-id", "b")
    try:
        with httpx.Client(timeout=10) as client:
            task_id = send(client, a.url)
            wait_steps(client, a.url, [task_id], 1)
            a.pause()  # past its lease: b takes the task over
            deadline = time.monotonic() + 20
            while get_task(client, b.url, task_id).get("metadata", {}).get("a2a.execution") is None:
                assert time.monotonic() < deadline, "b did not take the task over"
                time.sleep(0.1)
            a.resume()  # a wakes up mid-step and writes its next chunk: refused
            task = wait_all(client, b.url, [task_id])[task_id]
            time.sleep(1.0)  # what a would still write would land by now
            after = get_task(client, b.url, task_id)
    finally:
        a.resume()
        a.kill()
        b.stop()
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    assert after == task
    assert step_chunks(task) == [(step, 2) for step in range(1, steps + 1)]
    assert "taken over by epoch 2" in a.output()


def rolling_restart_fails_nothing(log: Path, args: list[str]) -> None:
    """Two replicas stopped (SIGTERM) and started again in turn while sends go on to both:
    every one of the 16 tasks completes."""
    replicas = {name: Durable(log, *args, "--replica-id", name) for name in ("a", "b")}
    task_ids: list[str] = []
    try:
        with httpx.Client(timeout=10) as client:
            for name in ("a", "b"):
                other = replicas["b" if name == "a" else "a"]
                task_ids += [send(client, replicas[name].url) for _ in range(4)]
                task_ids += [send(client, other.url) for _ in range(2)]
                time.sleep(0.5)
                replicas[name].stop()  # a deploy: SIGTERM, drain, hand off
                task_ids += [send(client, other.url) for _ in range(2)]  # sends go on
                replicas[name] = Durable(log, *args, "--replica-id", name)
            done = wait_all(client, replicas["a"].url, task_ids)
    finally:
        for replica in replicas.values():
            replica.stop()
    states = {task_id: t["status"]["state"] for task_id, t in done.items()}
    assert set(states.values()) == {"TASK_STATE_COMPLETED"}, states
    assert len(done) == len(task_ids) == 16


def copies_run_once(log: Path, args: list[str], key: str, steps: int) -> None:
    """Five messages, each sent at once to both replicas and once more later: one task per
    message, its agent run once. ``key`` makes the messageIds this test's own."""
    a = Durable(log, *args, "--replica-id", "a")
    b = Durable(log, *args, "--replica-id", "b")
    answers: dict[str, str] = {}
    try:
        with httpx.Client(timeout=10) as client:
            for round_ in range(5):
                mid = f"copy-{round_}-{key}"
                threads = [
                    threading.Thread(target=_send_into, args=(answers, f"{round_}{url}", url, mid))
                    for url in (a.url, b.url)
                ]
                for thread in threads:
                    thread.start()
                for thread in threads:
                    thread.join(10)
                answers[f"{round_}again"] = send(client, b.url, message_id=mid)  # a retry later
            task_ids = sorted(set(answers.values()))
            done = wait_all(client, a.url, task_ids)
    finally:
        a.stop()
        b.stop()
    assert len(answers) == 15 and len(task_ids) == 5  # one task per message, whoever answered
    for task in done.values():
        assert task["status"]["state"] == "TASK_STATE_COMPLETED"
        assert step_chunks(task) == [(step, 1) for step in range(1, steps + 1)]  # run once


def _send_into(answers: dict[str, str], key: str, url: str, message_id: str) -> None:
    with httpx.Client(timeout=10) as client:
        answers[key] = send(client, url, message_id=message_id)
