"""The SQL push-config store: :class:`SqlPushConfigStore`, a ``PushConfigStore``.

A task's webhook configs are rows of ``push_configs`` (task id, config id, creation
position, dialect, the ProtoJSON config), at most ``max_configs_per_task`` per task, and
dropped with the task. With a `PushSecretCipher`, a config's token and credentials are kept
encrypted in the row and decrypted on every read.

Delivery is the durable queue of `a2a_sql.push_queue`: its jobs name a config by id and
read it here (:meth:`SqlPushConfigStore.delivery_targets`) when they are delivered, so no
decrypted secret is ever written to the queue.
"""

from __future__ import annotations

import uuid

import msgspec
import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncEngine

from a2a_core import codec
from a2a_core.errors import LocalProtocolError
from a2a_core.server.backends import (
    PushConfigLimitError,
    PushConfigStore,
    PushSecretCipher,
    PushTarget,
)
from a2a_core.types import TaskPushNotificationConfig

from ._common import check_document, check_key
from ._schema import Tables

__all__ = ["SqlPushConfigStore"]


class SqlPushConfigStore(PushConfigStore):
    """Webhook configs per task in SQL, bounded per task (see the module docstring)."""

    def __init__(
        self,
        engine: AsyncEngine,
        tables: Tables,
        *,
        max_configs_per_task: int = 10,
        cipher: PushSecretCipher | None = None,
    ) -> None:
        if max_configs_per_task < 1:
            raise ValueError("max_configs_per_task must be at least 1")
        self.engine = engine
        self.tables = tables
        self.max_configs_per_task = max_configs_per_task
        self.cipher = cipher

    async def set(
        self, config: TaskPushNotificationConfig, *, legacy_v0_3: bool = False
    ) -> TaskPushNotificationConfig:
        """Store (or replace, by ``(taskId, id)``) a config; assign an id when empty (the
        task id for the task's first config, else a new UUID)."""
        if not config.task_id:
            raise LocalProtocolError("a push config must name its task before it is stored")
        push, tasks = self.tables.push_configs, self.tables.tasks
        async with self.engine.begin() as conn:
            # Lock the task's row: two sets of one task take turns (the count stays true).
            await conn.execute(
                sa.select(tasks.c.id).where(tasks.c.id == config.task_id).with_for_update()
            )
            rows = (
                await conn.execute(
                    sa.select(push.c.config_id, push.c.position).where(
                        push.c.task_id == config.task_id
                    )
                )
            ).all()
            if not config.id:
                new_id = config.task_id if not rows else uuid.uuid4().hex
                config = msgspec.structs.replace(config, id=new_id)
            check_key("config.id", config.id)
            held = config if self.cipher is None else self.cipher.encrypt(config)
            body = codec.encode(held).decode()
            check_document(body, "config")
            where = (push.c.task_id == config.task_id, push.c.config_id == config.id)
            if any(row.config_id == config.id for row in rows):
                await conn.execute(
                    sa.update(push).where(*where).values(body=body, legacy_v0_3=legacy_v0_3)
                )
            elif len(rows) >= self.max_configs_per_task:
                raise PushConfigLimitError(self.max_configs_per_task)
            else:
                position = max((int(row.position) for row in rows), default=0) + 1
                await conn.execute(
                    sa.insert(push).values(
                        task_id=config.task_id,
                        config_id=config.id,
                        position=position,
                        legacy_v0_3=legacy_v0_3,
                        body=body,
                    )
                )
        return config

    async def _targets(self, task_id: str, config_id: str | None = None) -> list[PushTarget]:
        push = self.tables.push_configs
        query = sa.select(push.c.body, push.c.legacy_v0_3).where(push.c.task_id == task_id)
        if config_id is not None:
            query = query.where(push.c.config_id == config_id)
        async with self.engine.connect() as conn:
            rows = (await conn.execute(query.order_by(push.c.position))).all()
        return [
            PushTarget(
                config=codec.decode(row.body, TaskPushNotificationConfig),
                legacy_v0_3=bool(row.legacy_v0_3),
            )
            for row in rows
        ]

    def _shown(self, config: TaskPushNotificationConfig) -> TaskPushNotificationConfig:
        return config if self.cipher is None else self.cipher.decrypt_or_redact(config)

    async def get(self, task_id: str, config_id: str) -> TaskPushNotificationConfig | None:
        """One config, or ``None``."""
        targets = await self._targets(task_id, config_id)
        return self._shown(targets[0].config) if targets else None

    async def list_configs(self, task_id: str) -> list[TaskPushNotificationConfig]:
        """Every config of a task, in creation order."""
        return [self._shown(target.config) for target in await self._targets(task_id)]

    async def targets(self, task_id: str) -> list[PushTarget]:
        """Every config of a task with its dialect, for delivery (secrets in clear)."""
        targets = await self._targets(task_id)
        return targets if self.cipher is None else self.cipher.decrypt_targets(targets)

    async def delivery_targets(self, task_id: str, config_id: str) -> list[PushTarget]:
        """The one config ``config_id`` of a task, for delivery (secrets in clear); empty if
        it was deleted, or if no key opens its secrets (logged)."""
        targets = await self._targets(task_id, config_id)
        return targets if self.cipher is None else self.cipher.decrypt_targets(targets)

    async def delete(self, task_id: str, config_id: str) -> None:
        """Remove one config (no error if unknown)."""
        push = self.tables.push_configs
        async with self.engine.begin() as conn:
            await conn.execute(
                sa.delete(push).where(push.c.task_id == task_id, push.c.config_id == config_id)
            )

    async def delete_task(self, task_id: str) -> None:
        """Remove every config of a task."""
        push = self.tables.push_configs
        async with self.engine.begin() as conn:
            await conn.execute(sa.delete(push).where(push.c.task_id == task_id))
