"""Install the built wheels in DIST into a fresh virtual environment and run the quick starts.

    uv run python .ci/check_wheels.py dist

What a user gets from ``pip install``: a new environment (``uv venv``) with only the wheels
of DIST and their dependencies from the index (no workspace, no editable install), installed
first with the README's and the tutorial's own install commands (``pip install dist/...``,
run by bash and pip as printed), then every other package. Then, in that environment, from
a scratch folder:

- every package imports from the environment, and its ``__version__`` is its metadata's;
- the README's quick starts, taken from README.md as they are printed there (``agent.py``,
  ``asgi_app.py``, ``starlette_app.py``, ``fastapi_app.py``, ``aiohttp_app.py``), each served
  on 127.0.0.1 (uvicorn, or the aiohttp script itself) on a free port: the card is fetched
  from ``<base_url>/.well-known/agent-card.json`` and a message sent over JSON-RPC to the URL
  the card publishes gives a completed task whose artifact is the text sent, and the wheel's
  console script, ``a2aserve send``, gets the same reply;
- ``a2aserve serve`` as the README runs it (its ``agent.py``): the line with the URL once it
  listens, a message answered, exit code 0 after SIGTERM;
- the SQL package's migrations, which ship as data files, create a schema on SQLite
  (``python -m a2a_sql upgrade``) that ``check_schema`` accepts;
- gRPC: an agent served by ``a2a_grpc.GrpcServer`` on 127.0.0.1 answers ``A2AClient`` over
  gRPC (the core's generated schema table and the client's transport, as shipped);
- the bridges: each extra of ``a2aserve-bridges`` (``sdk``, ``pydantic-ai``, ``langgraph``)
  installed alone with the core, in an environment of its own, where an agent of that
  framework answers a message through its bridge.

The uv command is ``$UV`` (default ``uv``). Stops every server it starts; exits 1 on the
first failure.
"""

from __future__ import annotations

import os
import re
import select
import shlex
import signal
import socket
import subprocess
import sys
import tempfile
import time
import tomllib
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
QUICK_STARTS = ("asgi_app.py", "starlette_app.py", "fastapi_app.py", "aiohttp_app.py")
BLOCK = re.compile(r"```python\n# (\w+\.py)\n(.*?)```", re.S)


def _packages() -> list[dict[str, object]]:
    found = []
    for path in sorted((ROOT / "packages").glob("*/pyproject.toml")):
        data = tomllib.loads(path.read_text())
        found.append(
            {
                "name": data["project"]["name"],
                "version": data["project"]["version"],
                "module": data["tool"]["uv"]["build-backend"]["module-name"],
            }
        )
    return found


def _wheel(dist: Path, name: str, version: str) -> Path:
    normalized = re.sub(r"[-_.]+", "_", name).lower()
    (wheel,) = dist.glob(f"{normalized}-{version}-*.whl")
    return wheel


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


#: A page's command that installs the built wheels: ``pip install dist/...whl ...``.
PIP_INSTALL = re.compile(r"^pip install dist/.*$", re.M)
#: And the one that builds them.
BUILD = "uv build --all-packages --out-dir dist"


def _documented_install(page: str) -> str:
    """``page``'s install command, as printed (``dist`` being the folder the wheels were
    built into); the page must build them as CI does."""
    text = (ROOT / page).read_text()
    if BUILD not in text:
        raise SystemExit(f"{page}: no {BUILD!r}: the install instructions changed")
    (line,) = PIP_INSTALL.findall(text)
    return str(line)


def _install(uv: list[str], dist: Path, venv: Path) -> Path:
    """The wheels installed as the README and the tutorial say (their own words, ``dist``
    being DIST), then the other packages with the extras the checks below use."""
    # --seed: pip in the environment, to run the pages' pip commands with pip itself.
    subprocess.run(
        [*uv, "venv", "--quiet", "--seed", "--python", sys.executable, str(venv)], check=True
    )
    python = venv / "bin" / "python"
    pip = [*uv, "pip", "install", "--quiet", "--python", str(python)]
    # The pages' commands run in bash, as printed, from a folder whose `dist` is DIST.
    here = venv.parent / "install"
    here.mkdir()
    (here / "dist").symlink_to(dist)
    path = f"{venv / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}"
    for page in ("README.md", "docs/tutorial.md"):  # the tutorial adds FastAPI
        command = _documented_install(page)
        subprocess.run(
            ["bash", "-euo", "pipefail", "-c", command + " --quiet --disable-pip-version-check"],
            cwd=here,
            env={**_env(), "PATH": path, "VIRTUAL_ENV": str(venv)},
            check=True,
        )
        print(f"{page}: {command}: installed")
    extras = {"a2a_starlette": "[uvicorn]", "a2a_sql": "[sqlite]", "a2a_core": "[signing,crypto]"}
    requirements = [
        f"{p['name']}{extras.get(str(p['module']), '')} @ "
        f"{_wheel(dist, str(p['name']), str(p['version'])).as_uri()}"
        for p in _packages()
    ]
    subprocess.run([*pip, *requirements], check=True)
    return python


