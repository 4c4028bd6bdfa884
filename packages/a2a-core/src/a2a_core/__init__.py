"""a2aserve-core: the sans-IO core of an A2A (Agent2Agent) protocol server.

Layers (see the repository's docs):

- L0 :mod:`a2a_core.types` - the v1.0 data model as frozen msgspec Structs, and
  :mod:`a2a_core.compat.v0_3` - the v0.3 JSON-RPC dialect with total conversions;
- L1 :mod:`a2a_core.codec` - ProtoJSON decoding/encoding, :mod:`a2a_core.jsonrpc` - the
  JSON-RPC 2.0 envelope and method tables, :mod:`a2a_core.errors` - the A2A error table.

Everything here is pure and synchronous: bytes in, values out; values in, bytes out.
"""

from typing import Any

from .codec import DecodeError, decode, encode

__all__ = ["DecodeError", "__version__", "decode", "encode"]

__version__: str


def __getattr__(name: str) -> Any:
    # The version is read from the installed distribution's metadata on first use:
    # importlib.metadata costs tens of milliseconds of every import of the package otherwise.
    if name == "__version__":
        from importlib.metadata import version as _version

        __version__: str = _version("a2aserve-core")
        globals()["__version__"] = __version__
        return __version__
    raise AttributeError(f"module 'a2a_core' has no attribute {name!r}")
