"""A hostile agent cannot drive the terminal of whoever calls it with ``a2aserve``.

The agent here is a tiny HTTP server of the test's own, on 127.0.0.1, whose every text (the
card, a task's status and artifact, stream events, an error's reason and message, an
interface's binding) carries escape sequences a terminal obeys: OSC 52 (write the
clipboard), clear-screen, a window title, an OSC 8 link, C1's one-byte CSI, DEL, a carriage
return. The console script runs as a user runs it, in a process of its own; nothing it
prints may hold a control character but newline and tab, while ``-o json`` keeps the exact
text (escaped as JSON).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

A2ASERVE = str(Path(sys.executable).with_name("a2aserve"))

#: What a hostile agent writes: each sequence a terminal would act on.
HOSTILE = (
    "\x1b]52;c;cHduZWQ=\x07"  # OSC 52: the clipboard
    "\x1b[2J\x1b[H"  # clear the screen
    "\x1b]0;owned\x07"  # the window title
    "\x1b]8;;http://evil.test/\x1b\\click\x1b]8;;\x1b\\"  # OSC 8: a hidden link
    "\x9b31m"  # C1 CSI: red
    "\x7f\r\x00"  # DEL, a carriage return that overwrites the line, NUL
)
#: A control character a terminal may obey: C0 but newline and tab, DEL, C1.
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
TASK_ID = "task-1"
CONTEXT_ID = "context-" + HOSTILE


def _message(text: str) -> dict[str, Any]:
    return {"messageId": "m-1", "role": "ROLE_AGENT", "parts": [{"text": text}]}


def _task(state: str) -> dict[str, Any]:
    return {
        "id": TASK_ID,
        "contextId": CONTEXT_ID,
        "status": {"state": state, "message": _message(HOSTILE)},
        "artifacts": [{"artifactId": "a-1", "parts": [{"text": HOSTILE}]}],
    }


def _events() -> list[dict[str, Any]]:
    ids = {"taskId": TASK_ID, "contextId": CONTEXT_ID}
    return [
        {"task": _task("TASK_STATE_WORKING")},
        {"statusUpdate": {**ids, "status": {"state": "TASK_STATE_WORKING",
                                            "message": _message(HOSTILE)}}},
        {"artifactUpdate": {**ids, "artifact": {"artifactId": "a-1", "parts": [{"text": HOSTILE}]},
                            "lastChunk": True}},
        {"statusUpdate": {**ids, "status": {"state": "TASK_STATE_COMPLETED"}}},
    ]  # fmt: skip


ERROR = {
    "code": -32001,
    "message": HOSTILE,
    "data": [
        {
            "@type": "type.googleapis.com/google.rpc.ErrorInfo",
            "reason": "TASK_NOT_FOUND" + HOSTILE,
            "domain": "a2a-protocol.org",
        }
    ],
}


class Hostile(BaseHTTPRequestHandler):
    """A v1.0 JSON-RPC agent that answers every call with escape sequences."""

    server: ThreadingHTTPServer

    def log_message(self, format: str, *args: Any) -> None:  # quiet: not the test's output
        pass

    def do_GET(self) -> None:
        base = f"http://127.0.0.1:{self.server.server_address[1]}"
        # Under /odd/, a card whose only interface has a binding no client speaks: the
        # client's own error then quotes it.
        binding = "SOAP" + HOSTILE if self.path.startswith("/odd/") else "JSONRPC"
        card = {
            "name": "Evil" + HOSTILE,
            "description": HOSTILE,
            "version": "1.0.0",
            "supportedInterfaces": [
                {"url": base + "/", "protocolBinding": binding, "protocolVersion": "1.0"}
            ],
            "capabilities": {"streaming": True},
            "defaultInputModes": ["text/plain"],
            "defaultOutputModes": ["text/plain"],
            "skills": [{"id": "s", "name": HOSTILE, "description": HOSTILE, "tags": []}],
        }
        self._reply("application/json", json.dumps(card).encode())

    def do_POST(self) -> None:
        call = json.loads(self.rfile.read(int(self.headers["content-length"])))
        method, request_id = call["method"], call["id"]
        if method in ("SendStreamingMessage", "SubscribeToTask"):
            frames = b"".join(
                f"id: {n}\ndata: {json.dumps({'jsonrpc': '2.0', 'id': request_id, 'result': e})}"
                "\n\n".encode()
                for n, e in enumerate(_events(), 1)
            )
            self._reply("text/event-stream", frames)
            return
        if method == "CancelTask":
            reply: dict[str, Any] = {"error": ERROR}
        elif method == "SendMessage":
            reply = {"result": {"task": _task("TASK_STATE_COMPLETED")}}
        else:  # GetTask
            reply = {"result": _task("TASK_STATE_COMPLETED")}
        body = json.dumps({"jsonrpc": "2.0", "id": request_id, **reply}).encode()
        self._reply("application/json", body)

    def _reply(self, content_type: str, body: bytes) -> None:
        self.send_response(200)
        self.send_header("content-type", content_type)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture(scope="module")
def agent() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Hostile)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def a2aserve(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [A2ASERVE, *args],
        capture_output=True,
        text=True,
        encoding="utf-8",
        errors="strict",
        timeout=60,
    )


def assert_harmless(output: str) -> None:
    """No control character is left, and the escapes are shown, not dropped."""
    assert not CONTROL.search(output), repr(CONTROL.search(output))
    assert r"\x1b]52;c;cHduZWQ=\x07" in output
    assert r"\x9b31m\x7f\x0d\x00" in output


@pytest.mark.parametrize(
    ("verb", "code"),
    [
        pytest.param(["card"], 0, id="card"),
        pytest.param(["send", "hi"], 0, id="send"),
        pytest.param(["send", "hi", "--stream"], 0, id="send-stream"),
        pytest.param(["get", TASK_ID], 0, id="get"),
        pytest.param(["subscribe", TASK_ID], 0, id="subscribe"),
        pytest.param(["cancel", TASK_ID], 1, id="agent-error"),
    ],
)
def test_text_output_shows_escape_sequences_without_obeying_them(
    agent: str, verb: list[str], code: int
) -> None:
    done = a2aserve(verb[0], agent, *verb[1:])
    assert done.returncode == code, done.stderr
    printed = done.stdout if code == 0 else done.stderr
    assert_harmless(printed)
    assert not CONTROL.search(done.stdout + done.stderr)


def test_an_error_of_the_client_quoting_the_card_is_harmless(agent: str) -> None:
    done = a2aserve("send", agent + "/odd", "hi")
    assert done.returncode == 3
    assert "no interface" in done.stderr
    assert_harmless(done.stderr)
    assert len(done.stderr.splitlines()) == 1


@pytest.mark.parametrize(
    "verb",
    [
        pytest.param(["card"], id="card"),
        pytest.param(["send", "hi"], id="send"),
        pytest.param(["send", "hi", "--stream"], id="send-stream"),
        pytest.param(["get", TASK_ID], id="get"),
        pytest.param(["subscribe", TASK_ID], id="subscribe"),
    ],
)
def test_json_output_is_exact_and_escaped(agent: str, verb: list[str]) -> None:
    done = a2aserve(verb[0], agent, *verb[1:], "-o", "json")
    assert done.returncode == 0, done.stderr
    # JSON escapes C0 itself; DEL and C1 it would leave raw: escaped too.
    assert not CONTROL.search(done.stdout), repr(CONTROL.search(done.stdout))
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert _holds(lines, HOSTILE)  # the agent's text, exactly, once decoded


def _holds(value: Any, text: str) -> bool:
    """Whether ``text`` is one of the strings in the decoded JSON ``value`` (or ends one)."""
    if isinstance(value, str):
        return value.endswith(text)
    if isinstance(value, dict):
        return any(_holds(item, text) for item in value.values())
    if isinstance(value, list):
        return any(_holds(item, text) for item in value)
    return False