def _check_imports(python: Path, venv: Path, scratch: Path) -> None:
    script = "\n".join(
        [
            "import importlib, importlib.metadata, sys",
            f"venv = {str(venv.resolve())!r}",
            f"for name, module in {[(p['name'], p['module']) for p in _packages()]!r}:",
            "    imported = importlib.import_module(module)",
            "    assert imported.__file__.startswith(venv), (module, imported.__file__)",
            "    assert imported.__version__ == importlib.metadata.version(name), module",
            "    print(f'{name} {imported.__version__}: import {module} from the environment')",
        ]
    )
    subprocess.run([str(python), "-c", script], cwd=scratch, check=True, env=_env())


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def _serve_and_talk(python: Path, scratch: Path, app: str) -> None:
    """Serve one quick start and talk to it; a port taken before the server bound is retried."""
    for attempt in range(3):
        port = _free_port()
        for name, code in BLOCK.findall((ROOT / "README.md").read_text()):
            (scratch / name).write_text(code.replace("8000", str(port)))
        if app == "aiohttp_app.py":
            command = [str(python), app]
        else:
            module = app.removesuffix(".py")
            command = [str(python), "-m", "uvicorn", f"{module}:app", "--host", "127.0.0.1",
                       "--port", str(port), "--log-level", "warning"]  # fmt: skip
        base = f"http://127.0.0.1:{port}" + ("" if app == "asgi_app.py" else "/a2a")
        process = subprocess.Popen(command, cwd=scratch, env=_env())
        try:
            card = _wait_for_card(process, base)
            if card is None:
                if attempt < 2:
                    continue
                raise SystemExit(f"{app}: the server did not serve its card at {base}")
            _send_message(app, card)
            _cli_send(python, scratch, app, base)
            return
        finally:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def _wait_for_card(process: subprocess.Popen[bytes], base: str) -> dict[str, object] | None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and process.poll() is None:
        try:
            reply = httpx.get(f"{base}/.well-known/agent-card.json", timeout=2)
        except httpx.TransportError:
            time.sleep(0.1)
            continue
        reply.raise_for_status()
        card: dict[str, object] = reply.json()
        return card
    return None


