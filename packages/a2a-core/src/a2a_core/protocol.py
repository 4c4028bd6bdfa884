"""The sans-IO server protocol: :class:`ServerProtocol` (L1, pure and synchronous).

The public face of ``a2a_core.protocol``: import these names from here.
"""

from a2a_core._protocol.console import CONSOLE_CSP, DEFAULT_CONSOLE_PATH
from a2a_core._protocol.server import (
    DEFAULT_MAX_BODY_SIZE,
    DEFAULT_MAX_JSON_DEPTH,
    ProtocolOptions,
    ServerProtocol,
)

__all__ = [
    "CONSOLE_CSP",
    "DEFAULT_CONSOLE_PATH",
    "DEFAULT_MAX_BODY_SIZE",
    "DEFAULT_MAX_JSON_DEPTH",
    "ProtocolOptions",
    "ServerProtocol",
]
