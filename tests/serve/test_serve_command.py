"""``a2aserve serve`` started as a process, as a user would: the console script of this
environment, in a folder holding the tutorial's agent, on a free 127.0.0.1 port.

Each setting is tried as a flag and as its environment variable; the line with the URL must
be true when it is printed (the server answers at once); SIGTERM stops it with exit code 0;
a wrong ``MODULE:ATTR`` is one line and exit code 2."""

from __future__ import annotations

import json
import os
import queue
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Mapping
from pathlib import Path

import httpx
import pytest

from helpers.processes import free_port

A2ASERVE = str(Path(sys.executable).with_name("a2aserve"))
CARD_PATH = "/.well-known/agent-card.json"

AGENT = '''
"""The tutorial's agent, as a module a2aserve serves."""

from collections.abc import AsyncIterator

from a2a_core.server import InputRequired, TaskContext


async def agent(ctx: TaskContext) -> AsyncIterator[str | InputRequired]:
    """Asks for your name, then greets you by it."""
    name = ctx.text.strip()
    if not ctx.is_follow_up:
        yield InputRequired("Hello! What is your name?")
        return
    for index, word in enumerate(f"Nice to meet you, {name}!".split(" ")):
        yield word if index == 0 else f" {word}"


def make():
    """A factory: the A2AServer, built by the module itself."""
    from a2a_core.server import A2AServer
    from a2a_core.cli.serve import card_for

    return A2AServer(agent, card=card_for(agent), base_url="http://factory.test")


not_an_agent = 42
'''


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "tutorial_agent.py").write_text(AGENT)
    return tmp_path


