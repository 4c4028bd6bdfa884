"""What happens to an execution its process lost (L2): the recovery policy and its records.

The policy also says whether a message sent again is run again (``idempotent_sends``, on
by default: see ``_idempotency``), the other half of work that runs once.

An *execution* is one run of the agent for one message. When the process running it goes
away (a crash, a lost lease, a deploy that hands it off), the backend finds its task still
running and asks the server to recover it (`A2AServer.recover_task`). The server's
`RecoveryPolicy` decides:

- ``fail`` (the default): the task is FAILED, saying why (what every release before did);
- ``retry``: the agent runs again from the task's messages, at most ``max_attempts`` times
  in all; for agents whose work may run again (at least once);
- ``resume``: as ``retry``, and the next attempt is handed the agent's last checkpoint
  (`TaskContext.checkpoint`), so that what it did before that is not done again.

The execution record lives in the task itself, so every backend keeps it with the same
atomic, versioned write as the task (no schema of its own):

- ``metadata["a2a.execution"]``: ``{"attempt": n, "lost": k, "epoch": e}``, present from
  the first recovery on. ``attempt`` (1-based) counts the runs of the agent for the
  message it answers now; ``lost`` counts those that ended with their process lost (a
  crash; an attempt handed off by a clean stop is not counted); both start again at a
  follow-up message. ``epoch`` never goes back: the next attempt is claimed by one
  compare-and-set write of the task that raises it, which exactly one replica wins, and a
  writer whose epoch is no longer the task's is fenced off (it writes nothing more, and
  its agent is stopped). ``trace``, when the server is observed and its policy recovers:
  the trace context of the attempt that answers the message (the first one's agent span,
  as the observer's propagator writes it, baggage left out, at most `MAX_TRACE_BYTES`),
  so that a later attempt, on any replica, joins the task's trace (`trace_of`).
- ``metadata["a2a.checkpoint"]``: the agent's last checkpoint for the message it answers
  now (a small JSON value; dropped at a follow-up message).
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, NamedTuple

import msgspec

from a2a_core.types import Message, Role, Task

__all__ = [
    "CHECKPOINT_KEY",
    "DEFAULT_MAX_CHECKPOINT_BYTES",
    "EXECUTION_KEY",
    "CheckpointTooLargeError",
    "ExecutionRecord",
    "Recovery",
    "RecoveryPolicy",
    "checkpoint_of",
    "encode_checkpoint",
    "epoch_of",
    "execution_record",
    "for_follow_up",
    "record_with_trace",
    "trace_of",
    "message_to_rerun",
]

#: The task metadata key of the execution record (attempt and losses).
EXECUTION_KEY: Final = "a2a.execution"
#: The task metadata key of the agent's last checkpoint.
CHECKPOINT_KEY: Final = "a2a.checkpoint"
#: The largest trace context kept in the execution record (W3C ``traceparent`` is 55
#: bytes, ``tracestate`` at most 512): a larger one is not kept.
MAX_TRACE_BYTES: Final = 1024
#: The largest checkpoint, JSON-encoded, by default (64 KiB): a pointer into the agent's
#: own storage, not the storage itself.
DEFAULT_MAX_CHECKPOINT_BYTES: Final = 64 * 1024


class Recovery(enum.Enum):
    """What becomes of an execution whose process was lost (see the module docstring)."""

    FAIL = "fail"
    RETRY = "retry"
    RESUME = "resume"


@dataclass(frozen=True, slots=True)
class RecoveryPolicy:
    """How a server recovers the executions its replicas lose (see ``docs/durability.md``).

    ``mode``: ``fail`` (default), ``retry`` or ``resume`` (a `Recovery` or its value).
    ``max_attempts``: attempts in all, the first included, that may end with their process
    lost before the task is failed (a hand-off at a clean stop does not count).
    ``max_checkpoint_bytes``: the largest checkpoint, JSON-encoded
    (`CheckpointTooLargeError` past it).
    ``idempotent_sends``: a message sent again by the same caller (the same ``messageId``
    and content) is answered with what it started, and the agent is not run again,
    whatever the mode (``False``: every send runs; see ``_idempotency``), while its task
    runs and for ``idempotency_window`` seconds after its last change (``None``: as long as
    the task is stored); later, the same message is new work.
    """

    mode: Recovery | str = Recovery.FAIL
    max_attempts: int = 3
    max_checkpoint_bytes: int = DEFAULT_MAX_CHECKPOINT_BYTES
    idempotent_sends: bool = True
    idempotency_window: float | None = 600.0

    def __post_init__(self) -> None:
        try:
            object.__setattr__(self, "mode", Recovery(self.mode))
        except ValueError:
            raise ValueError(f"recovery must be fail, retry or resume, not {self.mode!r}") from None
        if self.max_attempts < 1:
            raise ValueError("max_attempts must be at least 1")
        if self.max_checkpoint_bytes < 2:
            raise ValueError("max_checkpoint_bytes must be at least 2")
        window = self.idempotency_window
        if window is not None and not window > 0:
            raise ValueError("idempotency_window must be a positive number of seconds, or None")

    @property
    def recovers(self) -> bool:
        """Whether a lost execution runs again (``retry`` or ``resume``)."""
        return self.mode is not Recovery.FAIL


class CheckpointTooLargeError(ValueError):
    """A checkpoint over ``RecoveryPolicy.max_checkpoint_bytes``; nothing was stored."""


class ExecutionRecord(NamedTuple):
    """The task's execution record (see the module docstring)."""

    epoch: int
    attempt: int
    lost: int


