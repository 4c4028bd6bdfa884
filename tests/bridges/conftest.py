"""The bridges' suites run on asyncio only: the frameworks and the official client are
asyncio-bound."""

from __future__ import annotations

import pytest

pytest.register_assert_rewrite("bridges.harness")


@pytest.fixture
def anyio_backend() -> str:
    """The event loop each ``@pytest.mark.anyio`` test runs on."""
    return "asyncio"


@pytest.fixture(params=["starlette", "aiohttp"])
def adapter(request: pytest.FixtureRequest) -> str:
    """Each bridge is served by both adapters."""
    return str(request.param)
