"""The in-memory task store (L2): the default :class:`~.store.TaskStore`.

It owns three things: the tasks themselves, kept *encoded* (one msgpack blob per task, so a
stored task costs a few hundred bytes instead of a tree of Python objects, and nothing the
store hands out is shared with it, exactly as with a networked store; a task still being
worked on, submitted or working, is encoded when it is first read or settles rather than at
every write, so that streaming n chunks into one artifact does not cost O(n^2)); the bounds
that keep memory flat on a long-running server (finished tasks expire after ``ttl`` seconds,
at most ``max_terminal_tasks`` of them are kept, and at most ``max_terminal_bytes`` of their
encoded bytes, oldest evicted first; tasks still running are never evicted: the runtime's
per-task limits bound those); and the sorted indexes and signed cursors of ListTasks.

Everything happens in the calling task: there is no background sweeper. Each operation
first evicts what has expired, which costs O(1) amortised because finished tasks are queued
in the order they finished. Every operation is atomic with respect to the others (no
``await`` between reading and writing), so the store is safe for concurrent use from any
number of anyio tasks on one event loop.
"""

from __future__ import annotations

import datetime as _dt
import inspect
import logging
import secrets
import sys
import time
from bisect import bisect_left, insort
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Any, Final, TypeAlias

import msgspec

from a2a_core.types import Task, TaskState

from ._page_tokens import make_token, query_scope, read_token, status_micros
from ._store import (
    ConcurrentUpdateError,
    ImmediateTaskStore,
    InvalidPageTokenError,
    StoredTask,
    TaskExistsError,
    TaskPage,
    TaskQuery,
    VisibleFilter,
)

__all__ = ["EvictHook", "InMemoryTaskStore"]

_logger = logging.getLogger(__name__)

#: Called with the id of each task the store evicts (expired or over the bound), so that the
#: server can drop what it keeps beside the task (event log, push configs). May be async.
EvictHook: TypeAlias = Callable[[str], Awaitable[None] | None]

# A task's place in ListTasks order: (status time in microseconds since the epoch, task id).
# Indexes keep keys ascending, so new and recently updated tasks (the ones that change)
# sit at the cheap end of the list, and a page walks the index backwards.
_Key: TypeAlias = tuple[int, str]
_Keys: TypeAlias = "list[_Key] | tuple[_Key, ...] | _SortedKeys"

_encoder: Final = msgspec.msgpack.Encoder()
_task_decoder: Final = msgspec.msgpack.Decoder(Task)
_cursor_decoder: Final = msgspec.msgpack.Decoder(tuple[int, str])

# States in which a task is still being written to: kept as objects until read or settled.
_LIVE_STATES: Final = frozenset({TaskState.SUBMITTED, TaskState.WORKING})

# Contexts with up to this many tasks keep their index as a tuple (see _by_context).
_SMALL_CONTEXT: Final = 32

_MiB: Final = 1 << 20
# The encoding buffer is kept for the next write up to this size (nearly every task).
_KEEP_BUFFER: Final = 1 << 16


class _SortedKeys:
    """Ascending keys of one index, cheap at both ends.

    New and recently updated tasks take the largest keys (appended at the end, no move), and
    the tasks evicted first (the oldest finished) hold the smallest. Deleting the first
    element of a list moves all the others: with 10,000 stored tasks, every eviction moved
    80 KB, twice (the tenant's and the owner's index), a tenth of a blocking SendMessage
    once the store was full. Here the front is dropped by moving ``head`` past it, and the
    list is compacted when the dropped part is the larger half (amortised O(1)).

    Reads see only ``items[head:]``: ``len``, indexing and slicing as a list's (what
    ``bisect`` and ListTasks use).
    """

    __slots__ = ("head", "items")

    def __init__(self) -> None:
        self.items: list[_Key] = []
        self.head = 0

    def __len__(self) -> int:
        return len(self.items) - self.head

    def __getitem__(self, at: int | slice) -> Any:
        if isinstance(at, slice):
            start, stop, _ = at.indices(len(self))
            return self.items[self.head + start : self.head + stop]
        return self.items[self.head + at if at >= 0 else at]

    def add(self, key: _Key) -> None:
        items = self.items
        if len(items) == self.head or items[-1] < key:
            items.append(key)  # the newest status: nearly every task, when it is created
        else:
            insort(items, key, self.head)

    def discard(self, key: _Key) -> None:
        items, head = self.items, self.head
        # The oldest finished task is the one evicted, and it is at the front: no search.
        position = (
            head if head < len(items) and items[head] == key else bisect_left(items, key, head)
        )
        if position >= len(items) or items[position] != key:
            return
        if position == head:
            self.head = head = head + 1
            if head > 64 and 2 * head > len(items):
                del items[:head]
                self.head = 0
        else:
            del items[position]