class Served:
    """One ``a2aserve serve`` process: its output read line by line as it comes."""

    def __init__(self, args: list[str], cwd: Path, env: Mapping[str, str]) -> None:
        full_env = {**os.environ, **env, "PYTHONUNBUFFERED": "1"}
        self.process = subprocess.Popen(
            [A2ASERVE, "serve", *args],
            cwd=cwd,
            env=full_env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.lines: queue.Queue[str] = queue.Queue()
        self.stdout: list[str] = []
        self.stderr: list[str] = []
        self._readers = [
            threading.Thread(target=self._read, args=(stream, kept), daemon=True)
            for stream, kept in (
                (self.process.stdout, self.stdout),
                (self.process.stderr, self.stderr),
            )
        ]
        for reader in self._readers:
            reader.start()

    def _read(self, stream: object, kept: list[str]) -> None:
        for line in stream:  # type: ignore[attr-defined]
            kept.append(line)
            if kept is self.stdout:
                self.lines.put(line)

    def banner(self, timeout: float = 20) -> str:
        """The first line on stdout (the one with the URL)."""
        try:
            return self.lines.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"no line within {timeout}s: {''.join(self.stderr)}") from None

    def stop(self) -> int:
        """SIGTERM, then the exit code (killed after 15 s)."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        return self.wait(15)

    def wait(self, timeout: float) -> int:
        """The exit code, once the process ended and its output was read to the end."""
        try:
            code = self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            raise AssertionError(f"a2aserve serve did not end within {timeout} s") from None
        for reader in self._readers:
            reader.join(timeout=5)
        for stream in (self.process.stdout, self.process.stderr):
            if stream is not None:
                stream.close()
        return code

    @property
    def output(self) -> str:
        return "".join(self.stdout) + "".join(self.stderr)


@pytest.fixture
def serve(folder: Path) -> Iterator[object]:
    started: list[Served] = []

    def start(*args: str, env: Mapping[str, str] | None = None) -> Served:
        served = Served(list(args), folder, env or {})
        started.append(served)
        return served

    yield start
    for served in started:
        if served.process.poll() is None:
            served.process.kill()
        served.wait(15)


def send(url: str, text: str, **message: str) -> dict[str, object]:
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "SendMessage",
        "params": {
            "message": {"messageId": f"m-{time.monotonic_ns()}", "role": "ROLE_USER",
                        "parts": [{"text": text}], **message},
        },
    }  # fmt: skip
    reply = httpx.post(url + "/", json=body, headers={"a2a-version": "1.0"}, timeout=10)
    reply.raise_for_status()
    result: dict[str, object] = reply.json()["result"]["task"]
    return result


def start_and_greet(served: Served, url: str) -> dict[str, object]:
    """The banner names ``url``; the server answers at once; the agent's two turns work."""
    line = served.banner()
    assert f" on {url} " in line, line
    card = httpx.get(url + CARD_PATH, timeout=5)  # right after the line: no retry
    assert card.status_code == 200
    asked = send(url, "hi")
    assert asked["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"  # type: ignore[index]
    done = send(url, "Ada", taskId=str(asked["id"]))
    assert done["status"]["state"] == "TASK_STATE_COMPLETED"  # type: ignore[index]
    parts = done["artifacts"][0]["parts"]  # type: ignore[index]
    assert "".join(p["text"] for p in parts) == "Nice to meet you, Ada!"
    return card.json()  # type: ignore[no-any-return]


# --- the adapter, the address, stopping ---------------------------------------------------


@pytest.mark.parametrize("adapter", ["starlette", "aiohttp"])
@pytest.mark.parametrize("how", ["flag", "env"])
def test_serves_the_tutorial_agent_and_stops_on_sigterm(serve, adapter: str, how: str) -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    if how == "flag":
        served = serve("tutorial_agent:agent", "--adapter", adapter, "--host", "127.0.0.1",
                       "--port", str(port))  # fmt: skip
    else:
        env = {"A2ASERVE_ADAPTER": adapter, "A2ASERVE_HOST": "127.0.0.1",
               "A2ASERVE_PORT": str(port)}  # fmt: skip
        served = serve("tutorial_agent:agent", env=env)
    card = start_and_greet(served, url)
    assert card["name"] == "Agent"
    assert card["description"] == "Asks for your name, then greets you by it."
    assert f"({adapter})" in served.stdout[0]
    for probe in ("/healthz", "/readyz"):
        answer = httpx.get(url + probe, timeout=5)
        assert answer.status_code == 200 and answer.json()["status"] == "ok"
    started = time.monotonic()
    assert served.stop() == 0, served.output
    assert time.monotonic() - started < 10  # within the shutdown grace (5 s) and a margin
    assert "Traceback" not in served.output


def test_a_flag_wins_over_the_environment(serve) -> None:
    port = free_port()
    served = serve("tutorial_agent:agent", "--port", str(port),
                   env={"A2ASERVE_PORT": str(free_port()), "A2ASERVE_ADAPTER": "aiohttp"})  # fmt: skip
    line = served.banner()
    assert f"http://127.0.0.1:{port} (aiohttp)" in line
    assert served.stop() == 0


@pytest.mark.parametrize("how", ["flag", "env"])
def test_the_public_url_is_the_cards(serve, how: str) -> None:
    port = free_port()
    public = "https://agent.example.com/a2a"
    if how == "flag":
        served = serve("tutorial_agent:agent", "--port", str(port), "--public-url", public)
    else:
        served = serve("tutorial_agent:agent", "--port", str(port),
                       env={"A2ASERVE_PUBLIC_URL": public})  # fmt: skip
    assert f" on {public} " in served.banner()
    card = httpx.get(f"http://127.0.0.1:{port}{CARD_PATH}", timeout=5).json()
    urls = {i["url"] for i in card["supportedInterfaces"]}
    assert urls == {public, public + "/"}
    assert served.stop() == 0


@pytest.mark.parametrize("how", ["flag", "env"])
def test_health_probes_can_be_turned_off(serve, how: str) -> None:
    port = free_port()
    if how == "flag":
        served = serve("tutorial_agent:agent", "--port", str(port), "--no-health")
    else:
        served = serve("tutorial_agent:agent", "--port", str(port), env={"A2ASERVE_HEALTH": "0"})
    served.banner()
    assert httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=5).status_code == 404
    assert served.stop() == 0


