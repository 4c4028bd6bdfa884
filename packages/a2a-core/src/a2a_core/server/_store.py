"""The task store protocol (L2): where tasks live between requests.

The runtime never shares Python objects with the store: every change is a write of the
whole task (plus an append to the event log), so a networked store (Redis, PostgreSQL)
fits behind the same protocol. Writes carry the version the writer read, so two writers
never lose each other's updates (optimistic concurrency); the in-memory store in
:mod:`.memory_store` is the default.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import msgspec

from a2a_core.server._events import EventLog
from a2a_core.types import Message, StreamResponse, Task, TaskState

__all__ = [
    "BatchLoggedTaskStore",
    "CheckedTaskStore",
    "ConcurrentUpdateError",
    "ImmediateTaskStore",
    "InvalidPageTokenError",
    "LoggedTaskStore",
    "StoredTask",
    "TaskExistsError",
    "TaskPage",
    "TaskQuery",
    "TaskStore",
    "VisibleFilter",
]


class ConcurrentUpdateError(Exception):
    """A save whose ``expected_version`` is not the stored one: someone else wrote first."""


class TaskExistsError(Exception):
    """A create for an id that is already stored."""


class InvalidPageTokenError(ValueError):
    """A ``pageToken`` the store did not issue (answered as InvalidParams)."""


class StoredTask(msgspec.Struct, frozen=True, gc=False):
    """A task as stored, with what concurrency control and streams need.

    Built at every write: a frozen Struct, untracked by the garbage collector (it holds
    only a task, itself untracked, and scalars)."""

    task: Task
    """The task."""
    version: int
    """Incremented by every write; pass it back as ``expected_version``."""
    last_seq: int
    """Sequence number of the last event logged for the task (0: none yet)."""
    tenant: str = ""
    """The tenant the task belongs to."""
    owner: str = ""
    """The caller that created the task, as the server's ownership policy keys callers
    (empty: the anonymous owner, or no policy); see ``A2AServer(task_owner=...)``."""


@dataclass(frozen=True, slots=True)
class TaskQuery:
    """Filters and paging of ListTasks, already validated."""

    tenant: str = ""
    """Only tasks of this tenant."""
    owner: str | None = None
    """Only tasks of this owner (``None``: of any owner, when ownership is off)."""
    context_id: str = ""
    """Only tasks of this context (empty: any)."""
    state: TaskState = TaskState.UNSPECIFIED
    """Only tasks in this state (UNSPECIFIED: any)."""
    status_timestamp_after: _dt.datetime | None = None
    """Only tasks whose status timestamp is at or after this time."""
    page_size: int = 50
    """Tasks per page, 1..100."""
    page_token: str = ""
    """Cursor from a previous page's ``next_page_token`` (empty: first page)."""


@dataclass(frozen=True, slots=True)
class TaskPage:
    """One page of ListTasks, newest status first."""

    tasks: list[Task]
    """The page."""
    next_page_token: str
    """Cursor of the next page; empty on the last page."""
    total_size: int
    """How many tasks matched (and were visible) before paging."""


#: Whether the caller may see a task; applied before paging so pages and totals stay right.
VisibleFilter = Callable[[Task], Awaitable[bool]]


class TaskStore(Protocol):
    """Async storage of tasks. Implementations must be safe for concurrent use."""

    async def get(self, task_id: str) -> StoredTask | None:
        """The stored task, or ``None`` when unknown (or expired)."""
        ...

    async def create(
        self, task: Task, *, tenant: str = "", owner: str = "", last_seq: int = 0
    ) -> StoredTask:
        """Store a new task (version 1) of ``tenant`` and ``owner``, both kept for the task's
        lifetime; raise :class:`TaskExistsError` if the id is taken."""
        ...

    async def save(self, task: Task, *, expected_version: int, last_seq: int) -> StoredTask:
        """Replace a task written at ``expected_version``; raise
        :class:`ConcurrentUpdateError` when the stored version differs (or the task is gone)."""
        ...

    async def list_tasks(self, query: TaskQuery, visible: VisibleFilter | None = None) -> TaskPage:
        """Tasks matching ``query`` that ``visible`` accepts, newest status first, one page.

        Ordering is by status timestamp descending, then task id, and the page token is an
        opaque cursor after the last task returned, so pages stay stable while tasks are
        added. Raise :class:`InvalidPageTokenError` for a token this store did not issue.
        """
        ...

    async def delete(self, task_id: str) -> None:
        """Forget a task (no error if unknown)."""
        ...


