"""Runtime (L2) tests run under every backend anyio supports (asyncio and trio), and on both
paths of the task writer: the in-memory default (immediate: no lock, no shield) and the
same in-memory parts seen through the general protocols only (`general_backend`), which is
the path networked backends take."""

from __future__ import annotations

import pytest

import a2a_core.server._server
from runtime.general_backend import GeneralPathBackend


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    """The event loop each ``@pytest.mark.anyio`` test runs on."""
    return str(request.param)


@pytest.fixture(autouse=True, params=["immediate", "general"])
def writer_path(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Which default backend an ``A2AServer`` built without ``backend=`` gets: the in-memory
    one, or the same seen through the general protocols only."""
    if request.param == "general":
        monkeypatch.setattr(a2a_core.server._server, "InMemoryBackend", GeneralPathBackend)
    return str(request.param)