@pytest.mark.parametrize("how", ["flag", "env"])
def test_the_console_is_served_and_announced(serve, how: str) -> None:
    port = free_port()
    if how == "flag":
        served = serve("tutorial_agent:agent", "--port", str(port), "--console")
    else:
        served = serve("tutorial_agent:agent", "--port", str(port), env={"A2ASERVE_CONSOLE": "1"})
    served.banner()
    url = f"http://127.0.0.1:{port}/a2a-console/"
    assert served.lines.get(timeout=5) == f"Developer console at {url}\n"
    page = httpx.get(url, timeout=5)
    assert page.status_code == 200
    assert "default-src 'none'" in page.headers["content-security-policy"]
    assert httpx.get(url + "console.js", timeout=5).status_code == 200
    assert served.stop() == 0
    assert "anyone who can reach" not in served.output  # 127.0.0.1: no warning


@pytest.mark.parametrize("how", ["flag", "env"])
def test_the_host_names_answered(serve, how: str) -> None:
    port = free_port()
    if how == "flag":
        served = serve(
            "tutorial_agent:agent", "--port", str(port), "--allowed-hosts", "a.test, .b.test"
        )
    else:
        served = serve(
            "tutorial_agent:agent",
            "--port",
            str(port),
            env={"A2ASERVE_ALLOWED_HOSTS": "a.test,.b.test"},
        )
    served.banner()

    def status(host: str) -> int:
        url = f"http://127.0.0.1:{port}{CARD_PATH}"
        return httpx.get(url, headers={"host": host}, timeout=5).status_code

    assert [status(h) for h in ("a.test", f"x.b.test:{port}", "127.0.0.1", "evil.test")] == [
        200,
        200,
        421,
        421,
    ]
    assert served.stop() == 0


def test_a_loopback_server_answers_only_loopbacks_names(serve) -> None:
    port = free_port()
    served = serve("tutorial_agent:agent", "--port", str(port))
    served.banner()
    url = f"http://127.0.0.1:{port}{CARD_PATH}"
    assert httpx.get(url, timeout=5).status_code == 200
    assert httpx.get(url, headers={"host": "evil.test"}, timeout=5).status_code == 421
    assert served.stop() == 0


def test_a_bad_host_name_is_one_line_and_exit_code_2(serve) -> None:
    served = serve(
        "tutorial_agent:agent", "--port", str(free_port()), "--allowed-hosts", "http://a.test/"
    )
    assert served.wait(30) == 2
    (line,) = served.stderr
    assert line.startswith("a2aserve serve: --allowed-hosts:") and "not a host name" in line


FAILING = """
async def agent(ctx):
    raise KeyError("the missing key")
"""


@pytest.mark.parametrize("how", ["flag", "env", "off"])
def test_show_errors(serve, folder: Path, how: str) -> None:
    (folder / "failing_agent.py").write_text(FAILING)
    port = free_port()
    flags = ["--show-errors"] if how == "flag" else []
    env = {"A2ASERVE_SHOW_ERRORS": "1"} if how == "env" else {}
    served = serve("failing_agent:agent", "--port", str(port), *flags, env=env)
    served.banner()
    task = send(f"http://127.0.0.1:{port}", "hi")
    said = task["status"]["message"]["parts"][0]["text"]  # type: ignore[index]
    shown = "[KeyError: 'the missing key']" in said
    assert shown is (how != "off"), said
    assert served.stop() == 0


def test_a_console_beyond_loopback_is_warned_about(serve) -> None:
    port = free_port()
    served = serve("tutorial_agent:agent", "--port", str(port), "--host", "0.0.0.0",
                   "--public-url", f"http://127.0.0.1:{port}", "--console")  # fmt: skip
    served.banner()
    assert served.stop() == 0
    assert "the developer console is on (/a2a-console/) and the server listens on 0.0.0.0" in (
        served.output
    )


