"""L2: the async runtime on anyio - the server object, the agent API, stores and delivery.

Everything here runs under asyncio or trio (through anyio) and imports no web framework.
Adapters call :meth:`A2AServer.handle`; agents receive a :class:`TaskContext`.
"""

from a2a_core.server.agent import Agent, AgentResult, AuthRequired, InputRequired
from a2a_core.server.app import A2AServer, AuthorizeTask, ExtendedCard
from a2a_core.server.backend import Backend, InMemoryBackend, Service
from a2a_core.server.context import TaskContext
from a2a_core.server.events import EventLog, ImmediateEventLog, LoggedEvent
from a2a_core.server.extensions import Extension, TimestampExtension
from a2a_core.server.guards import ExecutionGuards
from a2a_core.server.limits import TaskLimitError, TaskLimits
from a2a_core.server.memory_events import InMemoryEventLog
from a2a_core.server.memory_push import InMemoryPushConfigStore
from a2a_core.server.memory_store import InMemoryTaskStore
from a2a_core.server.ownership import TaskOwner, owner_by_identity, owner_key
from a2a_core.server.push import PushConfigStore, PushSender, PushTarget
from a2a_core.server.push_delivery import WebhookPushSender
from a2a_core.server.push_secrets import PushSecretCipher, PushSecretError, redact_push_config
from a2a_core.server.store import (
    ImmediateTaskStore,
    LoggedTaskStore,
    StoredTask,
    TaskPage,
    TaskQuery,
    TaskStore,
)

__all__ = [
    "A2AServer",
    "Agent",
    "AgentResult",
    "AuthRequired",
    "AuthorizeTask",
    "Backend",
    "EventLog",
    "ExecutionGuards",
    "ExtendedCard",
    "Extension",
    "ImmediateEventLog",
    "ImmediateTaskStore",
    "InMemoryBackend",
    "InMemoryEventLog",
    "InMemoryPushConfigStore",
    "InMemoryTaskStore",
    "InputRequired",
    "LoggedEvent",
    "LoggedTaskStore",
    "PushConfigStore",
    "PushSecretCipher",
    "PushSecretError",
    "PushSender",
    "PushTarget",
    "Service",
    "StoredTask",
    "TaskContext",
    "TaskLimitError",
    "TaskLimits",
    "TaskOwner",
    "TaskPage",
    "TaskQuery",
    "TaskStore",
    "TimestampExtension",
    "WebhookPushSender",
    "owner_by_identity",
    "owner_key",
    "redact_push_config",
]
