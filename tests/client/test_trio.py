"""A2AClient under trio: the echo example (in a subprocess: uvicorn is asyncio's) called with
every kind of operation from a trio event loop."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from a2a_core.client import A2AClient, AgentError
from a2a_core.types import Message, TaskState
from helpers.processes import ServerProcess

pytestmark = pytest.mark.anyio
EXAMPLES = Path(__file__).parents[2] / "examples"


@pytest.fixture
def anyio_backend() -> str:
    return "trio"


@pytest.fixture(scope="module")
def echo_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    log = tmp_path_factory.mktemp("trio") / "echo.log"
    server = ServerProcess(
        EXAMPLES / "echo.py", "--adapter", "starlette", "--host", "127.0.0.1", log=log
    )
    try:
        server.wait_ready()
        yield server.url
    finally:
        server.stop()


async def test_the_client_runs_under_trio(echo_url: str) -> None:
    async with await A2AClient.connect(echo_url) as client:
        task = await client.send("hello from trio")
        assert not isinstance(task, Message)
        assert task.status.state is TaskState.COMPLETED
        events = [received async for received in client.stream("streamed")]
        assert events[-1].last
        assert (await client.get_task(task.id)).id == task.id
        with pytest.raises(AgentError):
            await client.get_task("no-such-task")
