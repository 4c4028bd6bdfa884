"""Work that survives (issue "work that survives"), over real processes and databases.

``examples/durable.py`` runs as its own processes on SQLite, PostgreSQL and MariaDB/MySQL:
killed with ``kill -9`` and started again (every engine: a restart runs what was left
running), and on PostgreSQL as two replicas (the other replica takes over a killed one's
tasks, a rolling restart fails none, and a paused replica writes nothing after the
takeover). The same on Redis: tests/redis/test_durable.py; in process:
tests/runtime/test_recovery.py.
"""

from __future__ import annotations

import threading
from pathlib import Path

import anyio
import httpx
import pytest

from a2a_sql import upgrade
from helpers.durable import (
    Durable,
    copies_run_once,
    paused_replica_writes_nothing,
    rolling_restart_fails_nothing,
    send,
    step_chunks,
    wait_all,
    wait_steps,
)

STEPS = 6


def _prepare(db_url: str, prefix: str) -> list[str]:
    anyio.run(upgrade, db_url, prefix)  # the deployment step (SQLite would do it by itself)
    return ["--sql", db_url, "--sql-prefix", prefix, "--steps", str(STEPS)]


@pytest.mark.parametrize("policy", ["retry", "resume"])
def test_a_restart_after_kill_9_runs_the_next_attempt(
    db_url: str, prefix: str, tmp_path: Path, policy: str
) -> None:
    args = [*_prepare(db_url, prefix), "--recovery", policy, "--step-seconds", "0.3"]
    args += ["--replica-id", "a", "--lease-ttl", "2"]
    log = tmp_path / "server.log"
    first = Durable(log, *args)
    second = None
    try:
        with httpx.Client(timeout=10) as client:
            task_ids = [send(client, first.url) for _ in range(3)]
            wait_steps(client, first.url, task_ids, 2)
            first.kill()
            second = Durable(log, *args)  # the same replica id: takes its tasks back at once
            done = wait_all(client, second.url, task_ids)
    finally:
        first.kill()
        if second is not None:
            second.stop()
    for task in done.values():
        assert task["status"]["state"] == "TASK_STATE_COMPLETED", task["status"]
        assert task["status"]["message"]["parts"][0]["text"] == "done after 2 attempts"
        assert task["metadata"]["a2a.execution"] == {"attempt": 2, "lost": 1, "epoch": 2}
        chunks = step_chunks(task)
        if policy == "retry":  # from step 1 again: the artifact of the same id restarted
            assert chunks == [(step, 2) for step in range(1, STEPS + 1)]
        else:  # from the checkpoint: the steps done before stay, each step at least once
            assert sorted({step for step, _ in chunks}) == list(range(1, STEPS + 1))
            assert chunks[0] == (1, 1) and chunks[-1] == (STEPS, 2)
            assert len(chunks) <= STEPS + 1  # at most the step after the last checkpoint
        said = [m["parts"][0]["text"] for m in task["history"]]
        assert "Attempt 2 starts: the server restarted before the task finished." in said


def test_a_stop_hands_off_and_the_next_start_resumes(
    db_url: str, prefix: str, tmp_path: Path
) -> None:
    args = [*_prepare(db_url, prefix), "--recovery", "resume", "--step-seconds", "0.3"]
    args += ["--shutdown-grace", "0.2"]
    log = tmp_path / "server.log"
    first = Durable(log, *args)
    second = None
    try:
        with httpx.Client(timeout=10) as client:
            task_id = send(client, first.url)
            wait_steps(client, first.url, [task_id], 2)
            first.stop()  # SIGTERM: drained, then handed off rather than failed
            assert first.process.returncode == 0
            second = Durable(log, *args)
            task = wait_all(client, second.url, [task_id])[task_id]
    finally:
        first.kill()
        if second is not None:
            second.stop()
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    chunks = step_chunks(task)
    # Resumed at its checkpoint: every step once, but the one a stop caught between its
    # chunk and its checkpoint, which the next attempt does again (at least once).
    assert sorted({step for step, _ in chunks}) == list(range(1, STEPS + 1))
    assert len(chunks) <= STEPS + 1 and chunks[0] == (1, 1) and chunks[-1] == (STEPS, 2)


def _postgres_only(db_url: str) -> None:
    if not db_url.startswith("postgresql"):
        pytest.skip("several replicas share PostgreSQL only (SQLite and MySQL: one process)")


