"""Push secrets stay secret: replies omit them, webhooks still get them, stores can encrypt them.

Everything goes through ``A2AServer.handle`` with bytes (both bindings, both dialects); the
webhook is the real receiver of ``test_push`` on 127.0.0.1; encryption is checked on what
the backend holds, walked value by value.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator
from typing import Any

import anyio
import msgspec
import pytest

from a2a_core.http import HttpResponse
from a2a_core.server import (
    A2AServer,
    InMemoryBackend,
    InMemoryPushConfigStore,
    InputRequired,
    PushOptions,
    PushSecretCipher,
    PushSecretError,
    redact_push_config,
)
from a2a_core.types import AuthenticationInfo, TaskPushNotificationConfig
from helpers.a2a_client import Client, make_card, user_message
from runtime.test_push import Receiver, receiving

pytestmark = pytest.mark.anyio

SECRET = "s3cret-credentials"
TOKEN = "t0ken-for-the-hook"
KEY_OLD = PushSecretCipher.generate_key()
KEY_NEW = PushSecretCipher.generate_key()


def asking(ctx: Any) -> InputRequired:
    """Every message leaves the task waiting for input: it stays open for more events."""
    return InputRequired("more?")


def v1_config(task_id: str, url: str = "https://example.com/hook") -> dict[str, Any]:
    return {
        "taskId": task_id,
        "id": "cfg",
        "url": url,
        "token": TOKEN,
        "authentication": {"scheme": "Bearer", "credentials": SECRET},
    }


def v03_config(url: str = "https://example.com/hook") -> dict[str, Any]:
    return {
        "id": "cfg",
        "url": url,
        "token": TOKEN,
        "authentication": {"schemes": ["Bearer"], "credentials": SECRET},
    }


async def new_task(server: A2AServer) -> str:
    task = (await Client(server).result("SendMessage", {"message": user_message("hi")}))["task"]
    return str(task["id"])


async def rest(client: Client, method: str, path: str, body: Any = None) -> bytes:
    raw = b"" if body is None else json.dumps(body).encode()
    response = await client.server.handle(client.request(method, path, raw))
    assert isinstance(response, HttpResponse)
    assert response.status == 200, response.body
    return response.body


async def replies_of_each_binding(server: A2AServer, task_id: str) -> dict[str, bytes]:
    """Create, Get and List of one config, in each binding and dialect: the reply bodies."""
    v1, v03 = Client(server), Client(server, version="0.3")
    out: dict[str, bytes] = {}

    async def rpc(client: Client, name: str, method: str, params: Any) -> None:
        doc = await client.rpc(method, params)
        assert "error" not in doc, doc
        out[name] = json.dumps(doc).encode()

    await rpc(v1, "v1 rpc create", "CreateTaskPushNotificationConfig", v1_config(task_id))
    await rpc(v1, "v1 rpc get", "GetTaskPushNotificationConfig", {"taskId": task_id, "id": "cfg"})
    await rpc(v1, "v1 rpc list", "ListTaskPushNotificationConfigs", {"taskId": task_id})
    configs = f"/tasks/{task_id}/pushNotificationConfigs"
    out["v1 rest create"] = await rest(v1, "POST", configs, v1_config(task_id))
    out["v1 rest get"] = await rest(v1, "GET", configs + "/cfg")
    out["v1 rest list"] = await rest(v1, "GET", configs)
    set_params = {"taskId": task_id, "pushNotificationConfig": v03_config()}
    await rpc(v03, "v0.3 rpc set", "tasks/pushNotificationConfig/set", set_params)
    get_params = {"id": task_id, "pushNotificationConfigId": "cfg"}
    await rpc(v03, "v0.3 rpc get", "tasks/pushNotificationConfig/get", get_params)
    await rpc(v03, "v0.3 rpc list", "tasks/pushNotificationConfig/list", {"id": task_id})
    v03_body = {
        "parent": f"tasks/{task_id}",
        "configId": "cfg",
        "config": {
            "name": f"tasks/{task_id}/pushNotificationConfigs/cfg",
            "pushNotificationConfig": v03_config(),
        },
    }
    out["v0.3 rest create"] = await rest(v03, "POST", "/v1" + configs, v03_body)
    out["v0.3 rest get"] = await rest(v03, "GET", "/v1" + configs + "/cfg")
    out["v0.3 rest list"] = await rest(v03, "GET", "/v1" + configs)
    return out


async def test_replies_omit_the_secrets_in_every_binding_and_dialect() -> None:
    async with A2AServer(asking, card=make_card()) as server:
        task_id = await new_task(server)
        replies = await replies_of_each_binding(server, task_id)
        stored = await server.backend.push_config_store.get(task_id, "cfg")
    assert len(replies) == 12
    for name, body in replies.items():
        assert b"https://example.com/hook" in body, name  # the config itself is there
        assert b"Bearer" in body, name  # and its scheme, which is no secret
        assert SECRET.encode() not in body, name
        assert TOKEN.encode() not in body, name
        assert b'"credentials"' not in body and b'"token"' not in body, name  # omitted
    # Redacting the replies left the stored config whole.
    assert stored is not None
    assert stored.token == TOKEN
    assert stored.authentication == AuthenticationInfo(scheme="Bearer", credentials=SECRET)


async def test_the_option_reveals_them() -> None:
    async with A2AServer(asking, card=make_card(), push=PushOptions(reveal_secrets=True)) as server:
        replies = await replies_of_each_binding(server, await new_task(server))
    for name, body in replies.items():
        assert SECRET.encode() in body, name
        assert TOKEN.encode() in body, name


async def test_the_v1_reply_shapes() -> None:
    async with A2AServer(asking, card=make_card()) as server:
        client = Client(server)
        task_id = await new_task(server)
        created = await client.result("CreateTaskPushNotificationConfig", v1_config(task_id))
        got = await client.result("GetTaskPushNotificationConfig", {"taskId": task_id, "id": "cfg"})
        v03 = Client(server, version="0.3")
        legacy = await v03.result(
            "tasks/pushNotificationConfig/get", {"id": task_id, "pushNotificationConfigId": "cfg"}
        )
    expected = {
        "taskId": task_id,
        "id": "cfg",
        "url": "https://example.com/hook",
        "authentication": {"scheme": "Bearer"},
    }
    assert created == got == expected
    assert legacy == {
        "taskId": task_id,
        "pushNotificationConfig": {
            "id": "cfg",
            "url": "https://example.com/hook",
            "authentication": {"schemes": ["Bearer"]},
        },
    }


# --- delivery -----------------------------------------------------------------------------


async def delivered_headers(rx: Receiver, count: int = 1) -> list[tuple[str | None, str | None]]:
    with anyio.fail_after(10):
        while len(rx.requests) < count:
            await anyio.sleep(0.01)
    return [(r.header("authorization"), r.header("x-a2a-notification-token")) for r in rx.requests]


@pytest.mark.parametrize("keys", [(), (KEY_NEW,)], ids=["clear", "encrypted"])
@pytest.mark.parametrize("dialect", ["1.0", "0.3"])
async def test_webhooks_still_get_the_real_secrets(keys: tuple[str, ...], dialect: str) -> None:
    async with receiving() as rx:
        backend = InMemoryBackend(push_secret_keys=keys)
        server = A2AServer(
            asking, card=make_card(), backend=backend, push=PushOptions(allow_hosts=["127.0.0.1"])
        )
        async with server:
            task_id = await new_task(server)
            if dialect == "1.0":
                await Client(server).result(
                    "CreateTaskPushNotificationConfig", v1_config(task_id, rx.url())
                )
            else:
                params = {"taskId": task_id, "pushNotificationConfig": v03_config(rx.url())}
                await Client(server, version="0.3").result(
                    "tasks/pushNotificationConfig/set", params
                )
            await Client(server).result(
                "SendMessage", {"message": user_message("again", task_id=task_id, mid="m2")}
            )
            headers = await delivered_headers(rx)
    assert headers[0] == (f"Bearer {SECRET}", TOKEN)
    assert set(headers) == {(f"Bearer {SECRET}", TOKEN)}


async def test_an_inline_webhook_is_delivered_and_its_secrets_not_held_in_clear() -> None:
    async with receiving() as rx:
        backend = InMemoryBackend(push_secret_keys=[KEY_NEW])
        server = A2AServer(
            asking, card=make_card(), backend=backend, push=PushOptions(allow_hosts=["127.0.0.1"])
        )
        async with server:
            webhook = v1_config("", rx.url())
            del webhook["taskId"], webhook["id"]
            await Client(server).result(
                "SendMessage",
                {
                    "message": user_message("hi"),
                    "configuration": {"taskPushNotificationConfig": webhook},
                },
            )
            headers = await delivered_headers(rx)
            held = list(strings_held(backend))
    assert headers[0] == (f"Bearer {SECRET}", TOKEN)
    assert held  # the walk saw the backend's values (the task's text among them)
    assert any("more?" in s for s in held)
    assert not [s for s in held if SECRET in s or TOKEN in s]


# --- encryption at rest -------------------------------------------------------------------


def strings_held(value: Any, seen: set[int] | None = None) -> Iterator[str]:
    """Every string (and bytes, as latin-1) reachable from ``value`` through containers,
    structs, dataclasses and the attributes of our own objects (not through types,
    functions or modules, which would reach this test's own constants)."""
    seen = set() if seen is None else seen
    if id(value) in seen:
        return
    seen.add(id(value))
    if isinstance(value, str):
        yield value
    elif isinstance(value, bytes | bytearray):
        yield bytes(value).decode("latin-1")
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from strings_held(key, seen)
            yield from strings_held(item, seen)
    elif isinstance(value, list | tuple | set | frozenset):
        for item in value:
            yield from strings_held(item, seen)
    elif isinstance(value, msgspec.Struct):
        for name in value.__struct_fields__:
            yield from strings_held(getattr(value, name), seen)
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        for f in dataclasses.fields(value):
            yield from strings_held(getattr(value, f.name), seen)
    elif type(value).__module__.startswith("a2a_core") and not isinstance(value, type):
        for name in getattr(type(value), "__slots__", ()):
            yield from strings_held(getattr(value, name, None), seen)
        for item in getattr(value, "__dict__", {}).values():
            yield from strings_held(item, seen)


def stored_config(token: str = TOKEN, credentials: str = SECRET) -> TaskPushNotificationConfig:
    return TaskPushNotificationConfig(
        task_id="t1",
        id="cfg",
        url="https://example.com/hook",
        token=token,
        authentication=AuthenticationInfo(scheme="Bearer", credentials=credentials),
    )


async def test_the_memory_store_holds_the_secrets_encrypted() -> None:
    plain = InMemoryPushConfigStore()
    sealed = InMemoryPushConfigStore(cipher=PushSecretCipher([KEY_NEW]))
    for store in (plain, sealed):
        await store.set(stored_config(), legacy_v0_3=True)
    # The walk finds the secrets where they are held in clear: it would find them here too.
    assert any(SECRET in s for s in strings_held(plain))
    assert not [s for s in strings_held(sealed) if SECRET in s or TOKEN in s]
    # Every read gives them back in clear.
    assert await sealed.get("t1", "cfg") == stored_config()
    assert await sealed.list_configs("t1") == [stored_config()]
    (target,) = await sealed.targets("t1")
    assert target.config == stored_config() and target.legacy_v0_3


async def test_the_cipher_encrypts_each_secret_and_leaves_the_rest() -> None:
    cipher = PushSecretCipher([KEY_NEW])
    sealed = cipher.encrypt(stored_config())
    assert sealed.url == "https://example.com/hook" and sealed.id == "cfg"
    assert sealed.authentication is not None and sealed.authentication.scheme == "Bearer"
    assert sealed.token not in ("", TOKEN) and sealed.authentication.credentials != SECRET
    assert cipher.encrypt(sealed) != sealed  # a fresh IV every time: no equality leak
    assert cipher.decrypt(sealed) == stored_config()
    # Nothing to hide: unchanged, and an empty secret stays empty.
    bare = TaskPushNotificationConfig(task_id="t1", url="https://example.com/hook")
    assert cipher.encrypt(bare) == bare
    only_token = cipher.encrypt(stored_config(credentials=""))
    assert only_token.authentication == AuthenticationInfo(scheme="Bearer")
    assert cipher.decrypt(only_token) == stored_config(credentials="")


async def test_rotation_reads_the_old_key_and_moves_to_the_new() -> None:
    old = PushSecretCipher([KEY_OLD])
    rotated = PushSecretCipher([KEY_NEW, KEY_OLD])
    new_only = PushSecretCipher([KEY_NEW])
    under_old = old.encrypt(stored_config())
    assert rotated.decrypt(under_old) == stored_config()
    with pytest.raises(PushSecretError) as info:
        new_only.decrypt(under_old)
    assert SECRET not in str(info.value) and TOKEN not in str(info.value)
    moved = rotated.rotate(under_old)
    assert moved is not None
    assert new_only.decrypt(moved) == stored_config()
    assert rotated.rotate(moved) is None  # already under the first key: nothing to write
    assert rotated.rotate(rotated.encrypt(stored_config())) is None


async def test_a_secret_no_key_opens_is_not_shown_nor_delivered(
    caplog: pytest.LogCaptureFixture,
) -> None:
    store = InMemoryPushConfigStore(cipher=PushSecretCipher([KEY_OLD]))
    await store.set(stored_config())
    # The deployment lost the key (a new cipher that cannot read what the old one wrote).
    store.cipher = PushSecretCipher([KEY_NEW])
    got = await store.get("t1", "cfg")
    assert got == redact_push_config(stored_config())  # still listed, to replace or delete
    assert await store.targets("t1") == []
    logged = caplog.text
    assert "not readable with any key" in logged and "not delivered" in logged
    assert SECRET not in logged and TOKEN not in logged


def test_keys_are_checked() -> None:
    with pytest.raises(TypeError):
        PushSecretCipher(KEY_NEW)
    with pytest.raises(ValueError, match="at least one key"):
        PushSecretCipher([])
    with pytest.raises(ValueError, match="Fernet keys"):
        PushSecretCipher(["not a key"])


def test_redaction_keeps_everything_but_the_secrets() -> None:
    redacted = redact_push_config(stored_config())
    assert redacted == TaskPushNotificationConfig(
        task_id="t1",
        id="cfg",
        url="https://example.com/hook",
        authentication=AuthenticationInfo(scheme="Bearer"),
    )
    assert redact_push_config(redacted) is redacted
