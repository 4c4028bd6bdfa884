"""Fixtures of the Redis backend tests: the machine's Redis, key prefixes, a private Redis.

The tests run against a real Redis. ``A2A_TEST_REDIS_URL`` names the shared one (CI sets it
to ``redis://127.0.0.1:6379/15`` when a Redis answers there); without it every test here
skips, saying how to run them. Each test gets its own key prefix and deletes its keys
afterwards, so tests can share the database (and run beside anything else using it).

Tests that stop, restart or kill Redis start a private ``redis-server`` on a free port
instead (:class:`redis_harness.PrivateRedis`), which needs the ``redis-server`` binary.
"""

from __future__ import annotations

import os
import shutil
import sys
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from redis.asyncio import Redis

sys.path.insert(0, str(Path(__file__).parent))  # the harness module beside this file

from redis_harness import PrivateRedis, delete_prefix

ENV = "A2A_TEST_REDIS_URL"
HOW = (
    f"Redis tests need a Redis: set {ENV}=redis://127.0.0.1:6379/15 (a database they may "
    "write to; each test uses its own key prefix and deletes its keys)"
)


@pytest.fixture
def anyio_backend() -> str:
    """redis-py's client runs on asyncio only."""
    return "asyncio"


@pytest.fixture(scope="session")
def redis_url() -> str:
    """The shared Redis the tests use (skips without one)."""
    url = os.environ.get(ENV)
    if not url:
        pytest.skip(HOW)
    return url


@pytest.fixture
def prefix(redis_url: str) -> Iterator[str]:
    """A key prefix of this test's own; its keys are deleted afterwards."""
    value = f"a2a-test:{uuid.uuid4().hex[:12]}:"
    yield value
    delete_prefix(redis_url, value)


@pytest.fixture
async def redis(redis_url: str) -> AsyncIterator[Redis]:
    """A client of the shared Redis."""
    client = Redis.from_url(redis_url)
    try:
        yield client
    finally:
        await client.aclose()


@pytest.fixture
def private_redis(tmp_path: Path) -> Iterator[PrivateRedis]:
    """A redis-server of this test's own, on a free port, that the test may stop or kill."""
    if os.environ.get(ENV) is None:
        pytest.skip(HOW)
    if shutil.which("redis-server") is None:
        pytest.skip("the redis-server binary is needed for the stop/restart tests")
    server = PrivateRedis(tmp_path)
    server.start()
    try:
        yield server
    finally:
        server.kill()
