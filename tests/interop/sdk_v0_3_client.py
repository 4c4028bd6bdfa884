"""Drive a server with the official a2a-sdk 0.3.x client; print what it parsed, as JSON.

Run by ``test_sdk_v0_3.py`` with the python of a separate virtual environment that holds
``a2a-sdk<0.4`` (this file is never imported by the test process, whose ``a2a`` is 1.x):

    python sdk_v0_3_client.py BASE_URL {jsonrpc,rest} WEBHOOK_URL TOKEN

It resolves the card, creates clients for the chosen transport with ``ClientFactory`` and
runs each scenario against the agent of ``interop/servers.py``. Every value printed is what
the SDK parsed (pydantic models dumped in their v0.3 JSON shape), or the error it raised.
The SDK's ``Client`` has no push-config list/delete, so those two go through the SDK's
request/response models (JSON-RPC) or its v0.3 proto and converters (REST) over ``httpx``.
"""

from __future__ import annotations

import asyncio
import importlib.metadata
import json
import sys
import uuid
from collections.abc import AsyncIterator
from typing import Any

import httpx
from a2a.client import A2ACardResolver, Client, ClientConfig, ClientFactory
from a2a.client.errors import A2AClientHTTPError, A2AClientJSONRPCError
from a2a.types import (
    DeleteTaskPushNotificationConfigParams,
    DeleteTaskPushNotificationConfigRequest,
    DeleteTaskPushNotificationConfigResponse,
    GetTaskPushNotificationConfigParams,
    ListTaskPushNotificationConfigParams,
    ListTaskPushNotificationConfigRequest,
    ListTaskPushNotificationConfigResponse,
    Message,
    MessageSendConfiguration,
    Part,
    PushNotificationAuthenticationInfo,
    PushNotificationConfig,
    Role,
    TaskIdParams,
    TaskPushNotificationConfig,
    TaskQueryParams,
    TextPart,
    TransportProtocol,
)
from pydantic import BaseModel


def dump(value: Any) -> Any:
    """A parsed SDK value as JSON (v0.3 shape)."""
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", by_alias=True, exclude_none=True)
    if isinstance(value, tuple | list):
        return [dump(item) for item in value]
    return value


def error(exc: Exception) -> dict[str, Any]:
    """What the SDK raised."""
    out: dict[str, Any] = {"error": type(exc).__name__}
    if isinstance(exc, A2AClientJSONRPCError):
        out["code"] = exc.error.code
    if isinstance(exc, A2AClientHTTPError):
        out["status"] = exc.status_code
    return out


def message(text: str, *, task_id: str | None = None, context_id: str | None = None) -> Message:
    return Message(
        message_id=str(uuid.uuid4()),
        role=Role.user,
        parts=[Part(root=TextPart(text=text))],
        task_id=task_id,
        context_id=context_id,
    )


async def events(stream: AsyncIterator[Any]) -> list[Any]:
    """Every event: a Message, or (task so far, update or None)."""
    return [dump(event) async for event in stream]


async def single(client: Client, msg: Message, **kwargs: Any) -> Any:
    """The one reply of a non-streaming send: a Task or a Message."""
    replies = await events(client.send_message(msg, **kwargs))
    assert len(replies) == 1, replies
    reply = replies[0]
    return reply[0] if isinstance(reply, list) else reply


async def hold(client: Client) -> dict[str, Any]:
    """A task that stays working until released (non-blocking send)."""
    task = await single(
        client, message("hold"), configuration=MessageSendConfiguration(blocking=False)
    )
    assert task["kind"] == "task", task
    return task


async def release(client: Client, task_id: str) -> Any:
    return await single(client, message(f"release {task_id}"))


async def wait_for(client: Client, task_id: str, state: str) -> dict[str, Any]:
    for _ in range(500):
        task = dump(await client.get_task(TaskQueryParams(id=task_id)))
        if task["status"]["state"] == state:
            return task
        await asyncio.sleep(0.02)
    raise AssertionError(f"task {task_id} never reached {state}")