@pytest.mark.parametrize("policy", ["retry", "resume"])
def test_the_other_replica_takes_over_20_tasks_after_kill_9(
    db_url: str, prefix: str, tmp_path: Path, policy: str
) -> None:
    _postgres_only(db_url)
    args = [*_prepare(db_url, prefix), "--recovery", policy, "--step-seconds", "0.25"]
    args += ["--lease-ttl", "2"]
    log = tmp_path / "server.log"
    a = Durable(log, *args, "--replica-id", "a")
    b = Durable(log, *args, "--replica-id", "b")
    frames: dict[str, list[tuple[int, dict[str, object]]]] = {}
    try:
        with httpx.Client(timeout=30) as client:
            task_ids = [send(client, a.url) for _ in range(20)]
            followers = [_follow(b.url, task_id, frames) for task_id in task_ids[:5]]
            wait_steps(client, a.url, task_ids, 1)
            a.kill()
            done = wait_all(client, b.url, task_ids)
            for follower in followers:
                follower.join(30)
    finally:
        a.kill()
        b.stop()
    assert {t["status"]["state"] for t in done.values()} == {"TASK_STATE_COMPLETED"}
    for task in done.values():
        chunks = step_chunks(task)
        if policy == "retry":
            assert chunks == [(s, 2) for s in range(1, STEPS + 1)]
        else:  # resumed at its checkpoint: every step once, maybe the one it was on twice
            assert sorted({s for s, _ in chunks}) == list(range(1, STEPS + 1))
            assert chunks[-1] == (STEPS, 2) and len(chunks) <= STEPS + 1
    for task_id in task_ids[:5]:
        seen = frames[task_id]
        ids = [frame_id for frame_id, _ in seen[1:]]  # after the snapshot, every event once
        assert ids == list(range(ids[0], ids[0] + len(ids))), ids
        states = [_state(data) for _, data in seen if _state(data)]
        assert "TASK_STATE_FAILED" not in states and states[-1] == "TASK_STATE_COMPLETED"


@pytest.mark.parametrize("policy", ["retry", "resume"])
def test_a_rolling_restart_under_load_fails_no_task(
    db_url: str, prefix: str, tmp_path: Path, policy: str
) -> None:
    _postgres_only(db_url)
    args = [*_prepare(db_url, prefix), "--recovery", policy, "--step-seconds", "0.2"]
    args += ["--shutdown-grace", "0.3", "--lease-ttl", "2"]
    rolling_restart_fails_nothing(tmp_path / "server.log", args)


def test_a_paused_replica_writes_nothing_after_the_takeover(
    db_url: str, prefix: str, tmp_path: Path
) -> None:
    _postgres_only(db_url)
    args = [*_prepare(db_url, prefix), "--recovery", "retry", "--step-seconds", "0.3"]
    args += ["--lease-ttl", "1.5"]
    paused_replica_writes_nothing(tmp_path / "server.log", args, STEPS)


def _follow(
    url: str, task_id: str, frames: dict[str, list[tuple[int, dict[str, object]]]]
) -> threading.Thread:
    """SubscribeToTask on ``url`` in a thread; its frames land in ``frames[task_id]``."""
    import json

    seen: list[tuple[int, dict[str, object]]] = []
    frames[task_id] = seen
    body = json.dumps(
        {"jsonrpc": "2.0", "id": 1, "method": "SubscribeToTask", "params": {"id": task_id}}
    )
    ready = threading.Event()

    def run() -> None:
        headers = {"A2A-Version": "1.0", "Content-Type": "application/json"}
        with httpx.stream("POST", url + "/", content=body, headers=headers, timeout=60) as reply:
            frame_id = 0
            ready.set()
            for line in reply.iter_lines():
                if line.startswith("id:"):
                    frame_id = int(line[3:].strip())
                elif line.startswith("data:"):
                    seen.append((frame_id, json.loads(line[5:])))

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    ready.wait(10)
    return thread


def _state(data: dict[str, object]) -> str | None:
    result = data.get("result", {})
    assert isinstance(result, dict)
    if "task" in result:
        return str(result["task"]["status"]["state"])
    if "statusUpdate" in result:
        return str(result["statusUpdate"]["status"]["state"])
    return None


def test_copies_of_a_message_sent_to_two_replicas_run_once(
    db_url: str, prefix: str, tmp_path: Path
) -> None:
    _postgres_only(db_url)
    args = [*_prepare(db_url, prefix), "--step-seconds", "0.1"]
    copies_run_once(tmp_path / "server.log", args, prefix, STEPS)
