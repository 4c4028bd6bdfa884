"""The in-memory push-config store (L2): the default :class:`~.push.PushConfigStore`.

It owns the per-task webhook configs of one process: id assignment, upsert by
``(taskId, id)``, creation order, and a bound on configs per task so that a client cannot grow
the server's memory (or its webhook fan-out) without limit. Nothing here survives a restart;
a networked store implements the same protocol.

Every method runs to completion without awaiting, so on one event loop each call is atomic
and no lock is needed; the methods are ``async`` only to fit the protocol.

With a :class:`~.push_secrets.PushSecretCipher`, the configs are held with their token and
credentials encrypted, and decrypted on every read: a heap dump or a debugger shows none.
"""

from __future__ import annotations

import uuid

import msgspec

from a2a_core._protocol.errors import LocalProtocolError
from a2a_core.types import TaskPushNotificationConfig

from ._push import PushConfigLimitError, PushTarget
from ._push_secrets import PushSecretCipher

__all__ = ["InMemoryPushConfigStore", "PushConfigLimitError"]


class InMemoryPushConfigStore:
    """Webhook configs per task, in a dict, bounded per task.

    ``max_configs_per_task`` (default 10) bounds the configs of one task: creating one more
    raises :class:`PushConfigLimitError`; replacing an existing one (same id) is always
    allowed. Configs are kept until deleted one by one or with :meth:`delete_task` (which
    the server calls when it evicts the task). ``cipher``: keep the secrets encrypted.
    """

    def __init__(
        self, *, max_configs_per_task: int = 10, cipher: PushSecretCipher | None = None
    ) -> None:
        if max_configs_per_task < 1:
            raise ValueError("max_configs_per_task must be at least 1")
        self._max = max_configs_per_task
        self.cipher = cipher
        # task id -> config id -> target; dicts keep insertion order, which is creation
        # order, and replacing a value keeps its position (an upsert does not reorder).
        self._tasks: dict[str, dict[str, PushTarget]] = {}

    async def set(
        self, config: TaskPushNotificationConfig, *, legacy_v0_3: bool = False
    ) -> TaskPushNotificationConfig:
        """Store (or replace, by ``(taskId, id)``) a config; assign an id when empty.

        The id assigned is the task id for the task's first config (what the reference SDK
        does, so a v0.3 client that omits the config id finds it again), else a new UUID.
        """
        if not config.task_id:
            raise LocalProtocolError("a push config must name its task before it is stored")
        configs = self._tasks.get(config.task_id, {})
        if not config.id:
            new_id = config.task_id if not configs else uuid.uuid4().hex
            config = msgspec.structs.replace(config, id=new_id)
        if config.id not in configs and len(configs) >= self._max:
            raise PushConfigLimitError(self._max)
        held = config if self.cipher is None else self.cipher.encrypt(config)
        configs[config.id] = PushTarget(config=held, legacy_v0_3=legacy_v0_3)
        self._tasks[config.task_id] = configs
        return config

    async def get(self, task_id: str, config_id: str) -> TaskPushNotificationConfig | None:
        """One config, or ``None``."""
        target = self._tasks.get(task_id, {}).get(config_id)
        return None if target is None else self._shown(target.config)

    async def list_configs(self, task_id: str) -> list[TaskPushNotificationConfig]:
        """Every config of a task, in creation order."""
        return [self._shown(target.config) for target in self._tasks.get(task_id, {}).values()]

    def has_targets(self, task_id: str) -> bool:
        """Whether the task has any config (the task writer's fast path asks, unawaited)."""
        return task_id in self._tasks

    async def targets(self, task_id: str) -> list[PushTarget]:
        """Every config of a task with its dialect, for delivery (secrets in clear)."""
        targets = list(self._tasks.get(task_id, {}).values())
        if self.cipher is None:
            return targets
        return self.cipher.decrypt_targets(targets)

    def _shown(self, config: TaskPushNotificationConfig) -> TaskPushNotificationConfig:
        return config if self.cipher is None else self.cipher.decrypt_or_redact(config)

    async def delete(self, task_id: str, config_id: str) -> None:
        """Remove one config (no error if unknown: delete is idempotent)."""
        configs = self._tasks.get(task_id)
        if configs is None:
            return
        configs.pop(config_id, None)
        if not configs:
            # An empty dict per task would otherwise outlive every task ever configured.
            del self._tasks[task_id]

    async def delete_task(self, task_id: str) -> None:
        """Remove every config of a task."""
        self.delete_task_now(task_id)

    def delete_task_now(self, task_id: str) -> None:
        """:meth:`delete_task`, without the coroutine."""
        self._tasks.pop(task_id, None)
