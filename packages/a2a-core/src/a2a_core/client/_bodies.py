"""Reading response bodies within a bound, and closing what is left unread (L2)."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncGenerator, Callable
from typing import cast

import httpx

__all__ = ["chunks", "read_limited"]


def chunks(response: httpx.Response) -> AsyncGenerator[bytes, None]:
    """The body's chunks as a generator to close with `contextlib.aclosing` when left early
    (httpx's is one; trio warns of generators left to the garbage collector)."""
    return cast(AsyncGenerator[bytes, None], response.aiter_bytes())


async def read_limited(
    response: httpx.Response, limit: int, too_large: Callable[[], Exception]
) -> bytes:
    """The whole body, or ``too_large()`` raised once it passes ``limit`` bytes."""
    parts: list[bytes] = []
    size = 0
    async with contextlib.aclosing(chunks(response)) as body:
        async for chunk in body:
            size += len(chunk)
            if size > limit:
                raise too_large()
            parts.append(chunk)
    return b"".join(parts)