async def attempt(coro: Any) -> Any:
    try:
        return dump(await coro)
    except Exception as exc:
        return error(exc)


def interface_url(card: Any, binding: str) -> str:
    """The URL the card lists for ``binding`` (where the SDK's ``ClientFactory`` goes too)."""
    if card.preferred_transport == binding:
        return str(card.url)
    for interface in card.additional_interfaces or ():
        if interface.transport == binding:
            return str(interface.url)
    raise AssertionError(f"the card lists no {binding} interface")


class PushConfigs:
    """List and delete push configs with the SDK's models (its Client lacks both)."""

    def __init__(self, http: httpx.AsyncClient, url: str, transport: str) -> None:
        # ``url`` is the card's URL of the transport: JSON-RPC is POSTed to exactly that URL,
        # REST paths are appended to it (without a trailing slash, as the SDK does).
        self.http, self.transport = http, transport
        self.url = url.rstrip("/") if transport == "rest" else url

    async def list(self, task_id: str) -> Any:
        if self.transport == "rest":
            from a2a.grpc import a2a_pb2
            from a2a.utils.proto_utils import FromProto
            from google.protobuf.json_format import ParseDict

            response = await self.http.get(f"{self.url}/v1/tasks/{task_id}/pushNotificationConfigs")
            if response.status_code != 200:
                return {"error": "HTTP", "status": response.status_code}
            parsed = ParseDict(
                response.json(),
                a2a_pb2.ListTaskPushNotificationConfigResponse(),
                ignore_unknown_fields=True,
            )
            return [dump(FromProto.task_push_notification_config(c)) for c in parsed.configs]
        request = ListTaskPushNotificationConfigRequest(
            id=str(uuid.uuid4()), params=ListTaskPushNotificationConfigParams(id=task_id)
        )
        response = await self.http.post(self.url, json=dump(request))
        parsed = ListTaskPushNotificationConfigResponse.model_validate(response.json()).root
        if hasattr(parsed, "error"):
            return {"error": "JSONRPC", "code": parsed.error.code}
        return dump(parsed.result)

    async def delete(self, task_id: str, config_id: str) -> Any:
        if self.transport == "rest":
            response = await self.http.delete(
                f"{self.url}/v1/tasks/{task_id}/pushNotificationConfigs/{config_id}"
            )
            return {"status": response.status_code}
        request = DeleteTaskPushNotificationConfigRequest(
            id=str(uuid.uuid4()),
            params=DeleteTaskPushNotificationConfigParams(
                id=task_id, push_notification_config_id=config_id
            ),
        )
        response = await self.http.post(self.url, json=dump(request))
        parsed = DeleteTaskPushNotificationConfigResponse.model_validate(response.json()).root
        if hasattr(parsed, "error"):
            return {"error": "JSONRPC", "code": parsed.error.code}
        return {"result": parsed.result}