@pytest.mark.parametrize("adapter", ["starlette", "aiohttp"])
def test_the_console_of_a_server_built_by_a_factory(serve, adapter: str) -> None:
    port = free_port()
    served = serve("tutorial_agent:make", "--port", str(port), "--adapter", adapter, "--console")
    served.banner()
    assert httpx.get(f"http://127.0.0.1:{port}/a2a-console/", timeout=5).status_code == 200
    assert served.stop() == 0


def test_without_the_flag_there_is_no_console(serve) -> None:
    port = free_port()
    served = serve("tutorial_agent:agent", "--port", str(port))
    served.banner()
    assert httpx.get(f"http://127.0.0.1:{port}/a2a-console/", timeout=5).status_code == 404
    assert served.stop() == 0
    assert "Developer console" not in served.output


# --- logs ---------------------------------------------------------------------------------


@pytest.mark.parametrize("how", ["flag", "env"])
def test_the_log_level(serve, how: str) -> None:
    port = free_port()
    if how == "flag":
        served = serve("tutorial_agent:agent", "--port", str(port), "--log-level", "warning")
    else:
        served = serve("tutorial_agent:agent", "--port", str(port),
                       env={"A2ASERVE_LOG_LEVEL": "WARNING"})  # fmt: skip
    served.banner()
    assert served.stop() == 0
    assert "Application startup complete" not in served.output  # INFO, not shown
    default = serve("tutorial_agent:agent", "--port", str(free_port()))
    default.banner()
    assert default.stop() == 0
    assert "Application startup complete" in default.output  # INFO by default


CHATTY_AGENT = """
import logging

from a2a_core.server import TaskContext


async def agent(ctx: TaskContext) -> str:
    \"\"\"Logs as it answers.\"\"\"
    logging.getLogger("chatty_agent").debug("the agent's debug line")
    logging.getLogger("chatty_agent").info("the agent's info line")
    logging.getLogger("httpcore").debug("a chatty library's debug line")
    return ctx.text
"""


@pytest.mark.parametrize(
    ("adapter", "how"), [("starlette", "flag"), ("starlette", "env"), ("aiohttp", "flag")]
)
def test_the_log_level_reaches_the_agents_own_loggers(
    serve, folder: Path, adapter: str, how: str
) -> None:
    (folder / "chatty_agent.py").write_text(CHATTY_AGENT)
    port = free_port()
    args = ["chatty_agent:agent", "--port", str(port), "--adapter", adapter]
    if how == "flag":
        served = serve(*args, "--log-level", "debug")
    else:
        served = serve(*args, env={"A2ASERVE_LOG_LEVEL": "debug"})
    served.banner()
    send(f"http://127.0.0.1:{port}", "hi")
    quiet = serve("chatty_agent:agent", "--port", str(free_port()), "--adapter", adapter)
    quiet_url = quiet.banner().split(" on ")[1].split(" ")[0]
    send(quiet_url, "hi")
    assert served.stop() == 0 and quiet.stop() == 0
    assert "chatty_agent: the agent's debug line" in served.output
    assert "chatty_agent: the agent's info line" in served.output
    # Libraries known to flood a log stay at WARNING.
    assert "a chatty library's debug line" not in served.output
    # The default level, info, is the agent's too.
    assert "the agent's info line" in quiet.output
    assert "the agent's debug line" not in quiet.output


@pytest.mark.parametrize("adapter", ["starlette", "aiohttp"])
@pytest.mark.parametrize("how", ["flag", "env"])
def test_the_access_log(serve, adapter: str, how: str) -> None:
    port = free_port()
    args = ["tutorial_agent:agent", "--port", str(port), "--adapter", adapter]
    if how == "flag":
        served = serve(*args, "--access-log")
    else:
        served = serve(*args, env={"A2ASERVE_ACCESS_LOG": "true"})
    served.banner()
    httpx.get(f"http://127.0.0.1:{port}{CARD_PATH}", timeout=5)
    quiet = serve("tutorial_agent:agent", "--port", str(free_port()), "--adapter", adapter)
    quiet_url = quiet.banner().split(" on ")[1].split(" ")[0]
    httpx.get(quiet_url + CARD_PATH, timeout=5)
    assert served.stop() == 0 and quiet.stop() == 0

    def logged(process: Served) -> str:  # everything but the line with the URL
        return "".join(process.stdout[1:] + process.stderr)

    assert f"GET {CARD_PATH}" in logged(served)  # the request's line
    assert CARD_PATH not in logged(quiet)


