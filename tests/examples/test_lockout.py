"""One client cannot lock the others out of an example server (its default limits).

Each example runs as its own process on 127.0.0.1 with the settings a user gets
(`a2a_starlette.limits`, `StreamOptions`); a hostile client, in a process of its own at
127.0.0.2, holds 1,100 idle connections, then 1,000 that send their head a byte at a time
(slowloris), then 1,000 SSE streams it never reads, each opened again as soon as the server
closes it. Meanwhile a fresh client at 127.0.0.3 calls GetTask: at least 99 % of its calls
must be answered with the task (before the per-client limits, uvicorn's server-wide limit
of 1,000 connections answered every one of them with a 503).
"""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from helpers.hostile import Mode, can_bind_loopback_aliases, fresh_client_calls, hogging
from helpers.processes import ServerProcess

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(
        not can_bind_loopback_aliases(), reason="127.0.0.2 and 127.0.0.3 are not usable here"
    ),
]

EXAMPLE = Path(__file__).parents[2] / "examples" / "multi_turn.py"
ATTACKS: list[tuple[Mode, int]] = [("idle", 1100), ("slowloris", 1000), ("streams", 1000)]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.parametrize("adapter", ["starlette", "aiohttp"])
async def test_one_client_holding_connections_does_not_lock_out_another(
    adapter: str, tmp_path: Path
) -> None:
    server = ServerProcess(EXAMPLE, "--adapter", adapter, log=tmp_path / "server.log")
    try:
        server.wait_ready()
        async with httpx.AsyncClient() as client:
            reply = await client.post(
                server.url + "/",
                json={
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": "SendMessage",
                    "params": {
                        "message": {
                            "messageId": "m",
                            "role": "ROLE_USER",
                            "parts": [{"text": "hi"}],
                        }
                    },
                },
                headers={"A2A-Version": "1.0"},
            )
        task_id = reply.json()["result"]["task"]["id"]  # input-required: it stays open
        outcomes = {}
        for mode, count in ATTACKS:
            async with hogging(server.url, mode, count, task_id=task_id) as hog:
                served, failed = await fresh_client_calls(server.url, task_id, seconds=3)
            outcomes[mode] = (served, failed, hog.opened)
        log = server.output()
    finally:
        server.stop()
    for mode, count in ATTACKS:
        served, failed, opened = outcomes[mode]
        assert opened >= count, (mode, outcomes)  # the attack did happen
        assert served > 0 and served / (served + failed) >= 0.99, (mode, outcomes)
    assert "Traceback" not in log
