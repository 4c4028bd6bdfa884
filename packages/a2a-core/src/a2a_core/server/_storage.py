"""What the runtime can do with the backend it was given (L2): its capabilities, found once.

A backend's parts implement the general protocols (`TaskStore`, `EventLog`,
`PushConfigStore`, `PushSender`); some can do more, and the task writes (`writes`) take the
faster road when they can:

- an **immediate** store and log (`ImmediateTaskStore`, `ImmediateEventLog`, the in-memory
  ones) record a change without suspending, so a write needs no lock and no shield, as long
  as the task has no webhook to hand the change to;
- a **logged** store (`LoggedTaskStore`) keeps the event log itself and appends an event and
  writes the task in one step (one transaction, one round trip);
- a push-config store that knows its targets in memory (`InMemoryPushConfigStore`) tells
  without a wait whether a task has webhooks;
- a **logged push sender** (`LoggedPushSender`) is fed by the logged store, which queues
  an event's webhook jobs in the transaction that logs it: the server only wakes it.

:class:`Storage` finds these once, when the server is built, hands push delivery the
events of tasks that have webhooks, and carries the per-task limits (`limits`) every write
is held to, whichever backend it goes to.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import cast

import msgspec

from a2a_core.server._events import EventLog, ImmediateEventLog
from a2a_core.server._limits import TaskLimits
from a2a_core.server._memory_push import InMemoryPushConfigStore
from a2a_core.server._messages import Invocation
from a2a_core.server._push import LoggedPushSender, PushConfigStore, PushSender
from a2a_core.server._recovery import record_with_trace
from a2a_core.server._store import (
    BatchLoggedTaskStore,
    CheckedTaskStore,
    ImmediateTaskStore,
    LoggedTaskStore,
    TaskStore,
)
from a2a_core.server._timed import timed
from a2a_core.server.observe import Observer
from a2a_core.types import StreamResponse, Task

__all__ = ["Storage"]


class Storage:
    """A backend's store, event log and push parts, with what each can do beyond its protocol."""

    def __init__(
        self,
        *,
        store: TaskStore,
        events: EventLog,
        push_configs: PushConfigStore | None,
        push_sender: PushSender | None,
        push_enabled: bool,
        limits: TaskLimits | None = None,
        observer: Observer | None = None,
    ) -> None:
        #: Told of every task change and, for a networked backend, how long each operation
        #: took (see :mod:`~a2a_core.server.observe`); ``None``: nobody is.
        self.observer = observer
        # What the store can do is read off the store itself: a timed wrapper forwards the
        # optional methods, but isinstance() on a protocol does not see forwarded ones on
        # Python 3.12+ (it looks attributes up statically).
        plain = store
        if observer is not None:
            store, events = timed(store, events, observer)
        self.store = store
        self.events = events
        self.push_configs = push_configs
        #: Set by the server when it starts its own sender (the card declares push).
        self.push_sender = push_sender
        self.push_enabled = push_enabled
        #: How large one task may grow (see `limits`).
        self.limits = limits if limits is not None else TaskLimits()
        #: The event log, when it is immediate (see ``ImmediateEventLog``).
        self.immediate_log = events if isinstance(events, ImmediateEventLog) else None
        #: Logs a task's whole log at once, when the immediate log can (the in-memory one's
        #: ``log_closed_now``): a task answered at once is logged in one step.
        self.log_closed: Callable[[str, Sequence[StreamResponse]], int] | None = getattr(
            self.immediate_log, "log_closed_now", None
        )
        self._immediate: tuple[ImmediateTaskStore, ImmediateEventLog] | None = None
        if isinstance(store, ImmediateTaskStore) and isinstance(events, ImmediateEventLog):
            self._immediate = (store, events)
        #: What the store cannot hold, when it says (see ``CheckedTaskStore``).
        self.check_message = plain.check_message if isinstance(plain, CheckedTaskStore) else None
        #: The store, when it keeps this event log itself: events are then appended and
        #: tasks written in one step (see :class:`~a2a_core.server.LoggedTaskStore`).
        self.logged_store: LoggedTaskStore | None = None
        if getattr(store, "event_log", None) is events:
            self.logged_store = cast(LoggedTaskStore, store)
        # Whether push_sender (it may be set later) is a LoggedPushSender fed by that store.
        self._sender_seen: PushSender | None = None
        self._sender_logged = False
        #: Whether an execution records its trace context with its task, for a later
        #: attempt to join (set by the server: observed, under a recovering policy).
        self.carry_trace = False
        #: The logged store, when it also creates a task with several events at once.
        self.batch_store: BatchLoggedTaskStore | None = None
        if self.logged_store is not None and isinstance(plain, BatchLoggedTaskStore):
            self.batch_store = cast(BatchLoggedTaskStore, self.logged_store)

    def trace_to_record(self) -> dict[str, str] | None:
        """The current trace context, as an execution record keeps it (``_recovery``), when
        traces are carried; called in the execution's own task."""
        if not self.carry_trace or self.observer is None:
            return None
        return record_with_trace(self.observer.push_context_headers())

    def immediate(self, task_id: str) -> tuple[ImmediateTaskStore, ImmediateEventLog] | None:
        """The store and log, when a change of this task can be recorded without waiting:
        both are immediate and the task has no webhook to hand the change to."""
        immediate = self._immediate
        if immediate is not None and self.push_sender is not None:
            configs = self.push_configs
            if not isinstance(configs, InMemoryPushConfigStore) or configs.has_targets(task_id):
                return None
        return immediate

    async def register_push(self, invocation: Invocation) -> None:
        """Store the webhook a send configuration carries inline, for the invocation's task."""
        config = invocation.configuration
        webhook = config.task_push_notification_config if config is not None else None
        if webhook is None or not self.push_enabled or self.push_configs is None:
            return
        await self.push_configs.set(
            msgspec.structs.replace(webhook, task_id=invocation.task_id),
            legacy_v0_3=invocation.call.dialect == "0.3",
        )

    async def notify_push(self, task: Task, event: StreamResponse) -> None:
        """Hand a written event to push delivery when the task has webhooks (only wake a
        `LoggedPushSender`: the logged write queued its jobs)."""
        sender = self.push_sender
        if sender is None or self.push_configs is None:
            return
        if sender is not self._sender_seen:
            self._sender_seen = sender
            self._sender_logged = self.logged_store is not None and isinstance(
                sender, LoggedPushSender
            )
        if self._sender_logged:
            cast(LoggedPushSender, sender).logged(task, event)  # the write queued the jobs
            return
        targets = await self.push_configs.targets(task.id)
        if targets:
            await sender.deliver(targets, event, task)
