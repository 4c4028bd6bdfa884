"""Request and reply media types, shared by both bindings (L1, pure).

The public face of ``a2a_core.media_types``: import these names from here.
"""

from a2a_core._protocol.media_types import (
    A2A_JSON_CONTENT_TYPE,
    JSON_CONTENT_TYPE,
    check_request_content_type,
    is_json_media_type,
)

__all__ = [
    "A2A_JSON_CONTENT_TYPE",
    "JSON_CONTENT_TYPE",
    "check_request_content_type",
    "is_json_media_type",
]
