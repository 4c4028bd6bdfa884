"""Smoke tests of the peer servers, with httpx and raw JSON only (no client library).

For each peer: its card lists the expected interfaces; a blocking send of ``hello`` over
JSON-RPC and over HTTP+JSON returns a completed task holding ``echo: hello``; ``ask`` then a
follow-up completes with ``got: A``; ``stream`` streams five chunks over SSE; ``wait`` is
canceled. The wire shapes are the peer's own version's: v1.0 (``SendMessage``, ``ROLE_USER``,
``TASK_STATE_*``) or v0.3 (``message/send``, ``kind``, lower-case states; REST: the v0.3
ProtoJSON with ``content`` and ``TASK_STATE_*``).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from interop.peers.peers import Peer

pytestmark = pytest.mark.interop

BINDINGS = ("jsonrpc", "rest")
METHODS = {
    "1.0": {"send": "SendMessage", "stream": "SendStreamingMessage", "cancel": "CancelTask"},
    "0.3": {"send": "message/send", "stream": "message/stream", "cancel": "tasks/cancel"},
}


@pytest.fixture
def http() -> Iterator[httpx.Client]:
    with httpx.Client(timeout=30) as client:
        yield client


# --- the wire, per version and binding ---------------------------------------------------


def message(peer: Peer, binding: str, text: str, **ids: str) -> dict[str, Any]:
    """A user message with ``text`` (and ``taskId``/``contextId``), in the peer's dialect."""
    message_id = str(uuid.uuid4())
    if peer.protocol_version == "1.0":
        return {"messageId": message_id, "role": "ROLE_USER", "parts": [{"text": text}], **ids}
    if binding == "jsonrpc":
        parts = [{"kind": "text", "text": text}]
        return {"kind": "message", "messageId": message_id, "role": "user", "parts": parts, **ids}
    return {"messageId": message_id, "role": "ROLE_USER", "content": [{"text": text}], **ids}


def send(http: httpx.Client, peer: Peer, binding: str, text: str, **ids: str) -> dict[str, Any]:
    """A blocking send; the task it returns."""
    params: dict[str, Any] = {"message": message(peer, binding, text, **ids)}
    if binding == "jsonrpc":
        method = METHODS[peer.protocol_version]["send"]
        envelope = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
        response = http.post(peer.jsonrpc_url, json=envelope, headers=peer.headers)
        assert response.status_code == 200, response.text
        body = response.json()
        assert body["jsonrpc"] == "2.0" and body["id"] == 1, body
        assert "result" in body, body
        result = body["result"]
    else:
        if peer.protocol_version == "0.3":
            # The v0.3 REST binding defaults to non-blocking (proto3 bool ``blocking``).
            params["configuration"] = {"blocking": True}
        path = "/v1/message:send" if peer.protocol_version == "0.3" else "/message:send"
        response = http.post(peer.rest_url + path, json=params, headers=peer.headers)
        assert response.status_code == 200, response.text
        result = response.json()
    if peer.protocol_version == "0.3" and binding == "jsonrpc":
        assert result["kind"] == "task", result
        return dict(result)
    assert set(result) == {"task"}, result
    return dict(result["task"])


def state(task_or_status: dict[str, Any]) -> str:
    """The state, as in v0.3 JSON-RPC: ``completed``, ``input-required`` ..."""
    status = task_or_status.get("status", task_or_status)
    return str(status["state"]).removeprefix("TASK_STATE_").lower().replace("_", "-")


def texts(parts: list[dict[str, Any]]) -> list[str]:
    return [part["text"] for part in parts if "text" in part]


def message_texts(message: dict[str, Any]) -> list[str]:
    """The texts of a message: ``parts``, or ``content`` (v0.3 REST)."""
    return texts(message.get("parts", message.get("content", [])))


def sse_data(response: httpx.Response) -> Iterator[dict[str, Any]]:
    """The JSON of each SSE event (its ``data:`` lines joined, as the SSE spec says)."""
    data: list[str] = []
    for line in response.iter_lines():
        if line.startswith("data:"):
            data.append(line.removeprefix("data:").removeprefix(" "))
        elif not line and data:
            yield json.loads("\n".join(data))
            data = []
    if data:
        yield json.loads("\n".join(data))


# --- the tests ---------------------------------------------------------------------------


