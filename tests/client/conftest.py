"""The client suites run on asyncio against uvicorn and aiohttp (trio: see test_trio.py)."""

from __future__ import annotations

import pytest


@pytest.fixture
def anyio_backend() -> str:
    """The event loop each ``@pytest.mark.anyio`` test runs on."""
    return "asyncio"
