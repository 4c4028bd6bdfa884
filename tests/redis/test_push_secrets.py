"""Push secrets on Redis: encrypted in the config hashes and the queued jobs, delivered in
clear, readable across a key rotation; against a real Redis, each test with its own prefix."""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator
from typing import Any, cast

import anyio
import pytest
from redis.asyncio import Redis
from redis_harness import Receiver

from a2a_core.server import (
    A2AServer,
    InputRequired,
    PushOptions,
    PushSecretCipher,
    PushTarget,
    WebhookPolicy,
    WebhookPushSender,
    redact_push_config,
)
from a2a_core.types import (
    AuthenticationInfo,
    StreamResponse,
    Task,
    TaskPushNotificationConfig,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
)
from a2aserve_redis import PushWorker, RedisBackend, RedisPushConfigStore, RedisPushQueue
from helpers.a2a_client import Client, make_card, user_message

pytestmark = pytest.mark.anyio

SECRET = "s3cret-credentials"
TOKEN = "t0ken-for-the-hook"
KEY_OLD = PushSecretCipher.generate_key()
KEY_NEW = PushSecretCipher.generate_key()


def config(task_id: str = "t", url: str = "https://example.com/hook") -> TaskPushNotificationConfig:
    return TaskPushNotificationConfig(
        task_id=task_id,
        id="cfg",
        url=url,
        token=TOKEN,
        authentication=AuthenticationInfo(scheme="Bearer", credentials=SECRET),
    )


async def raw_values(redis: Redis, key: str) -> list[bytes]:
    fields = cast("dict[bytes, bytes]", await redis.hgetall(key))
    assert fields  # there is something to look at
    return list(fields.values())


def holds_secrets(values: list[bytes]) -> bool:
    return any(SECRET.encode() in v or TOKEN.encode() in v for v in values)


async def test_configs_are_encrypted_in_redis_and_read_in_clear(redis: Redis, prefix: str) -> None:
    plain = RedisPushConfigStore(redis, prefix=prefix + "plain:")
    sealed = RedisPushConfigStore(redis, prefix=prefix, cipher=PushSecretCipher([KEY_NEW]))
    await plain.set(config())
    await sealed.set(config(), legacy_v0_3=True)
    # What a look at Redis shows: the secrets of the plain store, none of the other.
    assert holds_secrets(await raw_values(redis, plain.keys.push("t")))
    assert not holds_secrets(await raw_values(redis, sealed.keys.push("t")))
    assert await sealed.get("t", "cfg") == config()
    assert await sealed.list_configs("t") == [config()]
    assert await sealed.targets("t") == [PushTarget(config(), legacy_v0_3=True)]


async def test_without_the_keys_nothing_is_shown_nor_delivered(
    redis: Redis, prefix: str, caplog: pytest.LogCaptureFixture
) -> None:
    await RedisPushConfigStore(redis, prefix=prefix, cipher=PushSecretCipher([KEY_OLD])).set(
        config()
    )
    for cipher in (None, PushSecretCipher([KEY_NEW])):  # no keys, or the wrong ones
        store = RedisPushConfigStore(redis, prefix=prefix, cipher=cipher)
        assert await store.get("t", "cfg") == redact_push_config(config())
        assert await store.list_configs("t") == [redact_push_config(config())]
        assert await store.targets("t") == []
    assert "not delivered" in caplog.text
    assert SECRET not in caplog.text and TOKEN not in caplog.text


async def test_rotation_keeps_old_configs_readable_then_moves_them(
    redis: Redis, prefix: str
) -> None:
    before = RedisPushConfigStore(redis, prefix=prefix, cipher=PushSecretCipher([KEY_OLD]))
    await before.set(config("t1"))
    await before.set(config("t2"), legacy_v0_3=True)
    rotating = RedisPushConfigStore(
        redis, prefix=prefix, cipher=PushSecretCipher([KEY_NEW, KEY_OLD])
    )
    assert await rotating.get("t1", "cfg") == config("t1")  # the old key still reads
    await rotating.set(config("t3"))  # under the new key already
    lost = PushSecretCipher([PushSecretCipher.generate_key()])  # a key nobody has any more
    await RedisPushConfigStore(redis, prefix=prefix, cipher=lost).set(config("t4"))
    assert await rotating.rotate_secrets() == 2  # t1 and t2; t4 is left as it is
    assert await rotating.rotate_secrets() == 0  # nothing left under the old key
    after = RedisPushConfigStore(redis, prefix=prefix, cipher=PushSecretCipher([KEY_NEW]))
    for task_id in ("t1", "t2", "t3"):
        assert await after.get(task_id, "cfg") == config(task_id)
        assert not holds_secrets(await raw_values(redis, after.keys.push(task_id)))
    assert await after.targets("t2") == [PushTarget(config("t2"), legacy_v0_3=True)]


async def test_rotation_encrypts_configs_stored_in_clear(redis: Redis, prefix: str) -> None:
    await RedisPushConfigStore(redis, prefix=prefix).set(config())
    store = RedisPushConfigStore(redis, prefix=prefix, cipher=PushSecretCipher([KEY_NEW]))
    assert await store.get("t", "cfg") == config()  # stored before encryption: still read
    assert await store.rotate_secrets() == 1
    assert not holds_secrets(await raw_values(redis, store.keys.push("t")))
    assert await store.get("t", "cfg") == config()


