"""The v1.0 enums, spelled as ProtoJSON spells them.

Members are declared in proto-number order: the codec relies on that to accept the
integer form ProtoJSON allows on input (``"state": 3`` means ``TASK_STATE_COMPLETED``).
"""

from __future__ import annotations

import enum

__all__ = ["INTERRUPTED_STATES", "TERMINAL_STATES", "Role", "TaskState"]


class TaskState(enum.Enum):
    """Where a task is in its lifecycle (proto ``lf.a2a.v1.TaskState``)."""

    # Members are compared by identity; hashing them by identity too (a C slot, rather than
    # Enum's hash of the name in Python) makes every dict and set lookup on them cheaper.
    __hash__ = object.__hash__

    UNSPECIFIED = "TASK_STATE_UNSPECIFIED"
    SUBMITTED = "TASK_STATE_SUBMITTED"
    WORKING = "TASK_STATE_WORKING"
    COMPLETED = "TASK_STATE_COMPLETED"
    FAILED = "TASK_STATE_FAILED"
    CANCELED = "TASK_STATE_CANCELED"
    INPUT_REQUIRED = "TASK_STATE_INPUT_REQUIRED"
    REJECTED = "TASK_STATE_REJECTED"
    AUTH_REQUIRED = "TASK_STATE_AUTH_REQUIRED"

    @property
    def is_terminal(self) -> bool:
        """True for the states a task never leaves (completed, failed, canceled, rejected)."""
        return self in TERMINAL_STATES

    @property
    def is_interrupted(self) -> bool:
        """True for the states that wait on the client (input-required, auth-required)."""
        return self in INTERRUPTED_STATES


class Role(enum.Enum):
    """Who sent a message (proto ``lf.a2a.v1.Role``)."""

    # Members are compared by identity; hashing them by identity too (a C slot, rather than
    # Enum's hash of the name in Python) makes every dict and set lookup on them cheaper.
    __hash__ = object.__hash__

    UNSPECIFIED = "ROLE_UNSPECIFIED"
    USER = "ROLE_USER"
    AGENT = "ROLE_AGENT"


#: States a task never leaves.
TERMINAL_STATES: frozenset[TaskState] = frozenset(
    {TaskState.COMPLETED, TaskState.FAILED, TaskState.CANCELED, TaskState.REJECTED}
)
#: States in which the task waits for the client (a follow-up message continues it).
INTERRUPTED_STATES: frozenset[TaskState] = frozenset(
    {TaskState.INPUT_REQUIRED, TaskState.AUTH_REQUIRED}
)
