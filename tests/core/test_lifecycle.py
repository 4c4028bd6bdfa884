"""The task lifecycle rules (a2a_core.lifecycle): the transition table and event folding.

The table is checked against the spec's rules stated independently here (terminal states are
final, everything else may go anywhere but back to submitted), and `apply_event` is checked
event kind by event kind on literal tasks.
"""

from __future__ import annotations

import itertools

import msgspec
import pytest

from a2a_core import types as t
from a2a_core.errors import LocalProtocolError
from a2a_core.lifecycle import (
    TRANSITIONS,
    apply_event,
    can_transition,
    check_transition,
    ends_wait,
    task_view,
)

S = t.TaskState
TERMINAL = {S.COMPLETED, S.FAILED, S.CANCELED, S.REJECTED}
INTERRUPTED = {S.INPUT_REQUIRED, S.AUTH_REQUIRED}


def _expected(old: t.TaskState, new: t.TaskState) -> bool:
    if old in TERMINAL or S.UNSPECIFIED in (old, new):
        return False
    if new is S.SUBMITTED:
        return old is S.SUBMITTED
    return True


@pytest.mark.parametrize(("old", "new"), list(itertools.product(S, S)))
def test_transition_table(old: t.TaskState, new: t.TaskState) -> None:
    assert can_transition(old, new) is _expected(old, new)
    if _expected(old, new):
        check_transition(old, new)
    else:
        with pytest.raises(LocalProtocolError, match="cannot move to"):
            check_transition(old, new)


def test_the_table_has_every_state() -> None:
    assert set(TRANSITIONS) == set(S)


def test_a_terminal_move_says_why() -> None:
    with pytest.raises(LocalProtocolError, match=r"\(terminal states are final\)"):
        check_transition(S.COMPLETED, S.WORKING)
    with pytest.raises(LocalProtocolError) as caught:
        check_transition(S.WORKING, S.SUBMITTED)
    assert "terminal" not in str(caught.value)


@pytest.mark.parametrize("state", list(S))
def test_ends_wait(state: t.TaskState) -> None:
    assert ends_wait(state) is (state in TERMINAL | INTERRUPTED)


# --- folding events into a task ----------------------------------------------------------------


def _msg(mid: str, role: t.Role = t.Role.AGENT, text: str = "x") -> t.Message:
    return t.Message(message_id=mid, role=role, parts=[t.Part(text=text)])


def _status(state: t.TaskState, message: t.Message | None = None) -> t.StreamResponse:
    return t.StreamResponse(
        status_update=t.TaskStatusUpdateEvent(
            task_id="t", context_id="c", status=t.TaskStatus(state=state, message=message)
        )
    )


def _artifact(
    artifact: t.Artifact, *, append: bool = False, last_chunk: bool = False
) -> t.StreamResponse:
    return t.StreamResponse(
        artifact_update=t.TaskArtifactUpdateEvent(
            task_id="t", context_id="c", artifact=artifact, append=append, last_chunk=last_chunk
        )
    )


USER = _msg("u", t.Role.USER)
TASK = t.Task(id="t", context_id="c", status=t.TaskStatus(state=S.SUBMITTED), history=[USER])


def test_a_status_update_replaces_the_status_and_keeps_the_old_message_in_history() -> None:
    question = _msg("q")
    asking = apply_event(TASK, _status(S.INPUT_REQUIRED, question))
    assert asking.status == t.TaskStatus(state=S.INPUT_REQUIRED, message=question)
    assert asking.history == [USER]
    working = apply_event(asking, _status(S.WORKING))
    assert working.status.state is S.WORKING
    assert working.history == [USER, question]
    # Restating the same message object does not copy it into history.
    again = apply_event(asking, _status(S.INPUT_REQUIRED, question))
    assert again.history == [USER]


def test_a_status_update_merges_its_metadata_into_the_task() -> None:
    start = msgspec.structs.replace(TASK, metadata={"keep": 1, "step": 0})
    update = t.StreamResponse(
        status_update=t.TaskStatusUpdateEvent(
            task_id="t",
            context_id="c",
            status=t.TaskStatus(state=S.WORKING),
            metadata={"step": 1},
        )
    )
    assert apply_event(start, update).metadata == {"keep": 1, "step": 1}
    # Without metadata, the task's stays as it is.
    assert apply_event(start, _status(S.WORKING)).metadata == {"keep": 1, "step": 0}


