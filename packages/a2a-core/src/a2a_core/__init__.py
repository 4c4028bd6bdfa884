"""a2aserve-core: the sans-IO core of an A2A (Agent2Agent) protocol server.

Layers (see the repository's docs):

- L0 :mod:`a2a_core.types` - the v1.0 data model as frozen msgspec Structs, and
  :mod:`a2a_core.compat.v0_3` - the v0.3 JSON-RPC dialect with total conversions;
- L1 :mod:`a2a_core.codec` - ProtoJSON decoding/encoding, :mod:`a2a_core.jsonrpc` - the
  JSON-RPC 2.0 envelope and method tables, :mod:`a2a_core.errors` - the A2A error table.

Everything here is pure and synchronous: bytes in, values out; values in, bytes out.
"""

from importlib.metadata import version as _version

from .codec import DecodeError, decode, encode

__version__: str = _version("a2aserve-core")

__all__ = ["DecodeError", "__version__", "decode", "encode"]
