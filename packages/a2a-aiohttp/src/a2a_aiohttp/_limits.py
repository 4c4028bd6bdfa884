"""The limits of aiohttp's server that A2A servers want said aloud (`HANDLER_ARGS`).

The adapter refuses what is A2A's to refuse (a body over ``max_body_size``, at once). What
comes before the body is aiohttp's to bound: its parser limits header lines and their count
by default; these settings say so explicitly, and shorten the keep-alive timeout, which is
also how long aiohttp waits for a request head (docs/adapters.md, "Server limits").
"""

from __future__ import annotations

from typing import Any

__all__ = ["HANDLER_ARGS"]

#: ``web.Application(handler_args=HANDLER_ARGS)``: the application carries them to whatever
#: runs it (``web.run_app`` or an ``AppRunner``). Not ``run_app(handler_args=...)``: aiohttp
#: drops unknown handler keywords there, with only a warning.
HANDLER_ARGS: dict[str, Any] = {
    # Seconds an idle keep-alive connection stays open; also how long aiohttp waits for a
    # whole request head after the connection opened or the previous reply ended
    # (run_app's default is 75, a bare AppRunner's 3630).
    "keepalive_timeout": 15,
    "max_line_size": 8190,  # the request line (aiohttp's default)
    "max_field_size": 8190,  # one header line (aiohttp's default)
    "max_headers": 100,  # how many headers (aiohttp's default: 128)
}
