"""Durable tasks for an a2aserve-core server on SQL: PostgreSQL, SQLite, MySQL/MariaDB.

    from a2a_sql import SqlBackend

    server = A2AServer(agent, card=card, backend=SqlBackend("postgresql+asyncpg://db/agents"))

Tasks (ProtoJSON in a JSON column, with indexed columns for ListTasks), their event logs
(written in the same transaction as the task) and webhook configs, on SQLAlchemy 2's
asyncio Core; the schema ships as Alembic migrations (``python -m a2a_sql upgrade URL``).
One server process per database and prefix for now. See ``docs/storage.md``.
"""

from importlib.metadata import version as _version

from ._schema import KEY_LENGTH, Tables
from .backend import RESTART_TEXT, SqlBackend
from .events import SqlEventLog
from .migrate import SchemaError, check_schema, head_revision, upgrade
from .push import SqlPushConfigStore
from .store import SqlTaskStore

__version__: str = _version("a2aserve-sql")

__all__ = [
    "__version__",
    "KEY_LENGTH",
    "RESTART_TEXT",
    "SchemaError",
    "SqlBackend",
    "SqlEventLog",
    "SqlPushConfigStore",
    "SqlTaskStore",
    "Tables",
    "check_schema",
    "head_revision",
    "upgrade",
]