async def main(url: str, transport: str, hook_url: str, token: str) -> dict[str, Any]:
    out: dict[str, Any] = {"sdk_version": importlib.metadata.version("a2a-sdk")}
    binding = TransportProtocol.jsonrpc if transport == "jsonrpc" else TransportProtocol.http_json
    async with httpx.AsyncClient(timeout=10) as http:
        card = await A2ACardResolver(http, url).get_agent_card()
        out["card"] = dump(card)

        def client(**options: Any) -> Client:
            config = ClientConfig(httpx_client=http, supported_transports=[binding], **options)
            return ClientFactory(config).create(card)

        blocking = client(streaming=False)
        streaming = client(streaming=True)
        out["transport_class"] = type(blocking._transport).__name__  # type: ignore[attr-defined]

        # send: blocking, message-only reply, non-blocking
        out["send_blocking"] = await single(blocking, message("echo hello"))
        out["send_message_reply"] = await single(blocking, message("release nothing"))
        polled = client(streaming=False, polling=True)
        held = await single(polled, message("hold"))
        out["send_non_blocking"] = held
        out["non_blocking_working"] = await wait_for(blocking, held["id"], "working")
        await release(blocking, held["id"])
        out["non_blocking_completed"] = await wait_for(blocking, held["id"], "completed")

        # stream
        out["stream"] = await events(streaming.send_message(message("stream 3")))
        streamed_id = out["stream"][0][0]["id"]

        # get
        out["get"] = dump(
            await blocking.get_task(TaskQueryParams(id=streamed_id, history_length=1))
        )
        out["get_missing"] = await attempt(blocking.get_task(TaskQueryParams(id="no-such-task")))

        # cancel
        held = await hold(blocking)
        out["cancel"] = dump(await blocking.cancel_task(TaskIdParams(id=held["id"])))
        out["cancel_again"] = await attempt(blocking.cancel_task(TaskIdParams(id=held["id"])))

        # resubscribe
        held = await hold(blocking)
        resubscribed: list[Any] = []
        async for event in streaming.resubscribe(TaskIdParams(id=held["id"])):
            resubscribed.append(dump(event))
            if len(resubscribed) == 1:
                out["resubscribe_release"] = await release(blocking, held["id"])
        out["resubscribe_task_id"] = held["id"]
        out["resubscribe"] = resubscribed

        # push config set/get/list/delete (the webhook hears the rest of the task)
        held = await hold(blocking)
        configs = PushConfigs(http, interface_url(card, binding), transport)
        out["push_task_id"] = held["id"]
        out["push_set"] = dump(
            await blocking.set_task_callback(
                TaskPushNotificationConfig(
                    task_id=held["id"],
                    push_notification_config=PushNotificationConfig(
                        id="cfg-1",
                        url=hook_url,
                        token="tok-1",
                        authentication=PushNotificationAuthenticationInfo(
                            schemes=["Bearer"], credentials="s3cret"
                        ),
                    ),
                )
            )
        )
        out["push_set_other"] = dump(
            await blocking.set_task_callback(
                TaskPushNotificationConfig(
                    task_id=held["id"],
                    push_notification_config=PushNotificationConfig(
                        id="cfg-2", url=hook_url + "?other"
                    ),
                )
            )
        )
        out["push_get"] = dump(
            await blocking.get_task_callback(
                GetTaskPushNotificationConfigParams(
                    id=held["id"], push_notification_config_id="cfg-1"
                )
            )
        )
        out["push_list"] = await configs.list(held["id"])
        out["push_delete"] = await configs.delete(held["id"], "cfg-2")
        out["push_list_after_delete"] = await configs.list(held["id"])
        out["push_get_deleted"] = await attempt(
            blocking.get_task_callback(
                GetTaskPushNotificationConfigParams(
                    id=held["id"], push_notification_config_id="cfg-2"
                )
            )
        )
        await release(blocking, held["id"])
        out["push_completed"] = await wait_for(blocking, held["id"], "completed")

        # multi-turn, blocking then streaming
        asked = await single(blocking, message("ask"))
        out["ask"] = asked
        out["answer"] = await single(
            blocking, message("Ada", task_id=asked["id"], context_id=asked["contextId"])
        )
        asked = await events(streaming.send_message(message("ask")))
        out["ask_streaming"] = asked
        task_id = asked[0][0]["id"]
        out["answer_streaming"] = await events(
            streaming.send_message(
                message("Grace", task_id=task_id, context_id=asked[0][0]["contextId"])
            )
        )

        # the authenticated extended card
        http.headers["Authorization"] = f"Bearer {token}"
        out["extended_card"] = dump(await blocking.get_card())
    return out


if __name__ == "__main__":
    result = asyncio.run(main(*sys.argv[1:5]))
    print(json.dumps(result))
