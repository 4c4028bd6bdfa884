"""The shell blocks of the README and docs/ that start a server are run, and so are the
commands shown against that server.

Each scenario below names the page, the block that starts the server (or the Python block
that is the server) and the blocks that talk to it. The server runs as the page says, on a
free port of 127.0.0.1 instead of 8000 (the port is the one thing rewritten), and the
client blocks run in bash with the same rewrite; their output is checked. A shell block that
starts a server and is in no scenario must be marked ``<!-- illustrative: why -->``.
"""

from __future__ import annotations

import json
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
STARTS_A_SERVER = re.compile(r"uvicorn\b|examples/\w+\.py|\bpython3?\s+\S+\.py|run_app")


@dataclass(frozen=True)
class Scenario:
    page: str
    #: Text of the block that starts the server (a shell block, or a Python file block).
    server: str
    #: How to start it: from the block and the port, the command and its working directory.
    command: Callable[[Block, int, Path], tuple[list[str], Path]]
    #: Where its card is, relative to http://127.0.0.1:PORT.
    card_path: str
    #: Text of each client block, with the check of that block's output.
    clients: tuple[tuple[str, Callable[[str], None]], ...]


def _find(page: str, text: str) -> Block:
    (found,) = [b for b in blocks(ROOT / page) if text in b.code]
    assert not found.illustrative, found.id
    return found


def _readme_echo(block: Block, port: int, scratch: Path) -> tuple[list[str], Path]:
    assert "uv run python examples/echo.py" in block.code
    return [sys.executable, "examples/echo.py", "--port", str(port)], ROOT


def _transport_server(block: Block, port: int, scratch: Path) -> tuple[list[str], Path]:
    (scratch / "echo_server.py").write_text(block.code.replace("8000", str(port)))
    return [sys.executable, "echo_server.py"], scratch


def _completed_hi(output: str) -> None:
    task = json.loads(output)["result"]["task"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    assert task["artifacts"][0]["parts"] == [{"text": "hi"}]


def _transport_replies(output: str) -> None:
    assert '"name":"Echo"' in output  # the card
    # The JSON-RPC reply, then the stream: a keep-alive comment and the message's event.
    assert output.count('"parts":[{"text":"echo: hi"}]') == 2, output
    assert ": keep-alive\n" in output
    assert "\nid: 1\ndata: {" in output


SCENARIOS = {
    "readme-echo": Scenario(
        page="README.md",
        server="examples/echo.py",
        command=_readme_echo,
        card_path="/.well-known/agent-card.json",
        clients=(("curl -s http://127.0.0.1:8000/ -H", _completed_hi),),
    ),
    "transport-stdlib": Scenario(
        page="docs/transport.md",
        server='"""A tiny A2A echo server on the standard library',
        command=_transport_server,
        card_path="/.well-known/agent-card.json",
        clients=(("curl -sN http://127.0.0.1:8000/message:stream", _transport_replies),),
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
        for _ in range(3):  # a free port taken by another process before ours bound it
            port = _free_port()
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
    name: str, serve: Callable[[Scenario], int]
) -> None:
    scenario = SCENARIOS[name]
    port = serve(scenario)
    for text, check in scenario.clients:
        block = _find(scenario.page, text)
        assert block.lang in SHELL
        script = block.code.replace("8000", str(port))
        done = subprocess.run(
            ["bash", "-euo", "pipefail", "-c", script],
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        )
        check(done.stdout)


def test_every_server_command_is_run_or_illustrative() -> None:
    covered = {_find(s.page, s.server).id for s in SCENARIOS.values()}
    for page in pages():
        for block in blocks(page):
            if block.lang in SHELL and STARTS_A_SERVER.search(block.code):
                assert block.illustrative or block.id in covered, block.id


def test_every_scenario_server_block_is_a_shell_or_file_block() -> None:
    for scenario in SCENARIOS.values():
        block = _find(scenario.page, scenario.server)
        assert block.lang in SHELL or block.lang in PYTHON
