"""Task lifecycle rules as data (L1, pure): the transition table and how events change a task.

The public face of ``a2a_core.lifecycle``: import these names from here.
"""

from a2a_core._protocol.lifecycle import (
    TRANSITIONS,
    apply_event,
    can_transition,
    check_transition,
    ends_wait,
    task_view,
)

__all__ = [
    "TRANSITIONS",
    "apply_event",
    "can_transition",
    "check_transition",
    "ends_wait",
    "task_view",
]