# --- state: SQL, Redis ----------------------------------------------------------------------


@pytest.mark.parametrize("how", ["flag", "env", "file"])
def test_tasks_kept_in_sql_survive_a_restart(serve, folder: Path, how: str) -> None:
    database = f"sqlite+aiosqlite:///{folder / 'tasks.db'}"
    (folder / "sql-url").write_text(database + "\n")
    by_how = {
        "flag": ((f"--sql={database}",), {}),
        "env": ((), {"A2ASERVE_SQL": database}),
        "file": ((), {"A2ASERVE_SQL_FILE": str(folder / "sql-url")}),
    }
    args, env = by_how[how]
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    first = serve("tutorial_agent:agent", "--port", str(port), *args, env=env)
    first.banner()
    asked = send(url, "hi")
    assert first.stop() == 0
    second = serve("tutorial_agent:agent", "--port", str(port), *args, env=env)
    second.banner()
    done = send(url, "Ada", taskId=str(asked["id"]))  # the task outlived the process
    assert done["status"]["state"] == "TASK_STATE_COMPLETED"  # type: ignore[index]
    assert second.stop() == 0


@pytest.mark.parametrize("how", ["flag", "env"])
def test_tasks_shared_through_redis(serve, how: str) -> None:
    redis_url = os.environ.get("A2A_TEST_REDIS_URL")
    if not redis_url:
        pytest.skip("no Redis: set A2A_TEST_REDIS_URL (.ci/run does when one answers)")
    prefix = f"a2aserve-test-{time.monotonic_ns()}:"
    one, two = free_port(), free_port()
    if how == "flag":
        extra: tuple[str, ...] = ("--redis", redis_url, "--redis-prefix", prefix)
        env: dict[str, str] = {}
    else:
        extra, env = (), {"A2ASERVE_REDIS": redis_url, "A2ASERVE_REDIS_PREFIX": prefix}
    first = serve("tutorial_agent:agent", "--port", str(one), *extra, env=env)
    second = serve("tutorial_agent:agent", "--port", str(two), *extra, env=env)
    first.banner()
    second.banner()
    asked = send(f"http://127.0.0.1:{one}", "hi")
    done = send(f"http://127.0.0.1:{two}", "Ada", taskId=str(asked["id"]))  # the other replica
    assert done["status"]["state"] == "TASK_STATE_COMPLETED"  # type: ignore[index]
    assert first.stop() == 0 and second.stop() == 0


# --- telemetry, gRPC ------------------------------------------------------------------------


@pytest.mark.parametrize("how", ["flag", "env"])
def test_otel_exports_spans(serve, how: str) -> None:
    port = free_port()
    env = {"OTEL_TRACES_EXPORTER": "console", "OTEL_METRICS_EXPORTER": "none"}
    if how == "flag":
        served = serve("tutorial_agent:agent", "--port", str(port), "--otel", env=env)
    else:
        served = serve("tutorial_agent:agent", "--port", str(port),
                       env={**env, "A2ASERVE_OTEL": "1"})  # fmt: skip
    served.banner()
    send(f"http://127.0.0.1:{port}", "hi")
    assert served.stop() == 0  # flushes the spans
    assert '"name": "SendMessage"' in served.output
    assert '"gen_ai.agent.name": "Agent"' in served.output