@contextlib.asynccontextmanager
async def worker(
    redis: Redis, prefix: str, cipher: PushSecretCipher | None
) -> AsyncIterator[PushWorker]:
    async with WebhookPushSender(policy=WebhookPolicy(("127.0.0.1/32",)), retries=0) as sender:
        one = PushWorker(redis, sender, prefix=prefix, consumer="one", cipher=cipher)
        async with anyio.create_task_group() as group:
            await group.start(one.run)
            yield one
            group.cancel_scope.cancel()


def event(task_id: str) -> tuple[StreamResponse, Task]:
    status = TaskStatus(state=TaskState.WORKING)
    update = TaskStatusUpdateEvent(task_id=task_id, context_id="c", status=status)
    return StreamResponse(status_update=update), Task(id=task_id, context_id="c", status=status)


async def test_queued_jobs_carry_the_secrets_encrypted(redis: Redis, prefix: str) -> None:
    cipher = PushSecretCipher([KEY_NEW, KEY_OLD])
    queue = RedisPushQueue(redis, prefix=prefix, cipher=PushSecretCipher([KEY_OLD]))
    async with Receiver().running() as receiver:
        receiver.expect = 1
        await queue.deliver([PushTarget(config("t", receiver.url))], *event("t"))
        jobs = await redis.xrange(queue.keys.push_queue)
        assert len(jobs) == 1
        blobs = [value for _, fields in jobs for value in fields.values()]
        assert not holds_secrets(blobs)
        # A worker whose keys were rotated meanwhile still opens a job of the old key.
        async with worker(redis, prefix, cipher):
            with anyio.fail_after(10):
                await receiver.arrived.wait()
    assert receiver.tokens == [TOKEN]
    assert receiver.authorizations == [f"Bearer {SECRET}"]


async def test_a_worker_without_the_keys_delivers_nothing(
    redis: Redis, prefix: str, caplog: pytest.LogCaptureFixture
) -> None:
    queue = RedisPushQueue(redis, prefix=prefix, cipher=PushSecretCipher([KEY_NEW]))
    async with Receiver().running() as receiver:
        await queue.deliver([PushTarget(config("t", receiver.url))], *event("t"))
        async with worker(redis, prefix, None):
            with anyio.fail_after(10):
                while await redis.xlen(queue.keys.push_queue):  # taken and acknowledged
                    await anyio.sleep(0.02)
    assert receiver.bodies == []
    assert "has encrypted secrets and this worker has no push secret keys" in caplog.text


def asking(ctx: Any) -> InputRequired:
    return InputRequired("more?")


async def test_a_server_on_redis_redacts_encrypts_delivers_and_rotates(
    redis: Redis, redis_url: str, prefix: str
) -> None:
    card = make_card()
    async with Receiver().running() as receiver:
        receiver.expect = 1
        first = RedisBackend(redis_url, prefix=prefix, push_secret_keys=[KEY_OLD])
        async with A2AServer(
            asking, card=card, backend=first, push=PushOptions(allow_hosts=["127.0.0.1"])
        ) as server:
            client = Client(server)
            task = (await client.result("SendMessage", {"message": user_message("hi")}))["task"]
            params = {
                "taskId": task["id"],
                "id": "cfg",
                "url": receiver.url,
                "token": TOKEN,
                "authentication": {"scheme": "Bearer", "credentials": SECRET},
            }
            created = await client.result("CreateTaskPushNotificationConfig", params)
            got = await client.result(
                "GetTaskPushNotificationConfig", {"taskId": task["id"], "id": "cfg"}
            )
            stored = await raw_values(redis, first.keys.push(task["id"]))
            follow_up = user_message("again", task_id=task["id"], mid="m2")
            await client.result("SendMessage", {"message": follow_up})
            with anyio.fail_after(10):
                await receiver.arrived.wait()
        # The same deployment, its key rotated: the new key first, the old one after it.
        receiver.arrived, receiver.expect = anyio.Event(), 2
        second = RedisBackend(redis_url, prefix=prefix, push_secret_keys=[KEY_NEW, KEY_OLD])
        async with A2AServer(
            asking,
            card=card,
            backend=second,
            push=PushOptions(allow_hosts=["127.0.0.1"], reveal_secrets=True),
        ) as server:
            client = Client(server)
            revealed = await client.result(
                "GetTaskPushNotificationConfig", {"taskId": task["id"], "id": "cfg"}
            )
            follow_up = user_message("and again", task_id=task["id"], mid="m3")
            await client.result("SendMessage", {"message": follow_up})
            with anyio.fail_after(10):
                await receiver.arrived.wait()
            rotated = await second.push_config_store.rotate_secrets()
    after = RedisPushConfigStore(redis, prefix=prefix, cipher=PushSecretCipher([KEY_NEW]))
    for shown in (created, got):
        assert SECRET not in json.dumps(shown) and TOKEN not in json.dumps(shown)
        assert shown["url"] == receiver.url
    assert not holds_secrets(stored)
    assert set(receiver.tokens) == {TOKEN}
    assert set(receiver.authorizations) == {f"Bearer {SECRET}"}
    assert len(receiver.tokens) >= 2  # delivered before and after the rotation
    assert revealed["token"] == TOKEN
    assert revealed["authentication"] == {"scheme": "Bearer", "credentials": SECRET}
    assert rotated == 1
    assert await after.get(task["id"], "cfg") == config(task["id"], receiver.url)
