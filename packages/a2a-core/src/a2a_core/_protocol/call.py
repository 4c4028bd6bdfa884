"""The typed, version-neutral operation that L1 hands to the runtime: :class:`Call`.

Whatever the binding (JSON-RPC or REST) and dialect (v1.0 or v0.3), a request that passes
every check becomes a ``Call`` holding the v1.0 request struct of its operation, plus what
the runtime needs to execute and authorize it and what L1 needs to encode the reply.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

import msgspec

from a2a_core._protocol.jsonrpc import JsonRpcId
from a2a_core._protocol.operations import Binding, CallRequest, Dialect, Operation

__all__ = [
    "AUTH_METADATA_KEY",
    "RESERVED_METADATA_KEYS",
    "TENANT_METADATA_KEY",
    "Binding",
    "Call",
    "CallRequest",
    "merge_metadata",
]

#: Metadata key under which the authenticated identity is visible to agents.
AUTH_METADATA_KEY: Final = "a2a.auth"
#: Metadata key under which the tenant is visible to agents.
TENANT_METADATA_KEY: Final = "a2a.tenant"
#: Keys only the server sets: a client's values for them are dropped.
RESERVED_METADATA_KEYS: Final = frozenset({AUTH_METADATA_KEY, TENANT_METADATA_KEY})


class Call(msgspec.Struct, frozen=True):
    """One validated request, ready to authorize and execute.

    A frozen msgspec Struct: built for every request, it costs a fraction of a frozen
    dataclass (bench in the issue notes: ~0.5 µs against ~2.5 µs for 16 fields); change
    one with ``msgspec.structs.replace``.
    """

    operation: Operation
    """What to do."""
    request: CallRequest
    """The v1.0 request struct of the operation (v0.3 params already converted)."""
    binding: Binding
    """``jsonrpc``, ``rest`` or ``grpc``."""
    dialect: Dialect
    """The wire dialect of the request; the reply is encoded in it."""
    version: str
    """The negotiated ``A2A-Version`` (Major.Minor), echoed in the reply."""
    request_id: JsonRpcId = None
    """The JSON-RPC id to echo (``None`` on REST)."""
    streaming: bool = False
    """The reply is an SSE stream."""
    extensions: tuple[str, ...] = ()
    """Extension URIs activated for this call."""
    requested_extensions: tuple[str, ...] = ()
    """Every URI the client asked for (extensions decide activation from these)."""
    metadata: Mapping[str, Any] = msgspec.field(default_factory=dict)
    """Merged metadata: server config, then per request, then the call's own (later wins)."""
    identity: Any = None
    """The authenticated caller, or ``None``."""
    tenant: str = ""
    """The tenant from the path (REST) or ``params.tenant`` (JSON-RPC)."""
    base_url: str | None = None
    """The public URL of the mount point for this request, when known."""
    response_headers: tuple[tuple[str, str], ...] = ()
    """Headers every reply to this call carries (``A2A-Version``, ``A2A-Extensions``)."""
    notification: bool = False
    """A JSON-RPC notification (no ``id``, accepted with ``notifications="accept"``): execute
    it, but its reply is an empty 204 (`ServerProtocol.reply_result` makes it so)."""
    last_event_id: str | None = None
    """The ``Last-Event-ID`` header of a reconnecting stream client, if any."""


def merge_metadata(
    server: Mapping[str, Any],
    per_request: Mapping[str, Any],
    from_call: Mapping[str, Any],
    *,
    identity: Any = None,
    tenant: str = "",
) -> dict[str, Any]:
    """Merge the three metadata layers (later wins); reserved keys come only from the server.

    The client controls only ``from_call`` (``params.metadata``), so its values for reserved
    keys are dropped; the identity and tenant are then set from what the server knows.
    """
    if not (server or per_request or from_call or tenant) and identity is None:
        return {}  # most calls: no metadata anywhere, nothing to merge or drop
    merged = {**server, **per_request}
    merged.update((k, v) for k, v in from_call.items() if k not in RESERVED_METADATA_KEYS)
    if identity is not None:
        merged[AUTH_METADATA_KEY] = identity
    else:
        merged.pop(AUTH_METADATA_KEY, None)
    if tenant:
        merged[TENANT_METADATA_KEY] = tenant
    else:
        merged.pop(TENANT_METADATA_KEY, None)
    return merged
