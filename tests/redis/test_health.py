"""``A2AServer.check_health`` on the Redis backend: a ``PING`` says whether Redis answers,
and a Redis that is gone is reported down (503), never raised."""

from __future__ import annotations

import pytest
from redis_harness import PrivateRedis

from a2a_core.server import A2AServer, TaskContext
from a2a_core.types import AgentCapabilities, AgentCard, AgentSkill
from a2aserve_redis import RedisBackend

pytestmark = pytest.mark.anyio

CARD = AgentCard(
    name="Health",
    description="health",
    supported_interfaces=[],
    version="1.0.0",
    capabilities=AgentCapabilities(),
    default_input_modes=["text/plain"],
    default_output_modes=["text/plain"],
    skills=[AgentSkill(id="s", name="S", description="s", tags=["t"])],
)


async def echo(ctx: TaskContext) -> str:
    return ctx.text


async def test_redis_health_follows_redis(private_redis: PrivateRedis) -> None:
    server = A2AServer(echo, card=CARD, backend=RedisBackend(private_redis.url, prefix="h:"))
    async with server:
        up = await server.check_health()
        assert up.ok, up
        assert up.checks == {"server": "ok", "store": "ok", "event_log": "ok", "push_queue": "ok"}
        private_redis.kill()
        down = await server.check_health(timeout=5)
        assert not down.ok and down.status == 503
        assert down.checks["store"] == "down"
