"""Runtime (L2) tests run under every backend anyio supports: asyncio and trio."""

from __future__ import annotations

import pytest


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    """The event loop each ``@pytest.mark.anyio`` test runs on."""
    return str(request.param)
