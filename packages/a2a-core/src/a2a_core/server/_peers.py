"""What one client may hold at once (L2): its open streams, counted by its address.

A stream lives as long as its client keeps it open, so a client that opens streams and
never reads them (or never closes them) holds the server's connections, followers and
buffers for as long as it likes. `StreamSlots` gives each client address at most
``StreamOptions.max_streams_per_peer`` streams at once; one more is refused before the call
does anything (a streaming send does not start its agent) with ResourceExhaustedError
(-32099; REST: 429 with ``Retry-After``), while every other client is served as before.

The count is by `HttpRequest.peer`, the address the HTTP server reports. Behind a reverse
proxy every request comes from the proxy unless the server reads the client's address from
the proxy's headers: docs/security.md says how to set either up. A request without a peer
(a transport that does not tell) is not counted.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Final

from a2a_core._protocol.errors import ResourceExhaustedError

__all__ = ["StreamSlots"]

logger: Final = logging.getLogger("a2a_core.server")

#: Seconds between two log lines about the same client's refused streams.
_LOG_INTERVAL: Final = 60.0
#: Clients whose last log line is remembered (a bound on that memory: past it, forgotten).
_LOGGED_PEERS: Final = 1024


class StreamSlots:
    """Streams open at once per client address, at most ``limit`` each."""

    __slots__ = ("_logged", "limit", "open")

    def __init__(self, limit: int) -> None:
        self.limit = limit
        #: Open streams by client address; an address with none has no entry, so the map is
        #: bounded by the streams open.
        self.open: dict[str, int] = {}
        self._logged: dict[str, float] = {}

    def take(self, peer: str) -> Callable[[], None]:
        """One slot for a stream of ``peer``; the function that gives it back (once, however
        often it is called). ResourceExhaustedError when ``peer`` has all its slots."""
        held = self.open.get(peer, 0)
        if held >= self.limit:
            self._log_refusal(peer)
            raise ResourceExhaustedError(
                f"Too many streams open from this client (at most {self.limit} at once): "
                "close one, or try again later"
            )
        self.open[peer] = held + 1
        given_back = False

        def give_back() -> None:
            nonlocal given_back
            if given_back:
                return
            given_back = True
            left = self.open[peer] - 1
            if left:
                self.open[peer] = left
            else:
                del self.open[peer]

        return give_back

    def _log_refusal(self, peer: str) -> None:
        """One warning per client a minute: a flood of refusals is not a flood of lines."""
        now = time.monotonic()
        last = self._logged.get(peer)
        if last is not None and now - last < _LOG_INTERVAL:
            return
        if len(self._logged) >= _LOGGED_PEERS:
            self._logged.clear()
        self._logged[peer] = now
        logger.warning(
            "refused a stream of %s: it has %d open, the most one client may "
            "(StreamOptions.max_streams_per_peer; behind a reverse proxy, see docs/security.md)",
            peer,
            self.limit,
        )
