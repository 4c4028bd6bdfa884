"""The sans-IO core alone: requests/s through ``ServerProtocol`` (L1), bytes in, bytes out.

    uv run python bench/core.py [--seconds 1.0] [--no-pin]

For each request (SendMessage as JSON-RPC v1.0, JSON-RPC v0.3 and REST; GetTask as JSON-RPC
v1.0) one iteration is what an adapter asks of L1 for one HTTP request: build the
``HttpRequest`` from raw ASGI-style header pairs and the body bytes, ``receive_request`` it
into a ``Call``, and ``reply_result`` a ready result into the reply bytes. The result (the
echo's completed task, or the task GetTask returns) is built once: making it is the
runtime's work (L2), not the protocol's.

The cost split, each timed on its own:

- decode: the JSON-RPC envelope and the params into the v1.0 request struct (for v0.3, the
  v0.3 struct and its conversion; for REST, the REST body decoder);
- dispatch: the rest of ``receive_request``: the ``HttpRequest`` and its headers, routing,
  version and extension negotiation, body checks, method lookup, the ``Call`` and its
  merged metadata (measured as receive minus decode);
- encode: ``reply_result``, the result into the reply body in the caller's dialect.

Runs on one core (pinned to core 0 where possible); best of several rounds, timed in CPU
time of this process (``time.process_time``), so that other work on the machine does not
count against it.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import time
from collections.abc import Callable
from typing import Any

from a2a_core import codec, rest
from a2a_core.compat.v0_3 import convert as v03c
from a2a_core.compat.v0_3 import types as v03
from a2a_core.http import Headers, HttpRequest, HttpResponse
from a2a_core.jsonrpc import JsonRpcRequest, decode_request
from a2a_core.protocol import ServerProtocol
from a2a_core.types import (
    AgentCapabilities,
    AgentCard,
    AgentSkill,
    Artifact,
    GetTaskRequest,
    Message,
    Part,
    Role,
    SendMessageRequest,
    SendMessageResponse,
    Task,
    TaskState,
    TaskStatus,
)

BASE_URL = "http://127.0.0.1:8000"
TASK_ID = "0f8a6c52-2d7e-4f61-9a7c-5c1f4ad1e8b3"
CONTEXT_ID = "7d2b9e10-4c3a-4b8e-8f0d-2a6e1c9b5f47"


def protocol() -> ServerProtocol:
    card = AgentCard(
        name="Bench",
        description="Echoes the text it receives.",
        supported_interfaces=[],
        version="1.0.0",
        capabilities=AgentCapabilities(streaming=True),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[AgentSkill(id="echo", name="Echo", description="Echoes.", tags=["echo"])],
    )
    return ServerProtocol(
        card, base_url=BASE_URL, last_modified=dt.datetime(2025, 1, 1, tzinfo=dt.UTC)
    )


def echo_task() -> Task:
    """What the echo agent's blocking SendMessage returns: a completed task."""
    user = Message(
        message_id="m-1",
        context_id=CONTEXT_ID,
        task_id=TASK_ID,
        role=Role.USER,
        parts=[Part(text="hello")],
    )
    return Task(
        id=TASK_ID,
        context_id=CONTEXT_ID,
        status=TaskStatus(
            state=TaskState.COMPLETED, timestamp=dt.datetime(2025, 1, 1, 12, tzinfo=dt.UTC)
        ),
        artifacts=[Artifact(artifact_id="a-1", parts=[Part(text="hello")])],
        history=[user],
    )


def _raw_headers(extra: dict[str, str], body: bytes) -> list[tuple[bytes, bytes]]:
    headers = {
        "host": "127.0.0.1:8000",
        "user-agent": "bench",
        "accept": "*/*",
        "content-type": "application/json",
        "content-length": str(len(body)),
        **extra,
    }
    return [(k.encode(), v.encode()) for k, v in headers.items()]


def _rpc(method: str, params: dict[str, Any]) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).encode()


V1_MESSAGE = {"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": "hello"}]}
V03_MESSAGE = {
    "kind": "message",
    "messageId": "m-1",
    "role": "user",
    "parts": [{"kind": "text", "text": "hello"}],
}


