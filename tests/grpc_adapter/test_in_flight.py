"""The per-address budget of bytes in flight on gRPC streams (`a2a_grpc.InFlight`)."""

from __future__ import annotations

import asyncio

import pytest

from a2a_grpc import InFlight
from a2a_grpc._in_flight import InFlightWaitError

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def test_waiters_go_in_order_and_a_message_over_the_budget_goes_alone() -> None:
    budget = InFlight(limit=10)
    order: list[str] = []
    first = budget.hold("a", 8)
    await first.__aenter__()

    async def send(name: str, size: int) -> None:
        async with budget.hold("a", size):
            order.append(name)
            await asyncio.sleep(0)

    waiting = [asyncio.create_task(send("big", 30)), asyncio.create_task(send("small", 1))]
    await asyncio.sleep(0.05)
    # The small one would fit, but waits behind the big one that came first.
    assert order == [] and budget.held("a") == 8
    # Another address has a budget of its own.
    async with budget.hold("b", 10):
        assert budget.total == 18
    await first.__aexit__(None, None, None)
    await asyncio.gather(*waiting)
    assert order == ["big", "small"]
    assert budget.total == 0


async def test_a_waiter_cancelled_or_timed_out_holds_nothing() -> None:
    budget = InFlight(limit=10, wait=0.1)
    async with budget.hold("a", 10):
        cancelled = asyncio.create_task(budget.hold("a", 5).__aenter__())
        await asyncio.sleep(0.01)
        cancelled.cancel()
        with pytest.raises(InFlightWaitError):
            async with budget.hold("a", 5):
                pass
        assert budget.held("a") == 10
    assert budget.total == 0
    # An address with nothing in flight and nobody waiting is forgotten.
    assert budget.held("a") == 0 and not budget._accounts


def test_the_budget_is_checked() -> None:
    with pytest.raises(ValueError, match="at least 1 byte"):
        InFlight(limit=0)
    with pytest.raises(ValueError, match="positive"):
        InFlight(wait=0)