class _Record(msgspec.Struct, gc=False):
    """One stored task: its blob (or, while it is worked on, the task itself, encoded when
    read) plus the few fields that indexing and eviction read.

    Not tracked by the garbage collector (``gc=False``): it holds only strings, numbers,
    bytes and a frozen task, so it can never be part of a reference cycle, and ten thousand
    stored tasks would otherwise be ten thousand more objects for every full collection to
    walk (the pauses made a blocking SendMessage's p99; see ``bench/``).
    """

    key: _Key
    tenant: str
    context_id: str
    owner: str = ""
    blob: bytes | None = None
    live: Task | None = None
    state: TaskState = TaskState.UNSPECIFIED
    version: int = 0
    last_seq: int = 0
    terminal_since: float | None = None
    #: The status timestamp ``key`` was computed from (an unchanged one needs no re-index).
    stamp: _dt.datetime | None = None


class InMemoryTaskStore(ImmediateTaskStore):
    """Tasks in process memory, encoded, bounded, with cursor-paged ListTasks.

    :param ttl: seconds a terminal task is kept after it became terminal (``None``: until
        ``max_terminal_tasks`` pushes it out).
    :param max_terminal_tasks: how many terminal tasks are kept at most; the one that
        finished first goes first (``None``: no bound). Tasks that are not terminal are never
        evicted, whatever their number, age or size.
    :param max_terminal_bytes: how many encoded bytes of terminal tasks are kept at most
        (see :attr:`terminal_bytes`), evicted in the same order (``None``: no bound). A
        task larger than the whole budget goes as soon as it finished, alone.
    :param clock: monotonic seconds, used only for ``ttl``; inject one to control time in tests.
    :param on_evict: called with the id of every task the store evicts, after it is gone, so
        the server can drop the task's event log and push configs. A plain function runs
        inside the store operation that noticed the eviction (any of them; what it returns,
        if awaitable, is awaited at the next awaited one); a coroutine function runs at the
        next awaited operation (or :meth:`notify_evicted`). It must be quick, and its
        exceptions are logged, not raised. :meth:`delete` does not call it: the caller knows.
    """

    def __init__(
        self,
        *,
        ttl: float | None = 3600.0,
        max_terminal_tasks: int | None = 10_000,
        max_terminal_bytes: int | None = 128 * _MiB,
        clock: Callable[[], float] = time.monotonic,
        on_evict: EvictHook | None = None,
    ) -> None:
        if ttl is not None and ttl < 0:
            raise ValueError("ttl must be >= 0 or None")
        if max_terminal_tasks is not None and max_terminal_tasks < 0:
            raise ValueError("max_terminal_tasks must be >= 0 or None")
        if max_terminal_bytes is not None and max_terminal_bytes < 0:
            raise ValueError("max_terminal_bytes must be >= 0 or None")
        self._ttl = ttl
        # No bound is one no store reaches: a comparison, and no None check, per eviction.
        self._max_terminal = sys.maxsize if max_terminal_tasks is None else max_terminal_tasks
        self._max_terminal_bytes = sys.maxsize if max_terminal_bytes is None else max_terminal_bytes
        # Bytes of the terminal tasks' blobs (a terminal task is always encoded), kept up to
        # date when a task finishes or goes: once per task, not per write.
        self._terminal_bytes = 0
        self._clock = clock
        #: The eviction hook (see ``on_evict`` above); :class:`A2AServer` sets it when unset.
        self.on_evict = on_evict
        self._records: dict[str, _Record] = {}
        # Per tenant, and per tenant and context: ascending keys (see _Key). Nested dicts
        # rather than (tenant, context) keys: most contexts hold one task, and a key tuple
        # per context would cost more than the index entry itself.
        self._by_tenant: dict[str, _SortedKeys] = {}
        # Per tenant and owner (what ListTasks reads when tasks are owned by their caller).
        self._by_owner: dict[tuple[str, str], _SortedKeys] = {}
        # Per context, a tuple while it is small (most contexts hold one task or a few):
        # a tuple of keys is not tracked by the garbage collector, where ten thousand
        # one-task lists were ten thousand more objects for every full collection to walk.
        self._by_context: dict[str, dict[str, tuple[_Key, ...] | list[_Key]]] = {}
        # Terminal tasks in the order they became terminal. Entries of tasks deleted since
        # are skipped lazily (a record is current when `_records` still maps its id to it).
        self._terminal_queue: deque[_Record] = deque()
        self._terminal_count = 0
        self._pending_evictions: deque[str] = deque()
        # What plain-function hooks returned that still has to be awaited.
        self._pending_awaits: deque[tuple[str, Awaitable[None]]] = deque()
        # Page tokens are signed, so a token this store did not issue is detected rather
        # than silently read as some position.
        self._token_key = secrets.token_bytes(16)
        self._buffer = bytearray()

    def __len__(self) -> int:
        """How many tasks are held now (expired ones leave at the next operation)."""
        return len(self._records)

    @property
    def encoded_bytes(self) -> int:
        """Bytes of the encoded tasks held now (O(tasks): for monitoring and tests).

        A task still being worked on (submitted, working) is held as the object the writer
        gave and counts from when it is encoded (read, or settled); the few hundred bytes
        of bookkeeping per task are not counted (``max_terminal_tasks`` bounds those)."""
        return sum(len(r.blob) for r in self._records.values() if r.blob is not None)

    @property
    def terminal_bytes(self) -> int:
        """Bytes of the encoded terminal tasks held now: what ``max_terminal_bytes`` bounds."""
        return self._terminal_bytes

    def holds_now(self, task_id: str) -> bool:
        """Whether a task of this id may be stored (expired ones not yet evicted count):
        a check without waiting, for the server's look for a message sent again, which
        then reads the task only when it may be there."""
        return task_id in self._records

    # -- the TaskStore protocol ----------------------------------------------------------

    async def get(self, task_id: str) -> StoredTask | None:
        """The stored task (a fresh copy), or ``None`` when unknown or expired."""
        self._evict()
        await self.notify_evicted()
        record = self._records.get(task_id)
        if record is None:
            return None
        return StoredTask(
            task=_task_decoder.decode(self._blob(record)),
            version=record.version,
            last_seq=record.last_seq,
            tenant=record.tenant,
            owner=record.owner,
        )

    async def create(
        self, task: Task, *, tenant: str = "", owner: str = "", last_seq: int = 0
    ) -> StoredTask:
        """Store a new task at version 1; :class:`TaskExistsError` if the id is taken."""
        stored = self.create_now(task, tenant=tenant, owner=owner, last_seq=last_seq)
        await self.notify_evicted()
        return stored

    def create_now(
        self, task: Task, *, tenant: str = "", owner: str = "", last_seq: int = 0
    ) -> StoredTask:
        """:meth:`create` without waiting; ``on_evict`` hooks wait for
        :meth:`notify_evicted`."""
        if task.id in self._records:
            self._evict()  # an expired task frees its id
            if task.id in self._records:
                raise TaskExistsError(task.id)
        stamp = task.status.timestamp
        record = _Record(
            (status_micros(stamp), task.id), tenant, task.context_id, owner, stamp=stamp
        )
        self._write(record, task, last_seq)
        self._records[task.id] = record
        self._index(record)
        self._evict()
        return StoredTask(
            task=task, version=record.version, last_seq=last_seq, tenant=tenant, owner=owner
        )

    async def save(self, task: Task, *, expected_version: int, last_seq: int) -> StoredTask:
        """Replace the task if it is still at ``expected_version``, else
        :class:`ConcurrentUpdateError` (also when it is gone: deleted or evicted)."""
        stored = self.save_now(task, expected_version=expected_version, last_seq=last_seq)
        await self.notify_evicted()
        return stored

    def save_now(self, task: Task, *, expected_version: int, last_seq: int) -> StoredTask:
        """:meth:`save` without waiting; ``on_evict`` hooks wait for :meth:`notify_evicted`."""
        record = self._records.get(task.id)
        if record is not None and record.terminal_since is not None:
            self._evict()  # a finished task may have expired: then it is gone
            record = self._records.get(task.id)
        if record is None:
            raise ConcurrentUpdateError(f"task {task.id!r} is not stored")
        if record.version != expected_version:
            raise ConcurrentUpdateError(
                f"task {task.id!r} is at version {record.version}, not {expected_version}"
            )
        self._write(record, task, last_seq)  # first: encoding may fail, then nothing changed
        stamp = task.status.timestamp
        # Most writes (every chunk of a streamed artifact) keep the status: same place.
        if stamp is not record.stamp or task.context_id != record.context_id:
            record.stamp = stamp
            key = (status_micros(stamp), task.id)
            if key != record.key or task.context_id != record.context_id:
                self._unindex(record)
                record.key, record.context_id = key, task.context_id
                self._index(record)
        # Only a finished task counts against the bounds; the writes of a task still being
        # worked on (every streamed chunk) leave eviction to the next create or read.
        if record.terminal_since is not None:
            self._evict()
        return StoredTask(
            task=task,
            version=record.version,
            last_seq=last_seq,
            tenant=record.tenant,
            owner=record.owner,
        )

    @property
    def evictions_pending(self) -> bool:
        """Whether evicted tasks still wait for their ``on_evict`` hook."""
        return bool(self._pending_evictions or self._pending_awaits)

    async def delete(self, task_id: str) -> None:
        """Forget a task at once (no error if unknown; ``on_evict`` is not called)."""
        self._evict()
        record = self._records.get(task_id)
        if record is not None:
            self._remove(record)
            self._compact_terminal_queue()
        await self.notify_evicted()

    async def list_tasks(self, query: TaskQuery, visible: VisibleFilter | None = None) -> TaskPage:
        """One page of ListTasks: newest status first, filtered, then ``visible``, then paged.

        Order is by ``(status timestamp, task id)``, both descending; tasks without a status
        timestamp come last. Both parts run the same way so that the cursor is a single
        comparable key: a database serves the same order with one composite index and a
        row comparison (``WHERE (ts, id) < (:ts, :id) ORDER BY ts DESC, id DESC``).

        Cost: O(log n + page) without ``visible`` and without a state filter, also with an
        owner filter (each owner has its own index); a state filter, or an owner filter
        together with a context, adds a scan of the records in range (no decoding);
        ``visible`` must see every candidate, to keep ``total_size`` right, so it costs one
        decode and one call per matching task.
        """
        if query.page_size < 1:
            raise ValueError("page_size must be at least 1")
        self._evict()
        await self.notify_evicted()
        scope = query_scope(query)
        cursor = self._read_token(query.page_token, scope) if query.page_token else None
        owner = query.owner
        keys: _Keys
        if query.context_id:
            keys = self._by_context.get(query.tenant, {}).get(query.context_id, ())
        elif owner is not None:
            keys = self._by_owner.get((query.tenant, owner), ())
            owner = None  # the index is the owner's: nothing left to check per task
        else:
            keys = self._by_tenant.get(query.tenant, ())
        low = 0
        if query.status_timestamp_after is not None:
            low = bisect_left(keys, (status_micros(query.status_timestamp_after), ""))
        high = len(keys) if cursor is None else max(low, bisect_left(keys, cursor))

        if visible is None and query.state is TaskState.UNSPECIFIED and owner is None:
            start = max(low, high - query.page_size)
            page_keys = list(keys[start:high])
            page_keys.reverse()
            tasks = [_task_decoder.decode(self._blob(self._records[k[1]])) for k in page_keys]
            more = start > low
            next_token = self._make_token(page_keys[-1], scope) if more and page_keys else ""
            return TaskPage(tasks=tasks, next_page_token=next_token, total_size=len(keys) - low)

        # Snapshot the candidates (keys and immutable blobs) before any await, so that
        # writes made while `visible` runs cannot shift the scan under our feet.
        state = query.state
        candidates: list[tuple[_Key, bytes]] = []
        for index in range(len(keys) - 1, low - 1, -1):
            key = keys[index]
            record = self._records[key[1]]
            if (state is TaskState.UNSPECIFIED or record.state is state) and (
                owner is None or record.owner == owner
            ):
                candidates.append((key, self._blob(record)))
        page: list[Task] = []
        last_key: _Key | None = None
        total = 0
        more = False
        for key, blob in candidates:
            task: Task | None = None
            if visible is not None:
                task = _task_decoder.decode(blob)
                if not await visible(task):
                    continue
            total += 1
            if cursor is not None and key >= cursor:
                continue  # before the cursor: counted, not shown
            if len(page) < query.page_size:
                page.append(task if task is not None else _task_decoder.decode(blob))
                last_key = key
            else:
                more = True
        next_token = self._make_token(last_key, scope) if more and last_key else ""
        return TaskPage(tasks=page, next_page_token=next_token, total_size=total)

    # -- writes and indexes --------------------------------------------------------------

    def _write(self, record: _Record, task: Task, last_seq: int) -> None:
        previous = record.blob
        if task.status.state in _LIVE_STATES:
            # Written again at its next event (every chunk of a streamed artifact): encode
            # it when somebody reads it, or once it settles. Tasks are frozen and the writer
            # replaces, never mutates, them, so holding this one is safe.
            record.live, record.blob = task, None
        else:
            record.live, record.blob = None, self._encode(task)
        record.version += 1
        record.last_seq = last_seq
        record.state = task.status.state
        terminal = task.status.state.is_terminal
        if terminal and record.terminal_since is None:
            record.terminal_since = self._clock()
            self._terminal_queue.append(record)
            self._terminal_count += 1
            self._terminal_bytes += len(record.blob or b"")  # (a terminal task has one)
        elif record.terminal_since is not None:
            if terminal:  # a finished task written again: counted at its new size
                self._terminal_bytes += len(record.blob or b"") - len(previous or b"")
            else:
                # Only a lifecycle bug un-finishes a task; then it must not be evicted.
                record.terminal_since = None
                self._terminal_count -= 1
                self._terminal_bytes -= len(previous or b"")

    def _encode(self, task: Task) -> bytes:
        # encode_into + copy gives a bytes object of exactly the encoded size; `encode`
        # returns one with spare capacity (about 25% of a small task).
        _encoder.encode_into(task, self._buffer)
        blob = bytes(self._buffer)
        if len(blob) > _KEEP_BUFFER:
            self._buffer = bytearray()  # not held at 1.5 times the largest task ever stored
        return blob

    def _blob(self, record: _Record) -> bytes:
        """The record's encoded task, encoding a live one now (once per write)."""
        if record.blob is None:
            assert record.live is not None
            record.blob = self._encode(record.live)
        return record.blob

    def _index(self, record: _Record) -> None:
        tenant_keys = self._by_tenant.get(record.tenant)
        if tenant_keys is None:
            tenant_keys = self._by_tenant[record.tenant] = _SortedKeys()
        tenant_keys.add(record.key)
        owner = (record.tenant, record.owner)
        owner_keys = self._by_owner.get(owner)
        if owner_keys is None:
            owner_keys = self._by_owner[owner] = _SortedKeys()
        owner_keys.add(record.key)
        if record.context_id:
            contexts = self._by_context.setdefault(record.tenant, {})
            keys = contexts.get(record.context_id)
            if keys is None:
                contexts[record.context_id] = (record.key,)
            elif type(keys) is tuple and len(keys) < _SMALL_CONTEXT:
                at = bisect_left(keys, record.key)
                contexts[record.context_id] = (*keys[:at], record.key, *keys[at:])
            else:
                grown = keys if isinstance(keys, list) else list(keys)
                insort(grown, record.key)
                contexts[record.context_id] = grown

    def _unindex(self, record: _Record) -> None:
        tenant_keys = self._by_tenant[record.tenant]
        tenant_keys.discard(record.key)
        if not tenant_keys:
            del self._by_tenant[record.tenant]
        owner_keys = self._by_owner[record.tenant, record.owner]
        owner_keys.discard(record.key)
        if not owner_keys:
            del self._by_owner[record.tenant, record.owner]
        if record.context_id:
            contexts = self._by_context[record.tenant]
            keys = contexts[record.context_id]
            if isinstance(keys, tuple):
                keys = tuple(k for k in keys if k != record.key)
                contexts[record.context_id] = keys
            else:
                _discard(keys, record.key)
            if not keys:
                del contexts[record.context_id]  # one index per context adds up
            if not contexts:
                del self._by_context[record.tenant]

    def _remove(self, record: _Record) -> None:
        del self._records[record.key[1]]
        self._unindex(record)
        if record.terminal_since is not None:
            self._terminal_count -= 1
            self._terminal_bytes -= _size(record)

    # -- eviction ------------------------------------------------------------------------

    def _evict(self) -> None:
        """Drop expired and surplus terminal tasks (over the count or the byte budget),
        oldest first; queue their ids for ``on_evict``. Amortised O(1): each queue entry is
        popped once."""
        queue = self._terminal_queue
        now = self._clock() if self._ttl is not None else 0.0
        while queue:
            record = queue[0]
            since = record.terminal_since
            if since is None or self._records.get(record.key[1]) is not record:
                queue.popleft()  # deleted, or un-finished, since it was queued
                continue
            over_bytes = self._terminal_bytes > self._max_terminal_bytes
            if not (
                over_bytes
                or self._terminal_count > self._max_terminal
                or (self._ttl is not None and now - since >= self._ttl)
            ):
                break
            newest = queue[-1]
            if over_bytes and newest is not record and self._too_big(newest):
                # Larger than the whole budget, it cannot stay: the others need not go first.
                queue.pop()
                record = newest
            else:
                queue.popleft()
            self._remove(record)
            hook = self.on_evict
            if hook is None:
                continue
            if inspect.iscoroutinefunction(hook):
                self._pending_evictions.append(record.key[1])
                continue
            # A plain function runs now, inside the operation (the in-memory backend's,
            # which drops the task's log and webhooks, never waits).
            try:
                result = hook(record.key[1])
            except Exception:
                _logger.exception("on_evict hook failed for task %s", record.key[1])
                continue
            if inspect.isawaitable(result):
                self._pending_awaits.append((record.key[1], result))

    def _too_big(self, record: _Record) -> bool:
        """Whether a queued record is a current terminal task larger than the byte budget."""
        current = record.terminal_since is not None and self._records.get(record.key[1]) is record
        return current and _size(record) > self._max_terminal_bytes

    def _compact_terminal_queue(self) -> None:
        # Deleted tasks leave stale entries behind; rebuild when they outnumber live ones
        # so the queue stays O(live terminal tasks) even if the front never expires.
        queue = self._terminal_queue
        if len(queue) > 2 * self._terminal_count + 64:
            self._terminal_queue = deque(
                r
                for r in queue
                if r.terminal_since is not None and self._records.get(r.key[1]) is r
            )

    async def notify_evicted(self) -> None:
        """Run the ``on_evict`` hook of every task evicted so far."""
        # Pop one id at a time: if this task is cancelled mid-way, the next operation
        # notifies the rest.
        awaits = self._pending_awaits
        while awaits:
            task_id, awaitable = awaits.popleft()
            try:
                await awaitable
            except Exception:
                _logger.exception("on_evict hook failed for task %s", task_id)
        hook = self.on_evict
        pending = self._pending_evictions
        while hook is not None and pending:
            task_id = pending.popleft()
            try:
                result = hook(task_id)
                if inspect.isawaitable(result):
                    await result
            except Exception:
                _logger.exception("on_evict hook failed for task %s", task_id)

    # -- page tokens (the envelope and signature: page_tokens) ------------------------

    def _make_token(self, key: _Key, scope: bytes) -> str:
        return make_token(self._token_key, scope, _encoder.encode(key))

    def _read_token(self, token: str, scope: bytes) -> _Key:
        """The cursor in a token this store issued for the same filters, else
        :class:`InvalidPageTokenError`."""
        cursor = read_token(self._token_key, scope, token)
        try:
            return _cursor_decoder.decode(cursor)
        except msgspec.DecodeError:  # pragma: no cover - only if our own encoding changed
            raise InvalidPageTokenError("invalid page token") from None


def _size(record: _Record) -> int:
    """Bytes of a record's blob (a terminal task's is always there)."""
    return len(record.blob) if record.blob is not None else 0


def _discard(keys: list[_Key], key: _Key) -> None:
    position = bisect_left(keys, key)
    if position < len(keys) and keys[position] == key:
        del keys[position]
