"""Request and reply media types, shared by both bindings (L1, pure).

Both bindings read request bodies as JSON, so both refuse a body declared as anything else
with the same check, before the body is parsed (spec-decisions F8, A12): JSON-RPC answers
ContentTypeNotSupportedError (-32005) as a normal JSON-RPC error, REST as HTTP 415 (v1.0.0
table) or 400 (v1.0.1). JSON means ``application/json``, ``application/a2a+json`` or any
``application/*+json``, in any case and with any parameters; a missing (or blank)
``Content-Type`` is read as JSON.
"""

from __future__ import annotations

from typing import Final

from a2a_core._protocol.errors import ContentTypeNotSupportedError

__all__ = [
    "A2A_JSON_CONTENT_TYPE",
    "JSON_CONTENT_TYPE",
    "check_request_content_type",
    "is_json_media_type",
]

#: The media type of JSON-RPC, of REST in v1.0.0 and v0.3, and our default for REST replies
#: (spec-decisions A11).
JSON_CONTENT_TYPE: Final = "application/json"
#: The media type v1.0.1+ recommends for REST; opt-in for replies, always accepted.
A2A_JSON_CONTENT_TYPE: Final = "application/a2a+json"

_JSON_MEDIA_TYPES: Final = frozenset({JSON_CONTENT_TYPE, A2A_JSON_CONTENT_TYPE})


def is_json_media_type(value: str) -> bool:
    """True for ``application/json`` and every ``application/*+json`` (any case, any params)."""
    media = value.split(";", 1)[0].strip().lower()
    kind, slash, subtype = media.partition("/")
    if kind != "application" or not slash:
        return False
    if subtype == "json":
        return True
    return subtype.endswith("+json") and len(subtype) > len("+json") and " " not in subtype


def check_request_content_type(value: str | None) -> None:
    """Raise `ContentTypeNotSupportedError` unless a body declared as ``value`` is JSON.

    ``None`` (no ``Content-Type``) and a blank value are read as JSON.
    """
    if value in _JSON_MEDIA_TYPES or value is None or not value.strip():
        return  # the usual spellings first: no parsing
    if not is_json_media_type(value):
        raise ContentTypeNotSupportedError(
            f"{ContentTypeNotSupportedError.default_message}: the request body must be "
            f"{JSON_CONTENT_TYPE} or {A2A_JSON_CONTENT_TYPE}"
        )