class LoggedTaskStore(TaskStore, Protocol):
    """A task store that also keeps the event log (optional; ``a2aserve_redis`` is one).

    When a server's store has an ``event_log`` attribute that *is* the server's event log,
    the task writer calls these instead of ``append`` then ``save``: each event is appended
    and the task written in one atomic step. With several writers of one task (a cancel on
    another replica, say), the event of the writer that loses the race is then never in
    the log (with two steps it is, though its write is not); and a networked store saves
    a round trip per event. A terminal write may close the log itself (``close`` is still
    called, and must then do nothing).
    """

    event_log: EventLog
    """The log this store appends to."""

    async def create_logged(
        self, task: Task, event: StreamResponse, *, tenant: str = "", owner: str = ""
    ) -> StoredTask:
        """``create`` with ``event`` appended to the task's log first (its seq is the stored
        ``last_seq``); :class:`TaskExistsError` if the id is taken (nothing is appended)."""
        ...

    async def save_logged(
        self, task: Task, event: StreamResponse, *, expected_version: int
    ) -> StoredTask:
        """``save`` with ``event`` appended to the task's log in the same step;
        :class:`ConcurrentUpdateError` as ``save`` (nothing is appended), and
        `EventLogClosedError` if the log is closed (as ``EventLog.append``)."""
        ...


@runtime_checkable
class BatchLoggedTaskStore(LoggedTaskStore, Protocol):
    """A logged store that creates a task with several events at once (optional;
    ``a2a_sql`` is one).

    An agent that answers at once (returns text, parts or an artifact) gives a new task
    three events: the task submitted, its artifact, completed. No reader can see the task
    before it is created, so the server writes the three in one step when the store can:
    a networked store saves two round trips (and two commits) per such request.
    """

    async def create_logged_many(
        self,
        task: Task,
        events: Sequence[StreamResponse],
        *,
        tenant: str = "",
        owner: str = "",
    ) -> StoredTask:
        """``create_logged`` of ``task`` (its final state) with ``events`` as the first
        entries of its log (seqs 1 to n), the log closed when the task is terminal;
        :class:`TaskExistsError` if the id is taken (nothing is appended)."""
        ...


@runtime_checkable
class CheckedTaskStore(TaskStore, Protocol):
    """A store that cannot hold every value the protocol allows (optional; ``a2a_sql``'s
    ids have a length limit, PostgreSQL's JSONB no U+0000).

    The server asks it about each message before anything is written or the agent is
    called, so such a message is refused with -32602 InvalidParams, as every other bad
    input, rather than failing its task half-way.
    """

    def check_message(self, message: Message, *, tenant: str, owner: str) -> None:
        """Raise `~a2a_core.errors.InvalidParamsError` if the task the message starts or
        continues (its ``contextId`` set) could not be stored."""
        ...


@runtime_checkable
class ImmediateTaskStore(TaskStore, Protocol):
    """A store whose writes complete without waiting, in process memory (optional).

    When the server's store and event log are both immediate (the in-memory defaults are),
    the task writer records an event with the ``*_now`` methods: a write that never
    suspends cannot interleave with another, so it needs no lock and no cancellation
    shield, and costs no trip through the event loop (a blocking SendMessage spent a fifth
    of its time on those; see ``bench/``).
    """

    def create_now(
        self, task: Task, *, tenant: str = "", owner: str = "", last_seq: int = 0
    ) -> StoredTask:
        """``create``, without waiting (``on_evict`` hooks are left to :meth:`notify_evicted`)."""
        ...

    def save_now(self, task: Task, *, expected_version: int, last_seq: int) -> StoredTask:
        """``save``, without waiting (``on_evict`` hooks are left to :meth:`notify_evicted`)."""
        ...

    @property
    def evictions_pending(self) -> bool:
        """Whether tasks were evicted whose ``on_evict`` hook has not run yet."""
        ...

    async def notify_evicted(self) -> None:
        """Run the ``on_evict`` hooks of the tasks evicted so far."""
        ...
