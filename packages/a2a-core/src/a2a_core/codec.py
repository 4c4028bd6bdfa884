"""ProtoJSON decoding and encoding of wire structs (L1, pure).

The public face of ``a2a_core.codec``: import these names from here.
"""

from a2a_core._protocol.codec import (
    NESTING_LIMIT,
    UTF8_BOM,
    DecodeError,
    convert,
    decode,
    encode,
    json_depth_exceeds,
    without_bom,
)

__all__ = [
    "NESTING_LIMIT",
    "UTF8_BOM",
    "DecodeError",
    "convert",
    "decode",
    "encode",
    "json_depth_exceeds",
    "without_bom",
]
