"""The seam for backend authors (L2): everything a task store, event log or push backend needs.

A backend (in-memory, Redis, SQL, your own) implements the protocols below and may run
services beside the server; it never needs a private name of the core. This module gathers,
in one place:

- `Backend`, the value ``A2AServer(backend=...)`` takes (its ``store``, ``event_log``,
  ``push_config_store``, ``push_sender`` and ``services``), and `InMemoryBackend`, the
  default;
- the **protocols** a backend's parts implement: `TaskStore` (and the optional
  `ImmediateTaskStore`, `LoggedTaskStore`, `BatchLoggedTaskStore` and `CheckedTaskStore`),
  `EventLog` (and the optional `ImmediateEventLog` and `MeasuredEventLog`),
  `PushConfigStore`, `PushSender` (and the optional `LoggedPushSender`), with their values
  (`StoredTask`, `TaskQuery`, `TaskPage`, `LoggedEvent`, `PushTarget`, `VisibleFilter`);
- the **errors** they raise, which the runtime expects: `ConcurrentUpdateError` (a write on a
  stale version), `TaskExistsError`, `InvalidPageTokenError`, `EventLogClosedError` (an
  append after the task finished: an expected race with a shared backend),
  `PushConfigLimitError`; and `BackendUnavailableError`, what a backend raises when its
  store cannot be reached (-32603 "Task store unavailable", 503 on REST), with `OutageLog`
  to log each outage once rather than each failed request;
- the **page tokens** of ListTasks (`make_token`, `read_token`, `query_scope`,
  `status_micros`, `NO_TIMESTAMP`), so that every store pages the same way;
- `HealthCheckingBackend`, the optional ``check_health`` a backend offers for readiness
  probes (`A2AServer.check_health`, `Health`);
- `Service`, how a backend runs its background work under the server's lifespan, given a
  `ServerHandle` (what a service may use of the server); the webhook delivery a backend's
  queue uses: `WebhookPoster`, which posts one delivery at a time with no queue of its own
  (its `WebhookPoster.attempt` makes one attempt and says when the next is due, a
  `PushAttempt`, for a queue that keeps retries durable), under `DeliveryRules` (retries,
  backoff, what counts as delivered: `DeliveryOutcome`), and `WebhookPushSender`, the
  in-memory queue in front of one; and the SSRF guard they apply (`WebhookPolicy`, the
  server's ``webhook_policy``; `check_webhook_url`, `WebhookUrlRefusedError`);
  `Observer`, the server's observer (`ServerHandle.observer`), whose
  `Observer.push_context_headers` a durable push queue keeps with each job so that its
  delivery continues the trace of the agent that wrote the event;
- `PushSecretCipher` (and `PushSecretError`, `redact_push_config`), to keep the webhooks'
  tokens and credentials encrypted in the backend's storage;
- the **server operations** a shared backend needs, as methods of `A2AServer`:
  `A2AServer.fail_task` (fail a task whose replica was lost) and
  `A2AServer.cancel_local_execution` (stop the agent running here for a task finished on
  another replica).
"""

from __future__ import annotations

from a2a_core.server._backend import Backend, InMemoryBackend, ServerHandle, Service
from a2a_core.server._delivery_rules import DeliveryOutcome, DeliveryRules
from a2a_core.server._events import (
    EventLog,
    EventLogClosedError,
    ImmediateEventLog,
    LoggedEvent,
    MeasuredEventLog,
)
from a2a_core.server._health import Health, HealthCheckingBackend
from a2a_core.server._outages import BackendUnavailableError, OutageLog
from a2a_core.server._page_tokens import (
    NO_TIMESTAMP,
    make_token,
    query_scope,
    read_token,
    status_micros,
)
from a2a_core.server._push import (
    LoggedPushSender,
    PushConfigLimitError,
    PushConfigStore,
    PushSender,
    PushTarget,
)
from a2a_core.server._push_delivery import WebhookPushSender
from a2a_core.server._push_secrets import PushSecretCipher, PushSecretError, redact_push_config
from a2a_core.server._server import A2AServer
from a2a_core.server._store import (
    BatchLoggedTaskStore,
    CheckedTaskStore,
    ConcurrentUpdateError,
    ImmediateTaskStore,
    InvalidPageTokenError,
    LoggedTaskStore,
    StoredTask,
    TaskExistsError,
    TaskPage,
    TaskQuery,
    TaskStore,
    VisibleFilter,
)
from a2a_core.server._webhook_guard import (
    WebhookPolicy,
    WebhookUrlRefusedError,
    check_webhook_url,
)
from a2a_core.server._webhook_poster import PushAttempt, WebhookPoster
from a2a_core.server.observe import Observer

__all__ = [
    "NO_TIMESTAMP",
    "A2AServer",
    "Backend",
    "BackendUnavailableError",
    "BatchLoggedTaskStore",
    "CheckedTaskStore",
    "ConcurrentUpdateError",
    "DeliveryOutcome",
    "DeliveryRules",
    "EventLog",
    "EventLogClosedError",
    "Health",
    "HealthCheckingBackend",
    "ImmediateEventLog",
    "ImmediateTaskStore",
    "InMemoryBackend",
    "InvalidPageTokenError",
    "LoggedEvent",
    "LoggedPushSender",
    "LoggedTaskStore",
    "MeasuredEventLog",
    "Observer",
    "PushAttempt",
    "OutageLog",
    "PushConfigLimitError",
    "PushConfigStore",
    "PushSecretCipher",
    "PushSecretError",
    "PushSender",
    "PushTarget",
    "ServerHandle",
    "Service",
    "StoredTask",
    "TaskExistsError",
    "TaskPage",
    "TaskQuery",
    "TaskStore",
    "VisibleFilter",
    "WebhookPolicy",
    "WebhookPoster",
    "WebhookPushSender",
    "WebhookUrlRefusedError",
    "check_webhook_url",
    "make_token",
    "query_scope",
    "read_token",
    "redact_push_config",
    "status_micros",
]
