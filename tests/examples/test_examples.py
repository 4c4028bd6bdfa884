"""The examples, run as users run them: a subprocess per example and adapter, real HTTP.

All servers start together (once for the module) on free 127.0.0.1 ports, the tests talk to
them with httpx, and every subprocess is terminated at the end, whatever happened.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from helpers.raw_http import RawResponse, head, read_response

EXAMPLES = Path(__file__).parents[2] / "examples"
ADAPTERS = ("starlette", "aiohttp")
CARD_PATH = "/.well-known/agent-card.json"
V1 = {"A2A-Version": "1.0"}

#: Server name -> example and its extra arguments; each runs once per adapter. The
#: streaming example's two styles share one server per adapter (two would cost a process).
SERVERS: dict[str, tuple[str, ...]] = {
    "echo": ("echo.py",),
    "streaming": ("streaming.py",),
    "multi_turn": ("multi_turn.py",),
    "conformance": ("conformance.py", "--subscribe-delay", "0.5"),
}
#: The streaming style each adapter's server runs, so that both styles and adapters are run.
STREAMING_STYLE = {"starlette": "generator", "aiohttp": "context"}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class Server:
    """One example running in a subprocess."""

    def __init__(self, name: str, adapter: str, log: Path, *more: str) -> None:
        script, *extra = SERVERS[name]
        extra += more
        if name == "streaming":
            extra += ["--style", STREAMING_STYLE[adapter]]
        self.command = [sys.executable, str(EXAMPLES / script), "--adapter", adapter, *extra]
        self.log = log
        self._start()

    def _start(self) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        command = [*self.command, "--host", "127.0.0.1", "--port", str(self.port)]
        with self.log.open("wb") as out:
            self.process = subprocess.Popen(
                command,
                cwd=EXAMPLES.parent,
                stdout=out,
                stderr=subprocess.STDOUT,
            )

    def wait_ready(self, deadline: float) -> None:
        retries = 3
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                # The free port was taken by another process before this one bound it:
                # start again on another (any other exit is a failure, reported below).
                if retries and "address already in use" in self.log.read_text(errors="replace"):
                    retries -= 1
                    self._start()
                    continue
                break
            try:
                if httpx.get(self.url + CARD_PATH, timeout=1).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            time.sleep(0.05)
        raise AssertionError(f"{self.url} did not serve its card:\n{self.log.read_text()}")

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()

    def wait_stopped(self) -> None:
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[tuple[str, str], str]]:
    """Every example on every adapter, started at once; name and adapter -> base URL."""
    logs = tmp_path_factory.mktemp("example-logs")
    started: dict[tuple[str, str], Server] = {}
    try:
        for name in SERVERS:
            for adapter in ADAPTERS:
                started[name, adapter] = Server(name, adapter, logs / f"{name}-{adapter}.log")
        deadline = time.monotonic() + 60  # generous: CI machines may be busy
        for server in started.values():
            server.wait_ready(deadline)
        yield {key: server.url for key, server in started.items()}
    finally:
        for server in started.values():
            server.stop()
        for server in started.values():
            server.wait_stopped()


@pytest.fixture(params=ADAPTERS)
def adapter(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def client() -> Iterator[httpx.Client]:
    with httpx.Client(timeout=10, headers=V1) as http:
        yield http


def message(text: str, message_id: str | None = None, **fields: Any) -> dict[str, Any]:
    return {
        "messageId": message_id or str(uuid.uuid4()),
        "role": "ROLE_USER",
        "parts": [{"text": text}],
        **fields,
    }


def rpc(client: httpx.Client, url: str, method: str, params: Any, **headers: str) -> Any:
    """One JSON-RPC call; the whole reply (``result`` or ``error``)."""
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    response = client.post(url + "/", json=body, headers=headers)
    assert response.status_code == 200, response.text
    return response.json()


def send(
    client: httpx.Client, url: str, text: str, message_id: str | None = None, **fields: Any
) -> Any:
    reply = rpc(client, url, "SendMessage", {"message": message(text, message_id, **fields)})
    assert "result" in reply, reply
    return reply["result"]


def stream(client: httpx.Client, url: str, text: str, message_id: str | None = None) -> list[Any]:
    """SendStreamingMessage; the ``result`` of every SSE frame, checking the frame ids."""
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "SendStreamingMessage",
        "params": {"message": message(text, message_id)},
    }
    results, ids = [], []
    with client.stream("POST", url + "/", json=body) as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        for line in response.iter_lines():
            if line.startswith("id: "):
                ids.append(int(line[4:]))
            elif line.startswith("data: "):
                results.append(json.loads(line[6:])["result"])
    assert ids == sorted(ids) and len(ids) == len(results)
    return results


def state(result: dict[str, Any]) -> str:
    return str(result["statusUpdate"]["status"]["state"])


# --- echo -------------------------------------------------------------------------------


def test_echo_replies_with_the_text(servers: Any, adapter: str, client: httpx.Client) -> None:
    task = send(client, servers["echo", adapter], "hello, echo")["task"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    assert task["artifacts"][0]["parts"] == [{"text": "hello, echo"}]


# --- streaming ----------------------------------------------------------------------------


def test_streaming_sends_the_words_as_appended_chunks(
    servers: Any, adapter: str, client: httpx.Client
) -> None:
    results = stream(client, servers["streaming", adapter], "the quick brown fox")
    assert results[0]["task"]["status"]["state"] == "TASK_STATE_SUBMITTED"
    working = results[1]["statusUpdate"]["status"]
    assert working["state"] == "TASK_STATE_WORKING"
    assert working["message"]["parts"] == [{"text": "Streaming 4 words"}]
    chunks = [r["artifactUpdate"] for r in results[2:-1]]
    assert [c["artifact"]["parts"][0]["text"] for c in chunks] == [
        "the",
        " quick",
        " brown",
        " fox",
    ]
    assert [c.get("append", False) for c in chunks] == [False, True, True, True]
    assert len({c["artifact"]["artifactId"] for c in chunks}) == 1
    if STREAMING_STYLE[adapter] == "context":
        assert [c.get("lastChunk", False) for c in chunks] == [False, False, False, True]
    assert state(results[-1]) == "TASK_STATE_COMPLETED"


# --- multi-turn ---------------------------------------------------------------------------


def test_multi_turn_asks_then_greets(servers: Any, adapter: str, client: httpx.Client) -> None:
    url = servers["multi_turn", adapter]
    task = send(client, url, "hi")["task"]
    assert task["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
    assert task["status"]["message"]["parts"] == [{"text": "Hello! What is your name?"}]
    done = send(client, url, "Ada", taskId=task["id"])["task"]
    assert done["id"] == task["id"]
    assert done["status"]["state"] == "TASK_STATE_COMPLETED"
    assert done["artifacts"][0]["parts"] == [{"text": "Nice to meet you, Ada!"}]


# --- conformance --------------------------------------------------------------------------


def test_conformance_card_hygiene(servers: Any, adapter: str, client: httpx.Client) -> None:
    response = client.get(servers["conformance", adapter] + CARD_PATH)
    assert "max-age" in response.headers["cache-control"]
    assert response.headers["etag"] and response.headers["last-modified"]
    card = response.json()
    port = servers["conformance", adapter].rsplit(":", 1)[1]
    interfaces = card["supportedInterfaces"]
    assert interfaces[0]["protocolBinding"] == "JSONRPC"
    assert {i["protocolBinding"] for i in interfaces} == {"JSONRPC", "HTTP+JSON"}
    urls = {(i["protocolBinding"], i["url"]) for i in interfaces}
    assert urls == {
        ("JSONRPC", f"http://localhost:{port}/"),
        ("HTTP+JSON", f"http://localhost:{port}"),
    }
    assert card["capabilities"] == {
        "streaming": True,
        "pushNotifications": True,
        "extendedAgentCard": True,
    }
    assert card["defaultInputModes"] == ["text/plain", "application/json"]
    text = response.text.lower()
    for word in ("token", "secret", "password", "credential", "api_key", "127.0.0.1"):
        assert word not in text


def test_conformance_artifact_and_message_prefixes(
    servers: Any, adapter: str, client: httpx.Client
) -> None:
    url = servers["conformance", adapter]
    task = send(client, url, "data please", "tck-artifact-data-1")["task"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    assert task["artifacts"][0]["parts"] == [{"data": {"key": "value", "count": 42}}]
    file_url = send(client, url, "a file", "tck-artifact-file-url-1")["task"]
    assert file_url["artifacts"][0]["parts"] == [
        {
            "url": "https://example.com/output.txt",
            "filename": "output.txt",
            "mediaType": "text/plain",
        }
    ]
    reply = send(client, url, "a message", "tck-message-response-1")
    assert list(reply) == ["message"]
    assert reply["message"]["parts"] == [{"text": "Direct message response"}]
    assert "taskId" not in reply["message"]  # no task was created
    hello = send(client, url, "anything", "tck-something-new-1")["task"]
    assert hello["status"]["message"]["parts"] == [{"text": "Hello from TCK"}]


def test_conformance_input_required_then_cancel(
    servers: Any, adapter: str, client: httpx.Client
) -> None:
    url = servers["conformance", adapter]
    task = send(client, url, "needs more", "tck-input-required-1")["task"]
    assert task["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
    canceled = rpc(client, url, "CancelTask", {"id": task["id"]})["result"]
    assert canceled["status"]["state"] == "TASK_STATE_CANCELED"
    again = rpc(client, url, "CancelTask", {"id": task["id"]})["error"]
    assert again["code"] == -32002  # TaskNotCancelable


def test_conformance_unknown_prefix_stays_working_over_rest(
    servers: Any, adapter: str, client: httpx.Client
) -> None:
    url = servers["conformance", adapter]
    response = client.post(url + "/message:send", json={"message": message("hi", "cancel-test-1")})
    assert response.status_code == 200, response.text
    task = response.json()["task"]
    assert task["status"]["state"] == "TASK_STATE_WORKING"
    # Webhooks on loopback are allowed for this example (refused by default).
    config = {"taskId": task["id"], "url": "http://127.0.0.1:9/webhook"}
    created = rpc(client, url, "CreateTaskPushNotificationConfig", config)
    assert created["result"]["url"] == config["url"], created
    canceled = client.post(f"{url}/tasks/{task['id']}:cancel").json()
    assert canceled["status"]["state"] == "TASK_STATE_CANCELED"


def test_conformance_stream_artifact_chunked(
    servers: Any, adapter: str, client: httpx.Client
) -> None:
    results = stream(
        client, servers["conformance", adapter], "chunks", "tck-stream-artifact-chunked-1"
    )
    assert [next(iter(r)) for r in results] == [
        "task",
        "statusUpdate",
        "artifactUpdate",
        "artifactUpdate",
        "statusUpdate",
    ]
    assert state(results[1]) == "TASK_STATE_WORKING"
    first, last = results[2]["artifactUpdate"], results[3]["artifactUpdate"]
    assert first["artifact"]["parts"] == [{"text": "chunk-1 "}]
    assert not first.get("append") and not first.get("lastChunk")
    assert last["artifact"]["parts"] == [{"text": "chunk-2"}]
    assert last["append"] and last["lastChunk"]
    assert last["artifact"]["artifactId"] == first["artifact"]["artifactId"]
    assert state(results[4]) == "TASK_STATE_COMPLETED"


def test_conformance_extended_card_for_anonymous_and_bearer_callers(
    servers: Any, adapter: str, client: httpx.Client
) -> None:
    # The kits send no credentials: this example serves the extended card to anonymous
    # callers too (an option that is off by default).
    url = servers["conformance", adapter]
    anonymous = rpc(client, url, "GetExtendedAgentCard", {})
    assert anonymous["result"]["skills"][0]["id"] == "conformance-extended", anonymous
    anonymous_rest = client.get(url + "/extendedAgentCard")
    assert anonymous_rest.status_code == 200
    assert anonymous_rest.json()["skills"][0]["id"] == "conformance-extended"
    extended = rpc(client, url, "GetExtendedAgentCard", {}, Authorization="Bearer anything")
    assert extended["result"]["skills"][0]["id"] == "conformance-extended"
    rest = client.get(url + "/extendedAgentCard", headers={"Authorization": "Bearer x"})
    assert rest.status_code == 200
    assert rest.json()["skills"][0]["id"] == "conformance-extended"


def test_conformance_subscription_to_an_input_required_task_until_completed(
    servers: Any, adapter: str, client: httpx.Client
) -> None:
    # STREAM-SUB-002: subscribe to an input-required task, complete it from another client,
    # and the subscription carries that and closes on the terminal event.
    url = servers["conformance", adapter]
    task = send(client, url, "needs more", "tck-input-required-sub")["task"]
    assert task["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
    body = {"jsonrpc": "2.0", "id": 9, "method": "SubscribeToTask", "params": {"id": task["id"]}}
    results: list[Any] = []
    with client.stream("POST", url + "/", json=body) as response:
        assert response.status_code == 200
        for line in response.iter_lines():
            if not line.startswith("data: "):
                continue
            results.append(json.loads(line[6:])["result"])
            if len(results) == 1:
                with httpx.Client(timeout=10, headers=V1) as other:
                    done = send(other, url, "done", "tck-complete-task-sub", taskId=task["id"])
                assert done["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
    assert results[0]["task"]["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
    assert state(results[-1]) == "TASK_STATE_COMPLETED"


def test_conformance_subscribe_task_works_then_completes(
    servers: Any, adapter: str, client: httpx.Client
) -> None:
    results = stream(client, servers["conformance", adapter], "wait", "test-resubscribe-message-id")
    assert [state(r) for r in results[1:]] == ["TASK_STATE_WORKING", "TASK_STATE_COMPLETED"]


# --- server limits (a2a_starlette.limits, a2a_aiohttp.HANDLER_ARGS) ----------------------------------------------------

#: Heads no server should buffer: one header of 20 KB; 2,000 headers (some 20 KB in all).
#: Each fits in one read of the server, so that it reads all of it before it refuses.
OVERSIZED_HEADS = {
    "huge header": [("X-Big", "a" * 20_000)],
    "many headers": [(f"X-Header-{i}", "v") for i in range(2000)],
}


def exchange(url: str, request: bytes) -> RawResponse:
    """Send raw bytes on a connection of their own; the reply."""
    port = int(url.rsplit(":", 1)[1])
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(request)
        return read_response(sock)


@pytest.mark.parametrize("name", OVERSIZED_HEADS)
def test_servers_refuse_an_oversized_head(
    servers: Any, adapter: str, client: httpx.Client, name: str
) -> None:
    url = servers["echo", adapter]
    reply = exchange(url, head("GET", CARD_PATH, OVERSIZED_HEADS[name]))
    assert reply.status in (400, 431), reply
    assert client.get(url + CARD_PATH).status_code == 200  # and the server goes on


def test_aiohttp_server_refuses_more_than_100_headers(servers: Any, client: httpx.Client) -> None:
    # Small ones: 2 KB in all, far under any size limit; only the count is over.
    url = servers["echo", "aiohttp"]
    reply = exchange(url, head("GET", CARD_PATH, [(f"X-{i}", "v") for i in range(101)]))
    assert reply.status in (400, 431), reply
    fits = exchange(url, head("GET", CARD_PATH, [(f"X-{i}", "v") for i in range(90)]))
    assert fits.status == 200
    assert client.get(url + CARD_PATH).status_code == 200


def test_servers_refuse_a_body_declared_over_the_limit_before_it_is_sent(
    servers: Any, adapter: str
) -> None:
    url = servers["echo", adapter]
    declared = [("Content-Type", "application/json"), ("Content-Length", str(16 << 20))]
    reply = exchange(url, head("POST", "/", [*V1.items(), *declared]))  # and no body
    assert reply.status == 200
    assert json.loads(reply.body)["error"]["code"] == -32600


@pytest.mark.parametrize("value", ["abc", "-1", "5, 6", "9" * 30])
def test_servers_refuse_a_malformed_content_length(
    servers: Any, adapter: str, client: httpx.Client, value: str
) -> None:
    url = servers["echo", adapter]
    request = head("POST", "/", [("Content-Length", value)]) + b"hello"
    reply = exchange(url, request)
    assert 400 <= reply.status < 500, reply
    assert client.get(url + CARD_PATH).status_code == 200


@pytest.mark.parametrize(
    "host", ["evil.example", "evil.example:80", "127.0.0.1.evil.example", "[::2]", "a b"]
)
def test_a_loopback_server_refuses_a_rebound_host(
    servers: Any, adapter: str, client: httpx.Client, host: str
) -> None:
    # What a page on evil.example whose name resolves to 127.0.0.1 makes the browser send.
    url = servers["echo", adapter]
    card = exchange(url, head("GET", CARD_PATH, host=host))
    assert card.status in (400, 421), card  # 400: a Host the HTTP parser refuses first
    if card.status == 400:
        return
    assert b"allowed_hosts" in card.body
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ListTasks", "params": {}}).encode()
    headers = [("Content-Type", "application/json"), *V1.items()]
    headers.append(("Content-Length", str(len(body))))
    listed = exchange(url, head("POST", "/", headers, host=host) + body)
    assert listed.status == 421, listed
    assert b"tasks" not in listed.body


@pytest.mark.parametrize("name", ["127.0.0.1", "localhost", "LOCALHOST.", "app.localhost"])
def test_a_loopback_server_answers_its_own_names(
    servers: Any, adapter: str, client: httpx.Client, name: str
) -> None:
    url = servers["echo", adapter]
    port = url.rsplit(":", 1)[1]
    for host in (name, f"{name}:{port}"):
        reply = exchange(url, head("GET", CARD_PATH, host=host))
        assert reply.status == 200, (host, reply)


# --- --signing-key ---------------------------------------------------------------------------


def test_signing_key_signs_the_card_and_serves_its_jwks(tmp_path: Path, adapter: str) -> None:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec

    from a2a_core.signing import verify_agent_card

    key = ec.generate_private_key(ec.SECP256R1())
    pem = tmp_path / "card-key.pem"
    pem.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.TraditionalOpenSSL,
            serialization.NoEncryption(),
        )
    )
    server = Server("echo", adapter, tmp_path / "log", "--signing-key", str(pem))
    try:
        server.wait_ready(time.monotonic() + 60)
        body = httpx.get(server.url + CARD_PATH, timeout=10).content
        jwks = httpx.get(server.url + "/.well-known/jwks.json", timeout=10).json()
    finally:
        server.stop()
        server.wait_stopped()
    [jwk] = jwks["keys"]
    assert jwk["kty"] == "EC"
    assert "d" not in jwk
    card = verify_agent_card(body, {jwk["kid"]: key.public_key()})
    assert card.name == "Echo"
    assert verify_agent_card(body, {jwk["kid"]: jwk}) == card


def test_sql_keeps_a_conversation_across_a_restart(tmp_path: Path, adapter: str) -> None:
    """``--sql URL`` (SQLite here): the multi-turn example asks, is stopped and started
    again on the same database, and the answer continues the same task."""
    url = f"sqlite+aiosqlite:///{tmp_path / 'tasks.db'}"

    def send(base: str, text: str, task_id: str = "") -> dict[str, Any]:
        message: dict[str, Any] = {
            "messageId": uuid.uuid4().hex,
            "role": "ROLE_USER",
            "parts": [{"text": text}],
        }
        if task_id:
            message["taskId"] = task_id
        body = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": message}}
        reply = httpx.post(base + "/", json=body, headers={"A2A-Version": "1.0"}, timeout=10)
        task: dict[str, Any] = reply.json()["result"]["task"]
        return task

    first = Server("multi_turn", adapter, tmp_path / "first.log", "--sql", url)
    try:
        first.wait_ready(time.monotonic() + 60)
        asked = send(first.url, "hi")
    finally:
        first.stop()
        first.wait_stopped()
    again = Server("multi_turn", adapter, tmp_path / "again.log", "--sql", url)
    try:
        again.wait_ready(time.monotonic() + 60)
        done = send(again.url, "Ada", asked["id"])
    finally:
        again.stop()
        again.wait_stopped()
    assert asked["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
    assert done["id"] == asked["id"]
    assert done["status"]["state"] == "TASK_STATE_COMPLETED"
    assert done["artifacts"][0]["parts"][0]["text"] == "Nice to meet you, Ada!"
