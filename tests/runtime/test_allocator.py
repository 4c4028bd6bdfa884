"""Freed memory goes back to the system (glibc only): what big requests leave resident but
unallocated in the heap is returned once it grew past the threshold, and a running server
checks on its own. In a fresh interpreter each, since what the heap holds free depends on
everything the process allocated before."""

from __future__ import annotations

import subprocess
import sys

import anyio
import pytest

from a2a_core.server._allocator import freed_memory

needs_glibc = pytest.mark.skipif(freed_memory() is None, reason="not glibc 2.33+ with /proc")

CHURN = """
def churn():
    # What a burst of big requests leaves: big buffers in the heap between small objects
    # that live on (so the heap's top never frees them by itself), then the big ones gone.
    warm = bytearray(8 << 20)  # freed at once: glibc now keeps buffers this big in its heap
    del warm
    pins, bigs = [], []
    for i in range(20):
        big = bytearray(8 << 20)
        big[::4096] = b"x" * len(big[::4096])  # touched: resident
        bigs.append(big)
        pins.append(bytearray(200_000))
    del bigs, big
    return pins
"""

TRIM = (
    CHURN
    + """
from a2a_core.server._allocator import freed_memory
freed = freed_memory()
pins = churn()
before = freed.resident_unallocated()
assert freed.trim_if_over(), before
after = freed.resident_unallocated()
assert after < before - (64 << 20), (before, after)
assert not freed.trim_if_over()  # nothing grew since: no trim
print(before >> 20, after >> 20)
"""
)

SERVER = (
    CHURN
    + """
import asyncio
from a2a_core.server import A2AServer
from a2a_core.server._allocator import freed_memory
from a2a_core.types import AgentCapabilities, AgentCard, AgentSkill

CARD = AgentCard(
    name="A", description="a", supported_interfaces=[], version="1",
    capabilities=AgentCapabilities(), default_input_modes=["text/plain"],
    default_output_modes=["text/plain"],
    skills=[AgentSkill(id="s", name="s", description="s", tags=[])],
)

async def echo(ctx):
    return ctx.text

async def main():
    watcher = freed_memory()
    async with A2AServer(echo, card=CARD, base_url="http://127.0.0.1"):
        pins = churn()
        grown = watcher.resident_unallocated()
        async with asyncio.timeout(30):  # a guard against a hang, not a timing
            while watcher.resident_unallocated() > grown - (64 << 20):
                await asyncio.sleep(0.2)
        print(grown >> 20, watcher.resident_unallocated() >> 20)

asyncio.run(main())
"""
)


@needs_glibc
@pytest.mark.parametrize("script", [TRIM, SERVER], ids=["trim", "server"])
def test_memory_left_free_goes_back(script: str, writer_path: str) -> None:
    if writer_path != "immediate":
        pytest.skip("the store's writer path does not matter here")
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr


@needs_glibc
def test_a_failing_check_never_ends_the_server(writer_path: str) -> None:
    """The check runs in the server's task group: an error there (a process out of file
    descriptors) must not cancel the server."""
    if writer_path != "immediate":
        pytest.skip("the store's writer path does not matter here")
    from a2a_core.server._allocator import _make

    assert freed_memory() is freed_memory()  # one per process: one open file, not one each
    freed = _make()  # one of the test's own: the process's keeps serving other servers
    assert freed is not None
    failures: list[int] = []

    def failing() -> bool:
        failures.append(1)
        raise OSError(24, "Too many open files")

    freed.trim_if_over = failing  # type: ignore[method-assign]
    freed.interval = 0.01

    async def run_a_while() -> None:
        with anyio.move_on_after(0.3):
            await freed.run()

    anyio.run(run_a_while)
    assert len(failures) >= 2