class Case:
    """One request: its bytes, the result to reply with, and how to decode it alone."""

    def __init__(
        self,
        name: str,
        path: str,
        body: bytes,
        headers: dict[str, str],
        result: object,
        decode: Callable[[bytes], object],
        method: str = "POST",
    ) -> None:
        self.name = name
        self.method = method
        self.path = path
        self.body = body
        self.raw_headers = _raw_headers(headers, body)
        self.result = result
        self.decode = decode


def _decode_rpc(params_type: type[Any], convert: Callable[[Any], Any] | None = None) -> Any:
    def decode(body: bytes) -> object:
        envelope = decode_request(body)
        assert isinstance(envelope, JsonRpcRequest)
        value = codec.decode(envelope.params, params_type)
        return convert(value) if convert is not None else value

    return decode


def cases() -> list[Case]:
    task = echo_task()
    v1 = {"a2a-version": "1.0"}
    return [
        Case(
            "SendMessage, JSON-RPC v1.0",
            "/",
            _rpc("SendMessage", {"message": V1_MESSAGE}),
            v1,
            SendMessageResponse(task=task),
            _decode_rpc(SendMessageRequest),
        ),
        Case(
            "SendMessage, JSON-RPC v0.3",
            "/",
            _rpc("message/send", {"message": V03_MESSAGE}),
            {},
            SendMessageResponse(task=task),
            _decode_rpc(v03.MessageSendParams, v03c.send_params_to_v1),
        ),
        Case(
            "SendMessage, REST",
            "/message:send",
            json.dumps({"message": V1_MESSAGE}).encode(),
            v1,
            SendMessageResponse(task=task),
            lambda body: codec.decode(body, SendMessageRequest),
        ),
        Case(
            "GetTask, JSON-RPC v1.0",
            "/",
            _rpc("GetTask", {"id": TASK_ID}),
            v1,
            task,
            _decode_rpc(GetTaskRequest),
        ),
    ]


def best_rate(step: Callable[[], object], seconds: float, rounds: int = 5) -> float:
    """Iterations per second of ``step``, the best of ``rounds`` rounds of ``seconds``."""
    best = 0.0
    batch = 200
    for _ in range(rounds):
        count = 0
        start = time.process_time()
        end = start + seconds
        now = start
        while now < end:
            for _ in range(batch):
                step()
            count += batch
            now = time.process_time()
        best = max(best, count / (now - start))
    return best


def measure(case: Case, proto: ServerProtocol, seconds: float) -> dict[str, float]:
    def receive() -> Any:
        request = HttpRequest(
            case.method, case.path, "", Headers(case.raw_headers), case.body, base_url=None
        )
        return proto.receive_request(request)

    call = receive()
    assert not isinstance(call, HttpResponse), call
    reply = proto.reply_result(call, case.result)
    assert reply.status == 200, reply

    def full() -> object:
        return proto.reply_result(receive(), case.result)

    def encode() -> object:
        return proto.reply_result(call, case.result)

    def decode() -> object:
        return case.decode(case.body)

    # The REST body decoder, as the protocol uses it (route parameters and all).
    if case.path == "/message:send":
        match = rest.match_route("POST", case.path)
        assert isinstance(match, rest.RouteMatch)

        def decode() -> object:
            return rest.decode_rest_request(match, [], case.body)

    return {
        "full": best_rate(full, seconds),
        "receive": best_rate(receive, seconds),
        "decode": best_rate(decode, seconds),
        "encode": best_rate(encode, seconds),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--seconds", type=float, default=0.5, help="seconds per round")
    parser.add_argument("--no-pin", action="store_true")
    args = parser.parse_args()
    if not args.no_pin and hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {0})
    proto = protocol()
    print(f"{'request':28} {'req/s':>9} {'us/req':>7} {'decode':>7} {'dispatch':>9} {'encode':>7}")
    for case in cases():
        rates = measure(case, proto, args.seconds)
        us = {k: 1e6 / v for k, v in rates.items()}
        dispatch = max(us["receive"] - us["decode"], 0.0)
        print(
            f"{case.name:28} {rates['full']:9,.0f} {us['full']:7.1f} "
            f"{us['decode']:7.1f} {dispatch:9.1f} {us['encode']:7.1f}"
        )
    print("\nus per request; decode + dispatch = receive_request, encode = reply_result")


if __name__ == "__main__":
    main()
