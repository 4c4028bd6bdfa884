"""Fixtures of the adapter contract suite (the harness itself lives in ``contract.py``).

``harness`` is parametrized over the adapters, each served at the root of its server;
``mounted`` over every way of mounting each adapter under ``/a2a``; ``anywhere`` over both.
Every test body uses only :class:`adapters.contract.Live`, so it runs unchanged on all.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from adapters.contract import MOUNTED_DEPLOYMENTS, ROOT_DEPLOYMENTS, Harness


@pytest.fixture
def anyio_backend() -> str:
    """aiohttp runs on asyncio only, so the whole suite does."""
    return "asyncio"


def _harness(request: pytest.FixtureRequest) -> Iterator[Harness]:
    harness = Harness(str(request.param))
    try:
        yield harness
    finally:
        harness.close()


@pytest.fixture(params=ROOT_DEPLOYMENTS)
def harness(request: pytest.FixtureRequest) -> Iterator[Harness]:
    """An adapter served at the root of its server."""
    yield from _harness(request)


@pytest.fixture(params=MOUNTED_DEPLOYMENTS)
def mounted(request: pytest.FixtureRequest) -> Iterator[Harness]:
    """An adapter mounted under ``/a2a`` by one of its framework's mechanisms."""
    yield from _harness(request)


@pytest.fixture(params=ROOT_DEPLOYMENTS + MOUNTED_DEPLOYMENTS)
def anywhere(request: pytest.FixtureRequest) -> Iterator[Harness]:
    """Every deployment: at the root and mounted."""
    yield from _harness(request)
