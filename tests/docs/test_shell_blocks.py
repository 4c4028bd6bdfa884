"""The shell blocks of the README and docs/ that start a server are run, and so are the
commands shown against that server.

Each scenario below names the page, the block that starts the server (or the Python block
that is the server), the Python file block it serves where the page has several versions
of one file (the tutorial's ``app.py``), and the blocks that talk to it, each by how it
begins. The server runs as the page says, on a free port of 127.0.0.1 instead of 8000 (the
port is the one thing rewritten), and the client blocks run in bash with the same rewrite;
their output is checked. A shell block that
starts a server and is in no scenario must be marked ``<!-- illustrative: why -->``.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from helpers.doc_blocks import PYTHON, ROOT, SHELL, Block, blocks, pages

#: What starts a server in a shell block.
STARTS_A_SERVER = re.compile(
    r"^\s*(?:uv run\s+)?(?:uvicorn\s|hypercorn\s|gunicorn\s|a2aserve\s+serve\s|"
    r"python3?\s+(?:-m\s+uvicorn|\S+\.py))",
    re.MULTILINE,
)


@dataclass(frozen=True)
class Scenario:
    page: str
    #: How the block that starts the server begins (a shell block, or a Python file block).
    server: str
    #: How to start it: from the block and the port, the command and its working directory.
    command: Callable[[Block, int, Path], tuple[list[str], Path]]
    #: Where its card is, relative to http://127.0.0.1:PORT.
    card_path: str
    #: How each client block begins, with the check of what it printed (stdout, stderr).
    clients: tuple[tuple[str, Callable[[str, str], None]], ...]
    #: The Python file blocks to write first: name, and a text only that version has (the
    #: tutorial prints three versions of its ``app.py``).
    files: tuple[tuple[str, str], ...] = ()


def _find(page: str, begins: str) -> Block:
    (found,) = [b for b in blocks(ROOT / page) if b.code.startswith(begins)]
    assert not found.illustrative, found.id
    return found


def _file_block(page: str, name: str, text: str) -> Block:
    (found,) = [b for b in blocks(ROOT / page) if b.filename == name and text in b.code]
    return found


def _readme_echo(block: Block, port: int, scratch: Path) -> tuple[list[str], Path]:
    assert "uv run python examples/echo.py" in block.code
    return [sys.executable, "examples/echo.py", "--port", str(port)], ROOT


def _multi_turn_example(block: Block, port: int, scratch: Path) -> tuple[list[str], Path]:
    assert "uv run python examples/multi_turn.py" in block.code
    return [sys.executable, "examples/multi_turn.py", "--port", str(port)], ROOT


def _streaming_with_grpc(block: Block, port: int, scratch: Path) -> tuple[list[str], Path]:
    assert "uv run python examples/streaming.py --port 8000 --grpc-port 50051" in block.code
    grpc_port = str(_free_port())
    return [sys.executable, "examples/streaming.py", "--port", str(port), "--grpc-port",
            grpc_port], ROOT  # fmt: skip


def _over_grpc(output: str, errors: str) -> None:
    *words, status = output.splitlines()
    assert "".join(words) == "hello there"
    assert status.startswith("task ") and " completed (context " in status


def _uvicorn(module: str) -> Callable[[Block, int, Path], tuple[list[str], Path]]:
    """The block's ``uvicorn MODULE:app --host 127.0.0.1 --port 8000`` line, as it says."""

    def command(block: Block, port: int, scratch: Path) -> tuple[list[str], Path]:
        lines = [line.split("#")[0].split() for line in block.code.splitlines()]
        assert ["uvicorn", f"{module}:app", "--host", "127.0.0.1", "--port", "8000"] in lines
        return [sys.executable, "-m", "uvicorn", f"{module}:app", "--host", "127.0.0.1",
                "--port", str(port), "--log-level", "warning"], scratch  # fmt: skip

    return command


def _a2aserve_serve(block: Block, port: int, scratch: Path) -> tuple[list[str], Path]:
    """The block's ``a2aserve serve MODULE:ATTR --port 8000``, with this environment's
    console script."""
    (line,) = [line.split() for line in block.code.splitlines() if "a2aserve serve" in line]
    assert line[:2] == ["a2aserve", "serve"] and line[-2:] == ["--port", "8000"], line
    command = str(Path(sys.executable).with_name("a2aserve"))
    return [command, "serve", *line[2:-2], "--port", str(port), "--log-level", "warning"], scratch


def _transport_server(block: Block, port: int, scratch: Path) -> tuple[list[str], Path]:
    (scratch / "echo_server.py").write_text(block.code.replace("8000", str(port)))
    return [sys.executable, "echo_server.py"], scratch