@pytest.mark.parametrize("how", ["flag", "env"])
def test_grpc_beside_http(serve, how: str) -> None:
    port, grpc_port = free_port(), free_port()
    if how == "flag":
        served = serve("tutorial_agent:agent", "--port", str(port), "--grpc-port", str(grpc_port))
    else:
        served = serve("tutorial_agent:agent", "--port", str(port),
                       env={"A2ASERVE_GRPC_PORT": str(grpc_port)})  # fmt: skip
    line = served.banner()
    assert f"gRPC on 127.0.0.1:{grpc_port}" in line
    card = httpx.get(f"http://127.0.0.1:{port}{CARD_PATH}", timeout=5).json()
    grpc = [i for i in card["supportedInterfaces"] if i["protocolBinding"] == "GRPC"]
    assert [i["url"] for i in grpc] == [f"127.0.0.1:{grpc_port}"]
    done = subprocess.run(
        [A2ASERVE, "send", f"http://127.0.0.1:{port}", "hi", "--binding", "grpc"],
        capture_output=True, text=True, timeout=30,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "Hello! What is your name?" in done.stdout
    assert served.stop() == 0


@pytest.mark.parametrize("how", ["flag", "env"])
def test_a_signed_card_and_its_jwks(serve, folder: Path, how: str) -> None:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec

    from a2a_core.signing import verify_agent_card

    key = ec.generate_private_key(ec.SECP256R1())
    pem = folder / "card-key.pem"
    pem.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.TraditionalOpenSSL,
            serialization.NoEncryption(),
        )
    )
    port = free_port()
    if how == "flag":
        served = serve("tutorial_agent:agent", "--port", str(port), "--signing-key", str(pem))
    else:
        served = serve("tutorial_agent:agent", "--port", str(port),
                       env={"A2ASERVE_SIGNING_KEY": str(pem)})  # fmt: skip
    served.banner()
    body = httpx.get(f"http://127.0.0.1:{port}{CARD_PATH}", timeout=5).content
    jwks = httpx.get(f"http://127.0.0.1:{port}/.well-known/jwks.json", timeout=5).json()
    assert served.stop() == 0
    [jwk] = jwks["keys"]
    assert "d" not in jwk  # the public key only
    assert verify_agent_card(body, {jwk["kid"]: key.public_key()}).name == "Agent"


# --- what is served: factories, servers, cards -----------------------------------------------


@pytest.mark.parametrize("adapter", ["starlette", "aiohttp"])
def test_a_factory_returning_a_server(serve, adapter: str) -> None:
    port = free_port()
    served = serve("tutorial_agent:make", "--port", str(port), "--adapter", adapter)
    served.banner()
    card = httpx.get(f"http://127.0.0.1:{port}{CARD_PATH}", timeout=5).json()
    assert {i["url"] for i in card["supportedInterfaces"]} == {
        "http://factory.test",
        "http://factory.test/",
    }  # the server's own base_url
    assert served.stop() == 0
    assert "cannot be served" not in served.output  # it has a base_url: no warning


@pytest.mark.parametrize("adapter", ["starlette", "aiohttp"])
def test_a_server_without_base_url_gets_the_public_url(serve, folder: Path, adapter: str) -> None:
    (folder / "bare.py").write_text(
        "from tutorial_agent import agent\n"
        "from a2a_core.cli.serve import card_for\n"
        "from a2a_core.server import A2AServer\n"
        "server = A2AServer(agent, card=card_for(agent))\n"
    )
    port = free_port()
    served = serve("bare:server", "--port", str(port), "--adapter", adapter)
    served.banner()
    card = httpx.get(f"http://127.0.0.1:{port}{CARD_PATH}", timeout=5).json()
    assert f"http://127.0.0.1:{port}" in {i["url"] for i in card["supportedInterfaces"]}
    assert served.stop() == 0
    assert "cannot be served" not in served.output  # the URL is put on every request


