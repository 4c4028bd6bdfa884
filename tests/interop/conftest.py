"""Interop suites run on asyncio only: uvicorn and the official client are asyncio-bound."""

from __future__ import annotations

import pytest


@pytest.fixture
def anyio_backend() -> str:
    """The event loop each ``@pytest.mark.anyio`` test runs on."""
    return "asyncio"
