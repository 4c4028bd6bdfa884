"""Task lifecycle rules as data (L1, pure): the transition table and how events change a task.

Legal state changes live in one table, :data:`TRANSITIONS`, checked by
:func:`check_transition`; nothing else in the library compares states to decide what may
happen. :func:`apply_event` folds one stream event into the stored task exactly as a client
that received the stream would (status replaced, artifacts added, replaced or appended by
chunks), so the stored task and the streamed events never disagree. :func:`task_view` cuts a
task down to what a reply asked for (``historyLength``, ``includeArtifacts``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

import msgspec

from a2a_core._protocol.errors import LocalProtocolError
from a2a_core.types import (
    INTERRUPTED_STATES,
    TERMINAL_STATES,
    Artifact,
    StreamResponse,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatusUpdateEvent,
)

__all__ = [
    "TRANSITIONS",
    "apply_event",
    "can_transition",
    "check_transition",
    "ends_wait",
    "task_view",
]

_S = TaskState
_ANY_NEXT: Final = frozenset({_S.WORKING, *INTERRUPTED_STATES, *TERMINAL_STATES})

#: state -> the states it may move to. Terminal states move nowhere; a state may "move" to
#: itself (a new status message while still working, a repeated question while waiting).
TRANSITIONS: Final[Mapping[TaskState, frozenset[TaskState]]] = {
    _S.SUBMITTED: _ANY_NEXT | {_S.SUBMITTED},
    _S.WORKING: _ANY_NEXT,
    _S.INPUT_REQUIRED: _ANY_NEXT,
    _S.AUTH_REQUIRED: _ANY_NEXT,
    _S.COMPLETED: frozenset(),
    _S.FAILED: frozenset(),
    _S.CANCELED: frozenset(),
    _S.REJECTED: frozenset(),
    _S.UNSPECIFIED: frozenset(),
}


def can_transition(old: TaskState, new: TaskState) -> bool:
    """Whether a task in ``old`` may move to ``new``."""
    return new in TRANSITIONS.get(old, frozenset())


def check_transition(old: TaskState, new: TaskState) -> None:
    """Raise :class:`LocalProtocolError` for a move the table forbids (an agent's bug)."""
    if not can_transition(old, new):
        raise LocalProtocolError(
            f"A task in {old.value} cannot move to {new.value}"
            + (" (terminal states are final)" if old in TERMINAL_STATES else "")
        )


def ends_wait(state: TaskState) -> bool:
    """A blocking SendMessage returns once the task is terminal or interrupted."""
    return state in TERMINAL_STATES or state in INTERRUPTED_STATES


def apply_event(task: Task, event: StreamResponse) -> Task:
    """The task after one event of its own stream.

    - status update: the transition is checked, the previous status message (if any) moves
      into ``history``, and the new status replaces the old; the update's metadata, if any,
      is merged into the task's (as the official SDK's task manager does);
    - artifact update: a new ``artifactId`` is added; an existing one is replaced, or, with
      ``append``, gets the chunk's parts appended (and its metadata merged);
    - message: appended to ``history``;
    - task snapshot: replaces the task (it is the same task, restated).
    """
    if event.status_update is not None:
        return _apply_status(task, event.status_update)
    if event.artifact_update is not None:
        return _apply_artifact(task, event.artifact_update)
    if event.message is not None:
        return msgspec.structs.replace(task, history=[*task.history, event.message])
    if event.task is not None:
        if event.task.id != task.id:
            raise LocalProtocolError("A task snapshot must describe the same task")
        return event.task
    raise LocalProtocolError("Empty stream event")  # pragma: no cover - oneof guarantees one


def _apply_status(task: Task, update: TaskStatusUpdateEvent) -> Task:
    check_transition(task.status.state, update.status.state)
    history = task.history
    previous = task.status.message
    if previous is not None and previous is not update.status.message:
        history = [*history, previous]
    if update.metadata:
        metadata = {**task.metadata, **update.metadata}
        return msgspec.structs.replace(
            task, status=update.status, history=history, metadata=metadata
        )
    return msgspec.structs.replace(task, status=update.status, history=history)


def _apply_artifact(task: Task, update: TaskArtifactUpdateEvent) -> Task:
    if task.status.state in TERMINAL_STATES:
        raise LocalProtocolError("A terminal task takes no more artifacts")
    incoming = update.artifact
    artifacts = list(task.artifacts)
    for index, existing in enumerate(artifacts):
        if existing.artifact_id == incoming.artifact_id:
            artifacts[index] = _appended(existing, incoming) if update.append else incoming
            break
    else:
        artifacts.append(incoming)
    return msgspec.structs.replace(task, artifacts=artifacts)


def _appended(existing: Artifact, chunk: Artifact) -> Artifact:
    # Runs for every chunk of a streamed artifact, and most chunks bring only parts: the
    # other fields are merged (and passed to replace) only when the chunk sets them.
    if not (chunk.metadata or chunk.extensions or chunk.name or chunk.description):
        return msgspec.structs.replace(existing, parts=[*existing.parts, *chunk.parts])
    metadata = existing.metadata
    if chunk.metadata:
        metadata = {**metadata, **chunk.metadata}
    extensions = existing.extensions
    if chunk.extensions:
        extensions = [*extensions, *(e for e in chunk.extensions if e not in extensions)]
    return msgspec.structs.replace(
        existing,
        parts=[*existing.parts, *chunk.parts],
        metadata=metadata,
        extensions=extensions,
        name=chunk.name or existing.name,
        description=chunk.description or existing.description,
    )


def task_view(
    task: Task, *, history_length: int | None = None, include_artifacts: bool = True
) -> Task:
    """The task as a reply shows it: at most ``history_length`` recent messages (0: none;
    ``None``: all) and, unless asked, no artifacts (ListTasks omits them by default)."""
    history = task.history
    if history_length is not None:
        history = history[-history_length:] if history_length > 0 else []
    artifacts = task.artifacts if include_artifacts else []
    if history is task.history and artifacts is task.artifacts:
        return task
    return msgspec.structs.replace(task, history=history, artifacts=artifacts)