def test_a_status_update_is_checked_against_the_table() -> None:
    done = apply_event(TASK, _status(S.COMPLETED))
    with pytest.raises(LocalProtocolError):
        apply_event(done, _status(S.WORKING))


def test_artifacts_are_added_replaced_and_appended() -> None:
    first = t.Artifact(artifact_id="a", name="A", parts=[t.Part(text="1")], metadata={"k": 1})
    other = t.Artifact(artifact_id="b", parts=[t.Part(text="b")])
    task = apply_event(apply_event(TASK, _artifact(first)), _artifact(other))
    assert [a.artifact_id for a in task.artifacts] == ["a", "b"]

    chunk = t.Artifact(
        artifact_id="a",
        description="D",
        parts=[t.Part(text="2")],
        metadata={"j": 2},
        extensions=["urn:e"],
    )
    appended = apply_event(task, _artifact(chunk, append=True, last_chunk=True))
    assert appended.artifacts[0] == t.Artifact(
        artifact_id="a",
        name="A",
        description="D",
        parts=[t.Part(text="1"), t.Part(text="2")],
        metadata={"k": 1, "j": 2},
        extensions=["urn:e"],
    )
    assert appended.artifacts[1] == other
    # An extension already listed is not listed twice.
    twice = apply_event(appended, _artifact(chunk, append=True))
    assert twice.artifacts[0].extensions == ["urn:e"]

    replaced = apply_event(
        appended, _artifact(t.Artifact(artifact_id="a", parts=[t.Part(text="new")]))
    )
    assert replaced.artifacts[0] == t.Artifact(artifact_id="a", parts=[t.Part(text="new")])


def test_a_terminal_task_takes_no_artifacts() -> None:
    done = apply_event(TASK, _status(S.FAILED))
    with pytest.raises(LocalProtocolError, match="no more artifacts"):
        apply_event(done, _artifact(t.Artifact(artifact_id="a", parts=[t.Part(text="x")])))


def test_messages_join_history_and_snapshots_replace_the_task() -> None:
    reply = _msg("r")
    assert apply_event(TASK, t.StreamResponse(message=reply)).history == [USER, reply]
    snapshot = t.Task(id="t", context_id="c", status=t.TaskStatus(state=S.WORKING))
    assert apply_event(TASK, t.StreamResponse(task=snapshot)) is snapshot
    stranger = t.Task(id="other", context_id="c", status=t.TaskStatus(state=S.WORKING))
    with pytest.raises(LocalProtocolError, match="same task"):
        apply_event(TASK, t.StreamResponse(task=stranger))


# --- what a reply shows ----------------------------------------------------------------------

FULL = t.Task(
    id="t",
    context_id="c",
    status=t.TaskStatus(state=S.COMPLETED),
    history=[_msg("1"), _msg("2"), _msg("3")],
    artifacts=[t.Artifact(artifact_id="a", parts=[t.Part(text="x")])],
)


@pytest.mark.parametrize(
    ("history_length", "include_artifacts", "history_ids", "artifacts"),
    [
        (None, True, ["1", "2", "3"], 1),
        (0, True, [], 1),
        (2, True, ["2", "3"], 1),
        (10, False, ["1", "2", "3"], 0),
        (1, False, ["3"], 0),
    ],
)
def test_task_view(
    history_length: int | None, include_artifacts: bool, history_ids: list[str], artifacts: int
) -> None:
    view = task_view(FULL, history_length=history_length, include_artifacts=include_artifacts)
    assert [m.message_id for m in view.history] == history_ids
    assert len(view.artifacts) == artifacts
    assert (view.id, view.status) == (FULL.id, FULL.status)


def test_task_view_returns_the_task_itself_when_nothing_is_cut() -> None:
    assert task_view(FULL) is FULL
    assert task_view(FULL, history_length=None, include_artifacts=True) is FULL