_FIRST: Final = ExecutionRecord(1, 1, 0)


def _count(record: Mapping[str, Any], key: str, least: int) -> int:
    value = record.get(key)
    return value if isinstance(value, int) and value >= least else least


def execution_record(task: Task) -> ExecutionRecord:
    """The task's execution record: ``(1, 1, 0)`` when it has none (a first attempt writes
    none)."""
    record = task.metadata.get(EXECUTION_KEY) if task.metadata else None
    if not isinstance(record, Mapping):
        return _FIRST
    return ExecutionRecord(
        _count(record, "epoch", 1), _count(record, "attempt", 1), _count(record, "lost", 0)
    )


def epoch_of(task: Task) -> int:
    """The epoch of the task's current execution, from 1."""
    return execution_record(task).epoch


def for_follow_up(task: Task, trace: Mapping[str, str] | None = None) -> Task:
    """``task`` as a follow-up message finds it: the attempts and losses counted afresh
    (the epoch kept), the previous message's checkpoint dropped, and the trace of the
    execution that answers it (``trace``, when it is carried) recorded."""
    metadata = task.metadata
    if not trace and (
        not metadata or (EXECUTION_KEY not in metadata and CHECKPOINT_KEY not in metadata)
    ):
        return task  # nearly every task: nothing recovered, checkpointed or traced
    kept = {k: v for k, v in metadata.items() if k != CHECKPOINT_KEY}
    if EXECUTION_KEY in metadata or trace:
        record: dict[str, Any] = {"attempt": 1, "lost": 0, "epoch": epoch_of(task)}
        if trace:
            record["trace"] = dict(trace)
        kept[EXECUTION_KEY] = record
    return msgspec.structs.replace(task, metadata=kept)


def trace_of(task: Task) -> dict[str, str]:
    """The trace context the task's execution record carries (empty: none)."""
    record = task.metadata.get(EXECUTION_KEY) if task.metadata else None
    trace = record.get("trace") if isinstance(record, Mapping) else None
    if not isinstance(trace, Mapping):
        return {}
    return {k: v for k, v in trace.items() if isinstance(k, str) and isinstance(v, str)}


#: The headers of a trace context that the execution record keeps (W3C, B3, Jaeger):
#: never baggage, under whatever name a propagator writes it (``baggage``,
#: ``ot-baggage-*``, ``uberctx-*``): the task is shown to its caller, and baggage may carry
#: what a deployment did not mean to show.
TRACE_HEADERS: Final = frozenset(
    {
        "traceparent",
        "tracestate",
        "b3",
        "x-b3-traceid",
        "x-b3-spanid",
        "x-b3-parentspanid",
        "x-b3-sampled",
        "x-b3-flags",
        "uber-trace-id",
    }
)


def record_with_trace(headers: Mapping[str, str]) -> dict[str, str] | None:
    """What of ``headers`` (an observer's `push_context_headers`) the execution record
    keeps: the trace context alone (`TRACE_HEADERS`), ``None`` when nothing is left or it
    is over `MAX_TRACE_BYTES`."""
    kept = {k: v for k, v in headers.items() if k.lower() in TRACE_HEADERS}
    if not kept or sum(len(k) + len(v) for k, v in kept.items()) > MAX_TRACE_BYTES:
        return None
    return kept


def checkpoint_of(task: Task) -> Any:
    """The agent's last checkpoint stored with the task, or ``None``."""
    return task.metadata.get(CHECKPOINT_KEY) if task.metadata else None


def encode_checkpoint(value: Any, limit: int) -> Any:
    """``value`` as it will be stored and read back (JSON: tuples become lists...);
    `TypeError` for a value JSON cannot hold, `CheckpointTooLargeError` past ``limit``."""
    try:
        encoded = msgspec.json.encode(value)
    except (TypeError, msgspec.EncodeError) as exc:
        raise TypeError(f"a checkpoint must be JSON-able: {exc}") from None
    if len(encoded) > limit:
        raise CheckpointTooLargeError(
            f"the checkpoint is {len(encoded)} bytes as JSON, over "
            f"RecoveryPolicy.max_checkpoint_bytes ({limit}): keep a pointer to your own "
            "storage in it instead"
        )
    return msgspec.json.decode(encoded)


def message_to_rerun(task: Task) -> Message | None:
    """The message a new attempt answers: the client's last message in the history (the
    one that started the task, or the follow-up that continued it)."""
    for message in reversed(task.history):
        if message.role is Role.USER:
            return message
    return None
