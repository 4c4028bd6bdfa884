"""Work that survives on Redis (issue "work that survives"), over real processes.

``examples/durable.py`` on the machine's Redis: a replica killed with ``kill -9`` and
started again under its own replica id takes its tasks back at once (before, they stayed
WORKING for good), under ``fail`` (failed, saying why) and ``resume``; another replica takes
over a killed one's tasks (``retry``) and, at once, a stopped one's (a hand-off); a replica
paused past its lease writes nothing after the takeover; a rolling restart of two replicas
while sends go on fails no task; copies of one message sent to both replicas run once.
"""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from a2aserve_redis import RESTART_TEXT
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


def _args(redis_url: str, prefix: str, policy: str) -> list[str]:
    backend = ["--redis", redis_url, "--redis-prefix", prefix, "--steps", str(STEPS)]
    return [*backend, "--recovery", policy, "--step-seconds", "0.3", "--lease-ttl", "2"]


@pytest.mark.parametrize("policy", ["fail", "resume"])
def test_a_replica_restarted_under_its_own_id_takes_its_tasks_back(
    redis_url: str, prefix: str, tmp_path: Path, policy: str
) -> None:
    args = [*_args(redis_url, prefix, policy), "--replica-id", "pod-0"]
    log = tmp_path / "server.log"
    first = Durable(log, *args)
    second = None
    try:
        with httpx.Client(timeout=10) as client:
            task_ids = [send(client, first.url) for _ in range(4)]
            wait_steps(client, first.url, task_ids, 2)
            first.kill()
            second = Durable(log, *args)
            done = wait_all(client, second.url, task_ids, timeout=30)
    finally:
        first.kill()
        if second is not None:
            second.stop()
    for task in done.values():
        if policy == "fail":
            assert task["status"]["state"] == "TASK_STATE_FAILED"
            assert task["status"]["message"]["parts"][0]["text"] == RESTART_TEXT
        else:
            assert task["status"]["state"] == "TASK_STATE_COMPLETED"
            assert task["metadata"]["a2a.execution"] == {"attempt": 2, "lost": 1, "epoch": 2}
            steps = [step for step, _ in step_chunks(task)]
            assert sorted(set(steps)) == list(range(1, STEPS + 1))


def test_another_replica_takes_over_after_kill_9_and_at_once_after_a_stop(
    redis_url: str, prefix: str, tmp_path: Path
) -> None:
    args = _args(redis_url, prefix, "retry")
    log = tmp_path / "server.log"
    a = Durable(log, *args, "--shutdown-grace", "0.2")
    b = Durable(log, *args)
    try:
        with httpx.Client(timeout=10) as client:
            lost = [send(client, a.url) for _ in range(5)]
            wait_steps(client, a.url, lost, 1)
            a.kill()
            crashed = wait_all(client, b.url, lost, timeout=30)
            a = Durable(log, *args, "--shutdown-grace", "0.2")
            handed = [send(client, a.url) for _ in range(5)]
            wait_steps(client, a.url, handed, 1)
            a.stop()  # SIGTERM: drained, handed off, and b is told at once
            handed_over = wait_all(client, b.url, handed, timeout=30)
    finally:
        a.kill()
        b.stop()
    for task in [*crashed.values(), *handed_over.values()]:
        assert task["status"]["state"] == "TASK_STATE_COMPLETED", task["status"]
        assert step_chunks(task) == [(step, 2) for step in range(1, STEPS + 1)]
    assert {t["metadata"]["a2a.execution"]["lost"] for t in crashed.values()} == {1}
    assert {t["metadata"]["a2a.execution"]["lost"] for t in handed_over.values()} == {0}


def test_a_paused_replica_writes_nothing_after_the_takeover(
    redis_url: str, prefix: str, tmp_path: Path
) -> None:
    args = _args(redis_url, prefix, "retry")
    paused_replica_writes_nothing(tmp_path / "server.log", args, STEPS)


@pytest.mark.parametrize("policy", ["retry", "resume"])
def test_a_rolling_restart_under_load_fails_no_task(
    redis_url: str, prefix: str, tmp_path: Path, policy: str
) -> None:
    args = [*_args(redis_url, prefix, policy), "--shutdown-grace", "0.3"]
    rolling_restart_fails_nothing(tmp_path / "server.log", args)


def test_copies_of_a_message_sent_to_two_replicas_run_once(
    redis_url: str, prefix: str, tmp_path: Path
) -> None:
    copies_run_once(tmp_path / "server.log", _args(redis_url, prefix, "fail"), prefix, STEPS)