def test_card_lists_the_interfaces(peer: Peer) -> None:
    card = peer.card
    assert card["capabilities"]["streaming"] is True
    jsonrpc, rest = peer.base_url + "/jsonrpc", peer.base_url + "/rest"
    if peer.protocol_version == "1.0":
        interfaces = [
            (i["protocolBinding"], i["protocolVersion"], i["url"])
            for i in card["supportedInterfaces"]
        ]
        assert interfaces == [("JSONRPC", "1.0", jsonrpc), ("HTTP+JSON", "1.0", rest)]
        assert "url" not in card and "protocolVersion" not in card
    else:
        assert "supportedInterfaces" not in card
        assert card["protocolVersion"] == "0.3.0"
        assert card["url"] == jsonrpc
        assert card["preferredTransport"] == "JSONRPC"
        assert [(i["transport"], i["url"]) for i in card["additionalInterfaces"]] == [
            ("JSONRPC", jsonrpc),
            ("HTTP+JSON", rest),
        ]
    assert (peer.jsonrpc_url, peer.rest_url) == (jsonrpc, rest)


def test_card_is_json(peer: Peer, http: httpx.Client) -> None:
    response = http.get(peer.card_url)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("application/json")
    assert response.json() == peer.card


@pytest.mark.parametrize("binding", BINDINGS)
def test_send_hello(peer: Peer, http: httpx.Client, binding: str) -> None:
    task = send(http, peer, binding, "hello")
    assert state(task) == "completed"
    assert message_texts(task["status"]["message"]) == ["echo: hello"]
    assert [texts(a["parts"]) for a in task["artifacts"]] == [["echo: hello"]]
    assert message_texts(task["history"][0]) == ["hello"]


@pytest.mark.parametrize("binding", BINDINGS)
def test_ask_then_answer(peer: Peer, http: httpx.Client, binding: str) -> None:
    asked = send(http, peer, binding, "ask")
    assert state(asked) == "input-required"
    assert message_texts(asked["status"]["message"]) == ["what next?"]
    ids = {"taskId": asked["id"], "contextId": asked["contextId"]}
    answered = send(http, peer, binding, "A", **ids)
    assert (answered["id"], answered["contextId"]) == (asked["id"], asked["contextId"])
    assert state(answered) == "completed"
    assert message_texts(answered["status"]["message"]) == ["got: A"]


def test_stream_over_jsonrpc(peer: Peer, http: httpx.Client) -> None:
    method = METHODS[peer.protocol_version]["stream"]
    params = {"message": message(peer, "jsonrpc", "stream")}
    envelope = {"jsonrpc": "2.0", "id": 7, "method": method, "params": params}
    headers = {**peer.headers, "Accept": "text/event-stream"}
    with http.stream("POST", peer.jsonrpc_url, json=envelope, headers=headers) as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        events = [event["result"] for event in sse_data(response)]
    if peer.protocol_version == "1.0":
        chunks = [e["artifactUpdate"] for e in events if "artifactUpdate" in e]
        assert "task" in events[0]
        last = events[-1]["statusUpdate"]
    else:
        chunks = [e for e in events if e["kind"] == "artifact-update"]
        assert events[0]["kind"] == "task"
        last = events[-1]
        assert last["final"] is True
    assert [texts(c["artifact"]["parts"]) for c in chunks] == [[f"chunk {i}"] for i in range(5)]
    assert len({c["artifact"]["artifactId"] for c in chunks}) == 1
    assert [c.get("append", False) for c in chunks] == [False] + [True] * 4
    assert state(last) == "completed"


def test_wait_is_canceled(peer: Peer, http: httpx.Client) -> None:
    send_method, cancel = (METHODS[peer.protocol_version][m] for m in ("send", "cancel"))
    params: dict[str, Any] = {"message": message(peer, "jsonrpc", "wait")}
    params["configuration"] = (
        {"returnImmediately": True} if peer.protocol_version == "1.0" else {"blocking": False}
    )
    envelope = {"jsonrpc": "2.0", "id": 1, "method": send_method, "params": params}
    result = http.post(peer.jsonrpc_url, json=envelope, headers=peer.headers).json()["result"]
    task = result.get("task", result)
    assert state(task) in ("submitted", "working")
    envelope = {"jsonrpc": "2.0", "id": 2, "method": cancel, "params": {"id": task["id"]}}
    canceled = http.post(peer.jsonrpc_url, json=envelope, headers=peer.headers).json()
    assert state(canceled["result"]) == "canceled", canceled
