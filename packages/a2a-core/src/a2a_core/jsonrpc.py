"""The JSON-RPC 2.0 envelope of the A2A JSON-RPC binding, for both wire dialects.

The public face of ``a2a_core.jsonrpc``: import these names from here.
"""

from a2a_core._protocol.jsonrpc import (
    V0_3_METHODS,
    V1_METHODS,
    Dialect,
    JsonRpcFailure,
    JsonRpcId,
    JsonRpcRequest,
    MethodSpec,
    NotificationPolicy,
    Operation,
    decode_request,
    encode_error,
    encode_result,
    lookup_method,
)

__all__ = [
    "V0_3_METHODS",
    "V1_METHODS",
    "Dialect",
    "JsonRpcFailure",
    "JsonRpcId",
    "JsonRpcRequest",
    "MethodSpec",
    "NotificationPolicy",
    "Operation",
    "decode_request",
    "encode_error",
    "encode_result",
    "lookup_method",
]