def _completed_hi(output: str, errors: str) -> None:
    task = json.loads(output)["result"]["task"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    assert task["artifacts"][0]["parts"] == [{"text": "hi"}]


def _transport_replies(output: str, errors: str) -> None:
    assert '"name":"Echo"' in output  # the card
    # The JSON-RPC reply, then the stream: a keep-alive comment and the message's event.
    assert output.count('"parts":[{"text":"echo: hi"}]') == 2, output
    assert ": keep-alive\n" in output
    assert "\nid: 1\ndata: {" in output


def _tutorial_echo(output: str, errors: str) -> None:
    assert '"name":"Greeter"' in output  # the card, then the task
    assert '"state":"TASK_STATE_COMPLETED"' in output
    assert '"parts":[{"text":"You said: hi"}]' in output


def _chunks(output: str) -> list[str]:
    events = [json.loads(line[6:]) for line in output.splitlines() if line.startswith("data: ")]
    assert events[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"
    updates = [e["artifactUpdate"] for e in events if "artifactUpdate" in e]
    assert [u.get("append", False) for u in updates] == [False] + [True] * (len(updates) - 1)
    return [u["artifact"]["parts"][0]["text"] for u in updates]


def _tutorial_stream(output: str, errors: str) -> None:
    assert _chunks(output) == ["You", " said:", " hi"]


def _tutorial_turns(output: str, errors: str) -> None:
    assert errors == "Hello! What is your name?\n"
    assert _chunks(output) == ["Nice", " to", " meet", " you,", " Ada!"]


def _cli_turns(output: str, errors: str) -> None:
    greeted, status, *streamed, failed = output.splitlines()
    assert greeted == "Nice to meet you, Ada!"
    assert status.startswith("task ") and " completed (context " in status
    assert streamed[0].startswith("task ") and streamed[0].endswith(" submitted")
    assert streamed[-1] == "[input-required] Hello! What is your name?"
    assert failed == "exit 1"
    assert errors == "error: TASK_NOT_FOUND -32001: Task not found\n"


def _tutorial_cli(output: str, errors: str) -> None:
    question, status = output.splitlines()
    assert question == "Hello! What is your name?"
    assert status.startswith("task ") and " input-required (context " in status


def _tutorial_ask(output: str, errors: str) -> None:
    assert output == (
        "Hello! What is your name?\nNice to meet you, Ada!\n5 chunks: Nice to meet you, Ada!\n"
    )


def _echoed_hi(output: str, errors: str) -> None:
    reply, status = output.splitlines()
    assert reply == "hi"
    assert status.startswith("task ") and " completed (context " in status


def _served_turn(output: str, errors: str) -> None:
    question, status = output.splitlines()
    assert question == "Hello! What is your name?"
    assert status.startswith("task ") and " input-required (context " in status


def _greeted(output: str, errors: str) -> None:
    assert output == "Hello! What is your name?\nNice to meet you, Ada!\n"


SCENARIOS = {
    "readme-echo": Scenario(
        page="README.md",
        server="uv run python examples/echo.py",
        command=_readme_echo,
        card_path="/.well-known/agent-card.json",
        clients=(("curl -s http://127.0.0.1:8000/ -H", _completed_hi),),
    ),
    "transport-stdlib": Scenario(
        page="docs/transport.md",
        server='"""A tiny A2A echo server on the standard library',
        command=_transport_server,
        card_path="/.well-known/agent-card.json",
        clients=(("curl -s http://127.0.0.1:8000/.well-known", _transport_replies),),
    ),
    "tutorial-echo": Scenario(
        page="docs/tutorial.md",
        files=(("app.py", "async def echo"),),
        server="uvicorn app:app",
        command=_uvicorn("app"),
        card_path="/a2a/.well-known/agent-card.json",
        clients=(("curl -s http://127.0.0.1:8000/a2a/.well-known", _tutorial_echo),),
    ),
    "tutorial-streaming": Scenario(
        page="docs/tutorial.md",
        files=(("app.py", "async def spell"),),
        server="uvicorn app:app",
        command=_uvicorn("app"),
        card_path="/a2a/.well-known/agent-card.json",
        clients=(("curl -sN http://127.0.0.1:8000/a2a/message:stream", _tutorial_stream),),
    ),
    "tutorial-multi-turn": Scenario(
        page="docs/tutorial.md",
        files=(("app.py", "async def greeter"), ("ask.py", "A2AClient.connect")),
        server="uvicorn app:app",
        command=_uvicorn("app"),
        card_path="/a2a/.well-known/agent-card.json",
        clients=(
            ("task=$(curl -s http://127.0.0.1:8000/a2a/message:send", _tutorial_turns),
            ("a2aserve send http://127.0.0.1:8000/a2a hi", _tutorial_cli),
            ("python ask.py http://127.0.0.1:8000/a2a", _tutorial_ask),
        ),
    ),
    "readme-a2aserve-serve": Scenario(
        page="README.md",
        files=(("agent.py", "async def echo"),),
        server="a2aserve serve agent:echo",
        command=_a2aserve_serve,
        card_path="/.well-known/agent-card.json",
        clients=(("a2aserve send http://127.0.0.1:8000 hi", _echoed_hi),),
    ),
    "tutorial-a2aserve-serve": Scenario(
        page="docs/tutorial.md",
        files=(("tutorial_agent.py", "async def agent"),),
        server="a2aserve serve tutorial_agent:agent",
        command=_a2aserve_serve,
        card_path="/.well-known/agent-card.json",
        clients=(("a2aserve send http://127.0.0.1:8000 hi", _served_turn),),
    ),
    # The command line against the multi-turn example.
    "client-cli": Scenario(
        page="docs/client.md",
        server="uv run python examples/multi_turn.py",
        command=_multi_turn_example,
        card_path="/.well-known/agent-card.json",
        clients=(("a2aserve send http://127.0.0.1:8000 hi -o json", _cli_turns),),
    ),
    # gRPC beside HTTP, called by the command line over gRPC.
    "grpc-streaming": Scenario(
        page="docs/grpc.md",
        server="uv run python examples/streaming.py --port 8000 --grpc-port",
        command=_streaming_with_grpc,
        card_path="/.well-known/agent-card.json",
        clients=(('a2aserve send http://127.0.0.1:8000 "hello there"', _over_grpc),),
    ),
    # The same agent on the official SDK and on ours, driven by the SDK's client.
    "migrating-sdk": Scenario(
        page="docs/migrating-from-a2a-sdk.md",
        files=(("sdk_greeter.py", "class Greeter"), ("client.py", "ClientFactory")),
        server="uvicorn sdk_greeter:app",
        command=_uvicorn("sdk_greeter"),
        card_path="/a2a/.well-known/agent-card.json",
        clients=(("python client.py http://127.0.0.1:8000/a2a", _greeted),),
    ),
    "migrating-ours": Scenario(
        page="docs/migrating-from-a2a-sdk.md",
        files=(("greeter.py", "async def greeter"), ("client.py", "ClientFactory")),
        server="uvicorn sdk_greeter:app",
        command=_uvicorn("greeter"),
        card_path="/a2a/.well-known/agent-card.json",
        clients=(("python client.py http://127.0.0.1:8000/a2a", _greeted),),
    ),
}


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[Callable[[Scenario], int]]:
    """Starts a scenario's server; every one started is stopped at the end."""
    processes: list[subprocess.Popen[bytes]] = []

    def start(scenario: Scenario) -> int:
        block = _find(scenario.page, scenario.server)
        files = [(name, _file_block(scenario.page, name, text)) for name, text in scenario.files]
        for _ in range(3):  # a free port taken by another process before ours bound it
            port = _free_port()
            for name, file in files:
                (tmp_path / name).write_text(file.code.replace("8000", str(port)))
            command, cwd = scenario.command(block, port, tmp_path)
            process = subprocess.Popen(
                command, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
            )
            processes.append(process)
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline and process.poll() is None:
                try:
                    url = f"http://127.0.0.1:{port}{scenario.card_path}"
                    if httpx.get(url, timeout=2).status_code == 200:
                        return port
                except httpx.TransportError:
                    time.sleep(0.1)
        raise AssertionError(f"{block.id}: the server did not start")

    yield start
    for process in processes:
        process.terminate()
    for process in processes:
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@pytest.mark.skipif(shutil.which("curl") is None, reason="the shell blocks use curl")
@pytest.mark.parametrize("name", SCENARIOS)
def test_the_commands_shown_run_against_the_server(
    name: str, serve: Callable[[Scenario], int], tmp_path: Path
) -> None:
    scenario = SCENARIOS[name]
    port = serve(scenario)
    for text, check in scenario.clients:
        block = _find(scenario.page, text)
        assert block.lang in SHELL
        script = block.code.replace("8000", str(port))
        done = subprocess.run(
            ["bash", "-euo", "pipefail", "-c", script],
            cwd=tmp_path,  # beside the page's files
            # `python` is the interpreter of this environment, as in the reader's.
            env={**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"},
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        )
        check(done.stdout, done.stderr)


def test_every_server_command_is_run_or_illustrative() -> None:
    covered = {_find(s.page, s.server).id for s in SCENARIOS.values()} | {
        _find(s.page, begins).id for s in SCENARIOS.values() for begins, _ in s.clients
    }
    for page in pages():
        for block in blocks(page):
            if block.lang in SHELL and STARTS_A_SERVER.search(block.code):
                assert block.illustrative or block.id in covered, block.id


def test_every_scenario_server_block_is_a_shell_or_file_block() -> None:
    for scenario in SCENARIOS.values():
        block = _find(scenario.page, scenario.server)
        assert block.lang in SHELL or block.lang in PYTHON
