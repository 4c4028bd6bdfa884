"""Drive an A2AServer through ``handle`` with bytes, as an adapter would (no framework)."""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping
from typing import Any

from a2a_core.http import Headers, HttpRequest, HttpResponse, SseResponse
from a2a_core.server import A2AServer
from a2a_core.sse import parse_frames
from a2a_core.types import AgentCapabilities, AgentCard, AgentSkill

BASE_URL = "http://127.0.0.1:9999/a2a"


def make_card(*, streaming: bool = True, push: bool = True, extended: bool = False) -> AgentCard:
    """A small card with the given capabilities."""
    return AgentCard(
        name="Test agent",
        description="An agent for tests",
        supported_interfaces=[],
        version="1.0.0",
        capabilities=AgentCapabilities(
            streaming=streaming, push_notifications=push, extended_agent_card=extended or None
        ),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[AgentSkill(id="s", name="S", description="skill", tags=["t"])],
    )


def rpc_body(method: str, params: Mapping[str, Any] | None = None, id: Any = 1) -> bytes:
    """A JSON-RPC request body."""
    doc: dict[str, Any] = {"jsonrpc": "2.0", "id": id, "method": method}
    if params is not None:
        doc["params"] = params
    return json.dumps(doc).encode()


def user_message(
    text: str, *, task_id: str = "", context_id: str = "", mid: str = ""
) -> dict[str, Any]:
    """A v1.0 user message as JSON; a messageId of its own unless ``mid`` is given (the same
    message sent again is answered with what it started: idempotent sends)."""
    msg: dict[str, Any] = {
        "messageId": mid or uuid.uuid4().hex,
        "role": "ROLE_USER",
        "parts": [{"text": text}],
    }
    if task_id:
        msg["taskId"] = task_id
    if context_id:
        msg["contextId"] = context_id
    return msg


class Client:
    """Minimal JSON-RPC/REST client over ``server.handle``."""

    def __init__(
        self,
        server: A2AServer,
        *,
        version: str = "1.0",
        identity: Any = None,
        peer: str | None = None,
    ) -> None:
        self.server = server
        self.version = version
        self.identity = identity
        self.peer = peer

    def request(
        self,
        method: str,
        path: str,
        body: bytes = b"",
        headers: Mapping[str, str] | None = None,
        query: str = "",
    ) -> HttpRequest:
        pairs = [("a2a-version", self.version), ("content-type", "application/json")]
        pairs += list((headers or {}).items())
        return HttpRequest(
            method,
            path,
            query=query,
            headers=Headers(pairs),
            body=body,
            identity=self.identity,
            base_url=BASE_URL,
            peer=self.peer,
        )

    async def rpc(
        self, method: str, params: Mapping[str, Any] | None = None, **kw: Any
    ) -> dict[str, Any]:
        """Call a non-streaming method; return the parsed JSON-RPC response."""
        response = await self.server.handle(
            self.request("POST", "/", rpc_body(method, params), **kw)
        )
        assert isinstance(response, HttpResponse), response
        assert response.status == 200
        doc: dict[str, Any] = json.loads(response.body)
        return doc

    async def result(self, method: str, params: Mapping[str, Any] | None = None, **kw: Any) -> Any:
        """Call a method and return its result (failing the test on an error)."""
        doc = await self.rpc(method, params, **kw)
        assert "error" not in doc, doc
        return doc["result"]

    async def error(
        self, method: str, params: Mapping[str, Any] | None = None, **kw: Any
    ) -> dict[str, Any]:
        """Call a method that must fail; return the error object."""
        doc = await self.rpc(method, params, **kw)
        assert "error" in doc, doc
        error: dict[str, Any] = doc["error"]
        return error

    async def stream(
        self, method: str, params: Mapping[str, Any] | None = None, *, limit: int = 1000, **kw: Any
    ) -> list[tuple[str | None, Any]]:
        """Call a streaming method; return ``(id, parsed data)`` for every frame (to the end)."""
        response = await self.server.handle(
            self.request("POST", "/", rpc_body(method, params), **kw)
        )
        return await collect(response, limit=limit)


async def collect(
    response: HttpResponse | SseResponse, *, limit: int = 1000
) -> list[tuple[str | None, Any]]:
    """Read a whole SSE response into ``(id, data)`` pairs (keep-alives skipped)."""
    assert isinstance(response, SseResponse), response
    assert response.header("content-type") == "text/event-stream"
    out: list[tuple[str | None, Any]] = []
    chunks = []
    async for chunk in response.frames:
        chunks.append(chunk)
        if len(chunks) >= limit:
            break
    await response.frames.aclose()  # type: ignore[attr-defined]
    for frame in parse_frames(b"".join(chunks)):
        if frame.data is not None:
            out.append((frame.id, json.loads(frame.data)))
    return out