def _send_message(app: str, card: dict[str, object]) -> None:
    interfaces = card["supportedInterfaces"]
    assert isinstance(interfaces, list)
    # The first JSON-RPC interface of protocol version 1.0 (the card lists v0.3's too).
    url = next(
        i["url"]
        for i in interfaces
        if i["protocolBinding"] == "JSONRPC" and i["protocolVersion"].startswith("1.")
    )
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "SendMessage",
        "params": {"message": {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "hi"}]}},
    }
    reply = httpx.post(url, json=body, headers={"A2A-Version": "1.0"}, timeout=10)
    reply.raise_for_status()
    task = reply.json()["result"]["task"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED", task
    assert task["artifacts"][0]["parts"] == [{"text": "hi"}], task
    print(f"{app}: card {card['name']!r} at {url}, SendMessage -> completed, artifact 'hi'")


def _cli_send(python: Path, scratch: Path, app: str, base: str) -> None:
    """The wheel's console script, `a2aserve`, calls the same agent."""
    done = subprocess.run(
        [str(python.with_name("a2aserve")), "send", base, "hi"],
        cwd=scratch,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    if done.returncode != 0 or done.stdout.splitlines()[:1] != ["hi"]:
        raise SystemExit(f"{app}: a2aserve send failed ({done.returncode}): {done.stderr}")
    print(f"{app}: a2aserve send {base} hi -> {done.stdout.splitlines()[-1]}")


def _check_serve(python: Path, scratch: Path) -> None:
    """``a2aserve serve``, as the README runs it, from the wheels: the line with the URL once
    it listens, a message answered, exit code 0 after SIGTERM."""
    for name, code in BLOCK.findall((ROOT / "README.md").read_text()):
        if name == "agent.py":
            (scratch / name).write_text(code)
    (line,) = [
        shlex.split(text, comments=True)
        for text in (ROOT / "README.md").read_text().splitlines()
        if text.startswith("a2aserve serve ")
    ]
    port = _free_port()
    arguments = line[1:]  # after "a2aserve"; the README's port, 8000, becomes a free one
    arguments[arguments.index("--port") + 1] = str(port)
    # With the developer console: its files come from the core's wheel (package data).
    if "--console" not in arguments:
        arguments.append("--console")
    log = scratch / "a2aserve-serve.log"
    with log.open("w") as errors:
        process = subprocess.Popen(
            [str(python.with_name("a2aserve")), *arguments], cwd=scratch, env=_env(),
            stdout=subprocess.PIPE, stderr=errors, text=True,
        )  # fmt: skip
    try:
        assert process.stdout is not None
        # The first line, printed once the server accepts connections (30 s at most).
        ready, _, _ = select.select([process.stdout], [], [], 30)
        banner = process.stdout.readline() if ready else ""
        if f"http://127.0.0.1:{port}" not in banner:
            raise SystemExit(f"a2aserve serve did not start: {banner!r}\n{log.read_text()}")
        _cli_send(python, scratch, "a2aserve serve", f"http://127.0.0.1:{port}")
        console = f"http://127.0.0.1:{port}/a2a-console/"
        announced = process.stdout.readline()
        if announced.strip() != f"Developer console at {console}":
            raise SystemExit(f"a2aserve serve --console did not say where: {announced!r}")
        for name in ("", "console.js", "console.css", "icon.svg"):
            reply = httpx.get(console + name, timeout=10)
            if reply.status_code != 200 or not reply.content:
                said = f"{name or 'page'}: {reply.status_code}"
                raise SystemExit(f"the console's file is not served: {said}")
        print("a2aserve serve --console: the console's four files are served from the wheel")
        process.send_signal(signal.SIGTERM)
        code = process.wait(timeout=20)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        if process.stdout is not None:
            process.stdout.close()
    if code != 0:
        raise SystemExit(f"a2aserve serve exited with {code} after SIGTERM, not 0")
    print(f"a2aserve serve {' '.join(line[2:])}: served, answered, exit code 0 on SIGTERM")


def _check_migrations(python: Path, scratch: Path) -> None:
    url = f"sqlite+aiosqlite:///{scratch / 'tasks.db'}"
    subprocess.run([str(python), "-m", "a2a_sql", "upgrade", url], cwd=scratch, check=True,
                   env=_env())  # fmt: skip
    script = (
        "import asyncio, sys\n"
        "from sqlalchemy.ext.asyncio import create_async_engine\n"
        "from a2a_sql import check_schema\n"
        "async def main():\n"
        "    engine = create_async_engine(sys.argv[1])\n"
        "    try:\n"
        "        await check_schema(engine, 'a2a_', create=False)\n"
        "    finally:\n"
        "        await engine.dispose()\n"
        "asyncio.run(main())\n"
        "print('a2a_sql: the shipped migrations built a schema check_schema accepts')\n"
    )
    subprocess.run([str(python), "-c", script, url], cwd=scratch, check=True, env=_env())


_GRPC_SCRIPT = """
import asyncio

from a2a_core.client import A2AClient, Endpoint
from a2a_core.server import A2AServer
from a2a_core.types import AgentCapabilities, AgentCard
from a2a_grpc import GrpcServer


async def echo(ctx):
    return ctx.text


async def main():
    card = AgentCard(name="Echo", description="Echoes.", supported_interfaces=[],
                     version="1.0.0", capabilities=AgentCapabilities(streaming=True),
                     default_input_modes=["text/plain"], default_output_modes=["text/plain"],
                     skills=[])
    server = A2AServer(echo, card=card, base_url="http://127.0.0.1")
    async with GrpcServer(server) as grpc_server:
        async with A2AClient(Endpoint(grpc_server.address, "grpc", "1.0")) as client:
            task = await client.send("hi over grpc")
            events = [r async for r in client.stream("streamed")]
    assert task.artifacts[0].parts[0].text == "hi over grpc", task
    assert events[-1].last, events
    print(f"a2a_grpc: SendMessage and a stream over gRPC at {grpc_server.address}")


asyncio.run(main())
"""


def _check_grpc(python: Path, scratch: Path) -> None:
    subprocess.run([str(python), "-c", _GRPC_SCRIPT], cwd=scratch, check=True, env=_env(),
                   timeout=60)  # fmt: skip


#: What drives each bridge: an A2AServer of the agent given, asked one message over
#: JSON-RPC through its sans-IO entry point (no adapter is installed beside an extra).
_BRIDGE_DRIVER = """
import asyncio, json
from a2a_core.http import Headers, HttpRequest
from a2a_core.server import A2AServer


def ask(agent, card, text):
    async def main():
        server = A2AServer(agent, card=card, base_url="http://127.0.0.1")
        message = {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": text}]}
        body = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": message}}
        headers = Headers([("content-type", "application/json"), ("a2a-version", "1.0")])
        request = HttpRequest("POST", "/", headers=headers, body=json.dumps(body).encode())
        async with server:
            reply = await server.handle(request)
        task = json.loads(reply.body)["result"]["task"]
        assert task["status"]["state"] == "TASK_STATE_COMPLETED", task
        return "".join(p["text"] for a in task["artifacts"] for p in a["parts"])

    return asyncio.run(main())
"""

_BRIDGE_SCRIPTS = {
    "sdk": """
from a2a.server.agent_execution import AgentExecutor
from a2a.server.tasks import TaskUpdater
from a2a.types import Part
from a2a_bridges.sdk import card, from_executor


class Echo(AgentExecutor):
    async def execute(self, context, event_queue):
        updater = TaskUpdater(event_queue, context.task_id, context.context_id)
        await updater.add_artifact([Part(text=context.get_user_input())])
        await updater.complete()

    async def cancel(self, context, event_queue):
        pass


assert ask(from_executor(Echo()), card("Echo", "Echoes."), "hi sdk") == "hi sdk"
""",
    "pydantic-ai": """
from pydantic_ai import Agent
from pydantic_ai.models.test import TestModel
from a2a_bridges.pydantic_ai import card, from_agent

agent = Agent(TestModel(custom_output_text="hi pydantic-ai"), name="echo")
assert ask(from_agent(agent), card(agent), "hello") == "hi pydantic-ai"
""",
    "langgraph": """
from langchain_core.messages import AIMessage
from langgraph.checkpoint.memory import MemorySaver
from langgraph.graph import START, MessagesState, StateGraph
from a2a_bridges.langgraph import card, from_graph


def answer(state):
    return {"messages": [AIMessage(content="hi " + state["messages"][-1].content)]}


builder = StateGraph(MessagesState)
builder.add_node("answer", answer)
builder.add_edge(START, "answer")
graph = builder.compile(checkpointer=MemorySaver())
assert ask(from_graph(graph), card(graph), "langgraph") == "hi langgraph"
""",
}


def _check_bridges(uv: list[str], dist: Path, tmp: Path, scratch: Path) -> None:
    core = next(p for p in _packages() if p["module"] == "a2a_core")
    bridges = next(p for p in _packages() if p["module"] == "a2a_bridges")
    core_wheel = _wheel(dist, str(core["name"]), str(core["version"])).as_uri()
    bridges_wheel = _wheel(dist, str(bridges["name"]), str(bridges["version"])).as_uri()
    for extra, script in _BRIDGE_SCRIPTS.items():
        venv = tmp / f"bridges-{extra}"
        subprocess.run([*uv, "venv", "--quiet", "--python", sys.executable, str(venv)],
                       check=True)  # fmt: skip
        python = venv / "bin" / "python"
        requirements = [f"{core['name']} @ {core_wheel}",
                        f"{bridges['name']}[{extra}] @ {bridges_wheel}"]  # fmt: skip
        subprocess.run(
            [*uv, "pip", "install", "--quiet", "--python", str(python), *requirements],
            check=True,
        )
        subprocess.run([str(python), "-c", _BRIDGE_DRIVER + script], cwd=scratch, check=True,
                       env=_env(), timeout=120)  # fmt: skip
        print(f"a2a_bridges[{extra}]: installed alone, its agent answered through the bridge")


def main() -> int:
    dist = Path(sys.argv[1] if len(sys.argv) > 1 else "dist").resolve()
    uv = shlex.split(os.environ.get("UV", "uv"))
    with tempfile.TemporaryDirectory(prefix="a2a-wheels-") as tmp:
        venv = Path(tmp) / "venv"
        scratch = Path(tmp) / "scratch"
        scratch.mkdir()
        python = _install(uv, dist, venv)
        _check_imports(python, venv, scratch)
        for app in QUICK_STARTS:
            _serve_and_talk(python, scratch, app)
        _check_serve(python, scratch)
        _check_migrations(python, scratch)
        _check_grpc(python, scratch)
        _check_bridges(uv, dist, Path(tmp), scratch)
    return 0


if __name__ == "__main__":
    sys.exit(main())
