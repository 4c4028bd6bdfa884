"""Durable tasks for an a2aserve-core server on SQL: PostgreSQL, SQLite, MySQL/MariaDB.

    from a2a_sql import SqlBackend

    server = A2AServer(agent, card=card, backend=SqlBackend("postgresql+asyncpg://db/agents"))

Tasks (ProtoJSON in a JSON column, with indexed columns for ListTasks), their event logs
(written in the same transaction as the task), webhook configs and a durable push queue
(jobs queued with their event, delivered at least once), on SQLAlchemy 2's asyncio Core;
the schema ships as Alembic migrations (``python -m a2a_sql upgrade URL``). PostgreSQL
serves several replicas (``LISTEN/NOTIFY``, leases, cancel across replicas); SQLite and
MySQL/MariaDB one server process per database and prefix. See ``docs/storage.md``.
"""

from importlib.metadata import version as _version

from ._schema import KEY_LENGTH, Tables
from .backend import HOST_LOST_TEXT, PACKET_HEADROOM, RESTART_TEXT, SqlBackend
from .events import SqlEventLog
from .migrate import SchemaError, check_schema, head_revision, upgrade
from .push import SqlPushConfigStore
from .push_queue import PushQueueSettings, SqlPushQueue, SqlPushWorker
from .replicas import Replicas
from .store import SqlTaskStore

__version__: str = _version("a2aserve-sql")

__all__ = [
    "HOST_LOST_TEXT",
    "__version__",
    "KEY_LENGTH",
    "PACKET_HEADROOM",
    "RESTART_TEXT",
    "PushQueueSettings",
    "Replicas",
    "SchemaError",
    "SqlBackend",
    "SqlEventLog",
    "SqlPushConfigStore",
    "SqlPushQueue",
    "SqlPushWorker",
    "SqlTaskStore",
    "Tables",
    "check_schema",
    "head_revision",
    "upgrade",
]