@pytest.mark.parametrize("how", ["flag", "env"])
def test_a_card_from_a_file(serve, folder: Path, how: str) -> None:
    card = {
        "name": "Greeter", "description": "Greets.", "version": "2.0.0",
        "supportedInterfaces": [], "capabilities": {"streaming": True},
        "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
        "skills": [{"id": "greet", "name": "Greet", "description": "Greets.", "tags": []}],
    }  # fmt: skip
    (folder / "card.json").write_text(json.dumps(card))
    port = free_port()
    if how == "flag":
        served = serve("tutorial_agent:agent", "--port", str(port), "--card", "card.json")
    else:
        served = serve("tutorial_agent:agent", "--port", str(port),
                       env={"A2ASERVE_CARD": "card.json"})  # fmt: skip
    assert "'Greeter'" in served.banner()
    got = httpx.get(f"http://127.0.0.1:{port}{CARD_PATH}", timeout=5).json()
    assert (got["name"], got["version"]) == ("Greeter", "2.0.0")
    assert served.stop() == 0


# --- mistakes -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("target", "env", "said"),
    [
        ("nowhere:agent", {}, "no module named 'nowhere'"),
        ("tutorial_agent:missing", {}, "module 'tutorial_agent' has no attribute 'missing'"),
        ("tutorial_agent:not_an_agent", {}, "tutorial_agent:not_an_agent is a int"),
        ("tutorial_agent", {}, "expected MODULE:ATTR"),
        (".tutorial_agent:agent", {}, "must be absolute"),
        ("tutorial_agent:agent", {"A2ASERVE_PORT": "99999"}, "must be a port number"),
        ("tutorial_agent:agent", {"A2ASERVE_PORT": "eighty"}, "A2ASERVE_PORT must be a whole"),
        ("tutorial_agent:agent", {"A2ASERVE_ADAPTER": "flask"}, "A2ASERVE_ADAPTER must be one"),
        ("tutorial_agent:make", {"A2ASERVE_SQL": "sqlite+aiosqlite:///x.db"}, "is an A2AServer"),
    ],
)
def test_a_mistake_is_one_line_and_exit_code_2(
    serve, target: str, env: dict[str, str], said: str
) -> None:
    served = serve(target, env={"A2ASERVE_PORT": str(free_port()), **env})
    assert served.wait(30) == 2
    assert served.stdout == []
    (line,) = served.stderr
    assert line.startswith("a2aserve serve: ") and said in line, line


@pytest.mark.parametrize("adapter", ["starlette", "aiohttp"])
def test_a_port_in_use_is_one_line_and_exit_code_1(serve, adapter: str) -> None:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        served = serve("tutorial_agent:agent", "--port", str(port), "--adapter", adapter)
        assert served.wait(30) == 1
    assert served.stdout == []
    assert served.stderr == [
        f"a2aserve serve: port 127.0.0.1:{port} is in use (choose another with --port)\n"
    ]


def _pem(key: object, password: bytes | None = None) -> bytes:
    from cryptography.hazmat.primitives import serialization

    encryption = (
        serialization.BestAvailableEncryption(password)
        if password
        else serialization.NoEncryption()
    )
    return key.private_bytes(  # type: ignore[attr-defined, no-any-return]
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, encryption
    )


def test_a_signing_key_that_cannot_be_used_is_one_line_and_exit_code_2(serve, folder: Path) -> None:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec

    key = ec.generate_private_key(ec.SECP256R1())
    public = key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    files = {
        "not-a-key.pem": b"hello\n",
        "public.pem": public,  # the wrong half
        "encrypted.pem": _pem(key, password=b"secret"),
    }
    for name, content in files.items():
        (folder / name).write_bytes(content)
    (folder / "a-folder.pem").mkdir()  # a path that cannot be read as a file
    said = {
        "missing.pem": "cannot read 'missing.pem': No such file or directory",
        "a-folder.pem": "cannot read 'a-folder.pem': Is a directory",
        **{name: f"{name!r} is not a private key this can sign with" for name in files},
    }
    for name, expected in said.items():
        served = serve("tutorial_agent:agent", "--port", str(free_port()), "--signing-key", name)
        assert served.wait(30) == 2, (name, served.output)
        assert served.stdout == []
        (line,) = served.stderr
        assert line.startswith("a2aserve serve: --signing-key: ") and expected in line, line
